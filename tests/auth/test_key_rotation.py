"""The JWT verifier's key cache: rotated keys are picked up, forged key ids cannot make it
hammer the issuer, and an unreachable issuer leaves the keys it had in use.

The issuer here is an ASGI app in this process (the verifier's ``http_client`` is the
in-process ASGI client), whose key set the test rotates and whose fetches it counts; the
clock is injected, so no test waits.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import jwt
import orjson
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from mcpkit import AuthServerError, InvalidToken
from mcpkit.auth import JWTVerifier
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

ISSUER = "http://127.0.0.1/as"
AUDIENCE = "http://127.0.0.1/mcp"


class Issuer:
    """Metadata at the RFC 8414 path, keys at /jwks (``keys`` may change; ``down`` fails)."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}
        self.jwks_fetches = 0
        self.requests = 0
        self.down = False
        #: When set, key set requests wait for it (a fetch held in flight).
        self.gate: anyio.Event | None = None
        self._arrivals: list[anyio.Event] = []

    def _arrival(self, n: int) -> anyio.Event:
        while len(self._arrivals) < n:
            self._arrivals.append(anyio.Event())
        return self._arrivals[n - 1]

    async def held(self, n: int) -> None:
        """Wait until the ``n``-th key set request is held at the gate."""
        await self._arrival(n).wait()

    def add_key(self, kid: str) -> Any:
        key = ec.generate_private_key(ec.SECP256R1())
        self.keys[kid] = key
        return key

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.requests += 1
        if self.down:
            status, doc = 500, {"error": "down"}
        elif scope["path"] == "/.well-known/oauth-authorization-server/as":
            status, doc = 200, {"issuer": ISSUER, "jwks_uri": "http://127.0.0.1/jwks"}
        elif scope["path"] == "/jwks":
            self.jwks_fetches += 1
            jwks = []
            for kid, key in self.keys.items():
                jwk = orjson.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
                jwks.append({**jwk, "kid": kid, "use": "sig", "alg": "ES256"})
            status, doc = 200, {"keys": jwks}
        else:
            status, doc = 404, {}
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if scope["path"] == "/jwks" and self.gate is not None:
            # Held between the head and the body: the fetch is in flight, its reader waiting.
            self._arrival(self.jwks_fetches).set()
            await self.gate.wait()
        await send({"type": "http.response.body", "body": orjson.dumps(doc)})


def token(key: Any, kid: str, at: float | None = None) -> str:
    now = int(time.time() if at is None else at)
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "s", "exp": now + 600, "iat": now}
    return jwt.encode(claims, key, algorithm="ES256", headers={"kid": kid, "typ": "at+jwt"})


async def test_rotated_keys_are_picked_up_and_unknown_kids_rate_limited() -> None:
    issuer = Issuer()
    old = issuer.add_key("k1")
    now = [time.time()]
    async with ASGIClient(issuer, lifespan=False) as http:
        verifier = JWTVerifier(
            ISSUER, AUDIENCE, http_client=http, min_refresh=30, clock=lambda: now[0]
        )
        assert (await verifier.verify(token(old, "k1"))).subject == "s"
        assert issuer.jwks_fetches == 1
        assert (await verifier.verify(token(old, "k1"))).subject == "s"
        assert issuer.jwks_fetches == 1  # cached
        # The issuer rotates. A token with the new kid right away: within min_refresh of
        # the last fetch, so no fetch (forged kids cannot make us hammer the issuer).
        new = issuer.add_key("k2")
        with pytest.raises(InvalidToken, match="unknown key"):
            await verifier.verify(token(new, "k2"))
        for forged in ("x1", "x2", "x3"):
            with pytest.raises(InvalidToken):
                await verifier.verify(token(new, forged))
        assert issuer.jwks_fetches == 1
        now[0] += 31  # past min_refresh: the unknown kid makes one fetch, and it is there
        assert (await verifier.verify(token(new, "k2"))).subject == "s"
        assert issuer.jwks_fetches == 2
        # The issuer goes down: the keys we have stay in use, even once stale, and a down
        # issuer is asked at most once per min_refresh (not once per request, each waiting
        # for its timeout).
        issuer.down = True
        now[0] += 7200
        before = issuer.requests
        for _ in range(5):
            assert (await verifier.verify(token(old, "k1", at=now[0]))).subject == "s"
        assert issuer.requests == before + 1
        now[0] += 31
        assert (await verifier.verify(token(old, "k1", at=now[0]))).subject == "s"
        assert issuer.requests == before + 2


async def test_an_issuer_never_reached_is_an_auth_server_error() -> None:
    issuer = Issuer()
    key = issuer.add_key("k1")
    issuer.down = True
    async with ASGIClient(issuer, lifespan=False) as http:
        verifier = JWTVerifier(ISSUER, AUDIENCE, http_client=http)
        with pytest.raises(AuthServerError, match="no metadata"):
            await verifier.verify(token(key, "k1"))
        # Right after, no new attempt: still a 503-class error, not a forged-key 401.
        tried = issuer.requests
        with pytest.raises(AuthServerError, match="no signing keys yet"):
            await verifier.verify(token(key, "k1"))
        assert issuer.requests == tried


async def test_requests_wait_for_the_fetch_in_flight_and_a_cancelled_one_does_not_count() -> None:
    issuer = Issuer()
    key = issuer.add_key("k1")
    issuer.gate = anyio.Event()
    verified: list[str | None] = []
    async with ASGIClient(issuer, lifespan=False) as http:
        verifier = JWTVerifier(ISSUER, AUDIENCE, http_client=http)

        async def verify() -> None:
            verified.append((await verifier.verify(token(key, "k1"))).subject)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                first, gone = anyio.CancelScope(), anyio.Event()

                async def goes_away() -> None:
                    with first:
                        await verify()
                    gone.set()

                tg.start_soon(goes_away)
                await issuer.held(1)  # its fetch is in flight
                for _ in range(3):
                    tg.start_soon(verify)
                await anyio.wait_all_tasks_blocked()
                assert verified == [] and issuer.jwks_fetches == 1  # they wait, none fetches
                first.cancel()  # the fetching request goes away: its attempt does not count,
                await gone.wait()
                await issuer.held(2)  # so a waiting one fetches at once
                issuer.gate.set()
    assert verified == ["s", "s", "s"] and issuer.jwks_fetches == 2


async def test_a_cached_key_verifies_at_once_while_a_refetch_is_in_flight() -> None:
    issuer = Issuer()
    old = issuer.add_key("k1")
    now = [time.time()]
    rotated: list[str | None] = []
    async with ASGIClient(issuer, lifespan=False) as http:
        verifier = JWTVerifier(
            ISSUER, AUDIENCE, http_client=http, min_refresh=30, clock=lambda: now[0]
        )
        assert (await verifier.verify(token(old, "k1"))).subject == "s"
        new = issuer.add_key("k2")
        issuer.gate = anyio.Event()
        now[0] += 31  # past min_refresh: the new kid refetches

        async def verify_new() -> None:
            rotated.append((await verifier.verify(token(new, "k2"))).subject)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(verify_new)
                await issuer.held(2)  # the refetch is in flight
                # A token signed with the key already cached does not wait for it.
                assert (await verifier.verify(token(old, "k1"))).subject == "s"
                assert rotated == []
                issuer.gate.set()
    assert rotated == ["s"] and issuer.jwks_fetches == 2
