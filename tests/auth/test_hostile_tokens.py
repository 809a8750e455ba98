"""Hostile tokens and hostile metadata, each refused with a clear 401 (or 400/503), never
served, and never able to make the verifier trust a key or issuer it should not.

Tokens are crafted here (PyJWT and cryptography) against the key ids of a real
authorization server's JWKS, so each one fails for exactly the reason its test names.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import jwt
import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from tests.auth._as import AuthorizationServer
from tests.auth.test_resource_server import INIT, RESOURCE, challenge, post, protected

from mcpkit import AuthServerError
from mcpkit.auth import JWTVerifier, ResourceServer
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthorizationServer]:
    with AuthorizationServer() as a:
        yield a


def jwks(issuer: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(issuer + "/jwks", timeout=10) as resp:
        return list(json.loads(resp.read())["keys"])


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(issuer: str, **over: Any) -> dict[str, Any]:
    now = int(time.time())
    base = {"iss": issuer, "aud": RESOURCE, "sub": "mallory", "scope": "mcp:tools mcp:admin"}
    return {**base, "iat": now, "exp": now + 300, **over}


async def refused(issuer: str, token: str) -> dict[str, str]:
    server = protected(JWTVerifier(issuer, RESOURCE))
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, INIT, token)
        assert resp.status_code == 401, await resp.aread()
        return challenge(resp)


async def test_alg_none_is_refused(auth_server: AuthorizationServer) -> None:
    header = b64(orjson.dumps({"alg": "none", "typ": "at+jwt"}))
    token = f"{header}.{b64(orjson.dumps(claims(auth_server.issuer)))}."
    params = await refused(auth_server.issuer, token)
    assert "'none' is not accepted" in params["error_description"]


async def test_hmac_signed_with_the_public_key_is_refused(auth_server: AuthorizationServer) -> None:
    """The classic key-confusion forgery: HS256 keyed with the issuer's public key."""
    key = next(k for k in jwks(auth_server.issuer) if k["kty"] == "RSA")
    public_pem = jwt.PyJWK(key).key.public_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PublicFormat.SubjectPublicKeyInfo,
    )
    token = base64_hs256(claims(auth_server.issuer), public_pem, key["kid"])
    params = await refused(auth_server.issuer, token)
    assert "HS256" in params["error_description"]


def base64_hs256(payload: dict[str, Any], secret: bytes, kid: str) -> str:
    header = b64(orjson.dumps({"alg": "HS256", "typ": "at+jwt", "kid": kid}))
    body = b64(orjson.dumps(payload))
    sig = hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64(sig)}"


async def test_a_forged_signature_with_the_issuers_key_id_is_refused(
    auth_server: AuthorizationServer,
) -> None:
    kid = next(k["kid"] for k in jwks(auth_server.issuer) if k["kty"] == "EC")
    mine = ec.generate_private_key(ec.SECP256R1())
    token = jwt.encode(
        claims(auth_server.issuer), mine, algorithm="ES256", headers={"kid": kid, "typ": "at+jwt"}
    )
    params = await refused(auth_server.issuer, token)
    assert "signature is not valid" in params["error_description"]


async def test_an_unknown_key_id_is_refused(auth_server: AuthorizationServer) -> None:
    mine = ec.generate_private_key(ec.SECP256R1())
    token = jwt.encode(claims(auth_server.issuer), mine, algorithm="ES256", headers={"kid": "nope"})
    params = await refused(auth_server.issuer, token)
    assert "unknown key" in params["error_description"]


async def test_an_oversized_token_is_refused_before_parsing(
    auth_server: AuthorizationServer,
) -> None:
    params = await refused(auth_server.issuer, "a" * 20_000)
    assert "too large" in params["error_description"]


@pytest.mark.parametrize("garbage", ["x", "a.b.c", "eyJ.eyJ.sig", "..", "\xff.\xfe.\xfd"])
async def test_garbage_is_refused(auth_server: AuthorizationServer, garbage: str) -> None:
    params = await refused(auth_server.issuer, garbage)
    assert params["error"] == "invalid_token"


async def test_a_not_yet_valid_token_is_refused(auth_server: AuthorizationServer) -> None:
    """A real token, checked by a verifier whose clock is an hour behind (nbf/iat)."""
    token = auth_server.token(RESOURCE)
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE, clock=lambda: time.time() - 3600))
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, INIT, token)
        assert resp.status_code == 401
        assert (
            "future" in challenge(resp)["error_description"]
            or "not valid yet" in challenge(resp)["error_description"]
        )


async def test_other_schemes_and_query_tokens_are_refused(auth_server: AuthorizationServer) -> None:
    token = auth_server.token(RESOURCE)
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE))
    async with ASGIClient(server.http_app()) as h:
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        resp = await h.request(
            "POST",
            RESOURCE,
            content=orjson.dumps(INIT),
            headers={**headers, "authorization": f"Basic {token}"},
        )
        assert resp.status_code == 401
        # A token in the query string is refused even with a good header (RFC 6750 / spec).
        resp = await h.request(
            "POST",
            RESOURCE + "?access_token=" + token,
            content=orjson.dumps(INIT),
            headers={**headers, "authorization": f"Bearer {token}"},
        )
        assert resp.status_code == 400
        assert token not in (await resp.aread()).decode()


def metadata_app(doc: dict[str, Any]) -> Any:
    """An ASGI app answering every GET with ``doc`` (a hostile authorization server)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = orjson.dumps(doc)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return app


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        ({"issuer": "http://127.0.0.1/evil", "jwks_uri": "http://127.0.0.1/jwks"}, "names issuer"),
        ({"issuer": "http://127.0.0.1/as", "jwks_uri": "http://attacker.example/jwks"}, "https"),
        ({"issuer": "http://127.0.0.1/as"}, "no jwks_uri"),
    ],
)
async def test_hostile_metadata_is_not_trusted(doc: dict[str, Any], why: str) -> None:
    """Metadata naming another issuer, or keys on plain http elsewhere, is refused: the
    server answers 503 (it cannot verify) and never accepts the token."""
    async with ASGIClient(metadata_app(doc), lifespan=False) as fake:
        verifier = JWTVerifier("http://127.0.0.1/as", RESOURCE, http_client=fake)
        mine = ec.generate_private_key(ec.SECP256R1())
        token = jwt.encode(claims("http://127.0.0.1/as"), mine, algorithm="ES256")
        server = protected(verifier)
        async with ASGIClient(server.http_app()) as h:
            resp = await post(h, INIT, token)
            assert resp.status_code == 503
        with pytest.raises(AuthServerError, match=why):
            await verifier.verify(token)


def test_hmac_and_none_cannot_be_configured() -> None:
    for alg in ("none", "HS256"):
        with pytest.raises(ValueError, match="not accepted"):
            JWTVerifier("https://as.example", RESOURCE, algorithms=[alg])
    with pytest.raises(ValueError, match="leeway"):
        JWTVerifier("https://as.example", RESOURCE, leeway=3600)
    with pytest.raises(ValueError, match="fragment"):
        ResourceServer(JWTVerifier("https://as.example", RESOURCE), resource="https://x/mcp#f")
