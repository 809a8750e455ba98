"""The resource server against a real authorization server (oidc-provider on node).

Tokens come from the AS's client-credentials grant (JWT access tokens for the requested
resource, RFC 8707); the protected server verifies them with :class:`JWTVerifier` (keys
from the AS's JWKS found through its metadata) or :class:`IntrospectionVerifier`. The MCP
side runs in process through the ASGI client; ``test_protected_example_*`` serves
``examples/protected_server.py`` with ``mcpkit run`` on a real socket.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import anyio
import orjson
import pytest
from tests.auth._as import INTROSPECTOR, OPAQUE_RESOURCE, AuthorizationServer
from tests.server._harness import HANDSHAKE

from mcpkit import Client, Context, ProtocolError, Server, http
from mcpkit.auth import (
    ClientCredentials,
    IntrospectionVerifier,
    JWTVerifier,
    Principal,
    ResourceServer,
    Token,
    TokenVerifier,
)
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

RESOURCE = "http://127.0.0.1/mcp"
INIT = HANDSHAKE[0]  # initialize at 2025-11-25, id 1


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthorizationServer]:
    with AuthorizationServer() as a:
        yield a


def protected(verifier: TokenVerifier, resource: str = RESOURCE) -> Server:
    server = Server(
        "protected",
        auth=ResourceServer(
            verifier,
            resource=resource,
            authorization_servers=["http://127.0.0.1:1"],
            scopes=["mcp:tools"],
        ),
    )

    @server.tool()
    def whoami(ctx: Context) -> dict[str, Any]:
        p = ctx.principal
        assert p is not None
        return {"subject": p.subject, "client": p.client_id, "scopes": sorted(p.scopes)}

    @server.tool(scopes=["mcp:admin"])
    def admin_echo(text: str) -> str:
        return text

    return server


async def post(
    h: ASGIClient, body: Any, token: str | None = None, url: str = RESOURCE, **extra: str
) -> Any:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    headers.update(extra)
    return await h.request("POST", url, content=orjson.dumps(body), headers=headers)


async def answer(resp: Any) -> Any:
    """The JSON-RPC message of a response: a JSON body, or the last SSE event's data."""
    body = (await resp.aread()).decode()
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in body.splitlines() if line.startswith("data:")]
        body = [d for d in data if d][-1]
    return orjson.loads(body)


def challenge(resp: Any) -> dict[str, str]:
    """The parameters of a ``WWW-Authenticate: Bearer k="v", ...`` header."""
    value = resp.headers.get("www-authenticate")
    assert value is not None and value.startswith("Bearer ")
    out: dict[str, str] = {}
    for part in value[len("Bearer ") :].split('", '):
        k, _, v = part.partition("=")
        out[k.strip()] = v.strip().strip('"')
    return out


@pytest.mark.req("HTTP-AUTHENTICATION")
@pytest.mark.req("AUTH-HTTP-CONFORM")
async def test_no_token_gets_the_challenge_naming_the_metadata(
    auth_server: AuthorizationServer,
) -> None:
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE))
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, INIT)
        assert resp.status_code == 401
        params = challenge(resp)
        assert (
            params["resource_metadata"]
            == "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"
        )
        assert params["scope"] == "mcp:tools"
        assert "error" not in params  # RFC 6750 3.1: no error code when no token was sent
        meta = await h.request("GET", params["resource_metadata"])
        assert meta.status_code == 200
        doc = orjson.loads(await meta.aread())
        assert doc["resource"] == RESOURCE
        assert doc["authorization_servers"] == ["http://127.0.0.1:1"]
        assert doc["scopes_supported"] == ["mcp:tools"]


async def test_a_real_token_is_served_and_its_principal_reaches_the_tool(
    auth_server: AuthorizationServer,
) -> None:
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE))
    token = auth_server.token(RESOURCE, "mcp:tools")
    async with ASGIClient(server.http_app()) as h:
        for version in (None, "2025-11-25"):  # 2026-07-28 (stateless) and the handshake
            target = http(RESOURCE, headers={"authorization": f"Bearer {token}"}, http_client=h)
            async with Client(target, protocol_version=version) as c:
                result = await c.call_tool("whoami", {})
                assert result.structured_content == {
                    "subject": "machine",
                    "client": "machine",
                    "scopes": ["mcp:tools"],
                }


async def test_a_tool_scope_is_a_403_step_up_challenge_naming_every_scope(
    auth_server: AuthorizationServer,
) -> None:
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE))
    narrow = auth_server.token(RESOURCE, "mcp:tools")
    wide = auth_server.token(RESOURCE, "mcp:tools mcp:admin")
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "admin_echo",
            "arguments": {"text": "hi"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    modern = {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "admin_echo",
    }
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, call, narrow, **modern)
        assert resp.status_code == 403
        params = challenge(resp)
        assert params["error"] == "insufficient_scope"
        assert params["scope"] == "mcp:tools mcp:admin"
        assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
        resp = await post(h, call, wide, **modern)
        assert resp.status_code == 200
        assert (await answer(resp))["result"]["content"][0]["text"] == "hi"
        # Through the client, on a 2025 session too: refused, then served with the wider token.
        for token, ok in ((narrow, False), (wide, True)):
            target = http(RESOURCE, headers={"authorization": f"Bearer {token}"}, http_client=h)
            async with Client(target, protocol_version="2025-11-25") as c:
                if ok:
                    assert (await c.call_tool("admin_echo", {"text": "x"})).content[0].text == "x"  # type: ignore[union-attr]
                else:
                    with pytest.raises(ProtocolError) as info:
                        await c.call_tool("admin_echo", {"text": "x"})
                    assert "insufficient_scope" in info.value.message
                    assert info.value.data["httpStatus"] == 403
                    assert 'scope="mcp:tools mcp:admin"' in info.value.data["wwwAuthenticate"]


async def test_a_token_without_the_server_scope_is_refused_403(
    auth_server: AuthorizationServer,
) -> None:
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE))
    token = auth_server.token(RESOURCE, "mcp:admin")
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, INIT, token)
        assert resp.status_code == 403
        assert challenge(resp)["error"] == "insufficient_scope"


@pytest.mark.req("AUTH-HTTP-CONFORM")
async def test_a_token_for_another_resource_is_refused(auth_server: AuthorizationServer) -> None:
    """No token passthrough: a token the same AS issued for another server is not ours."""
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE))
    other = auth_server.token("http://127.0.0.1/other-mcp", "mcp:tools")
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, INIT, other)
        assert resp.status_code == 401
        params = challenge(resp)
        assert params["error"] == "invalid_token"
        assert "not issued for this server" in params["error_description"]


async def test_an_expired_token_is_refused(auth_server: AuthorizationServer) -> None:
    later = time.time() + 3600  # the AS's tokens live 600 s; the verifier's clock is an hour on
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE, clock=lambda: later))
    token = auth_server.token(RESOURCE)
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, INIT, token)
        assert resp.status_code == 401
        assert "expired" in challenge(resp)["error_description"]


async def test_a_token_from_another_issuer_is_refused(auth_server: AuthorizationServer) -> None:
    with AuthorizationServer() as other:
        foreign = other.token(RESOURCE)
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE))
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, INIT, foreign)
        assert resp.status_code == 401
        assert challenge(resp)["error"] == "invalid_token"


async def test_another_subject_cannot_use_a_session(auth_server: AuthorizationServer) -> None:
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE))
    mine = auth_server.token(RESOURCE)
    theirs = auth_server.token(RESOURCE, client=INTROSPECTOR)  # another client: another principal
    again = auth_server.token(RESOURCE)  # a new token of the same principal
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, INIT, mine)
        assert resp.status_code == 200
        sid = resp.headers.get("mcp-session-id")
        assert sid
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        extra = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        resp = await post(h, ping, theirs, **extra)
        assert resp.status_code == 404  # as if the session did not exist
        resp = await post(h, ping, again, **extra)
        assert resp.status_code == 200


async def test_introspection_verifier_against_the_real_server(
    auth_server: AuthorizationServer,
) -> None:
    verifier = IntrospectionVerifier(
        auth_server.issuer + "/token/introspection",
        audience=OPAQUE_RESOURCE,
        issuer=auth_server.issuer,
        client_id=INTROSPECTOR[0],
        client_secret=INTROSPECTOR[1],
    )
    server = protected(verifier, OPAQUE_RESOURCE)
    good = auth_server.token(OPAQUE_RESOURCE)
    assert good.count(".") != 2  # opaque, not a JWT
    other = auth_server.token("http://127.0.0.1/other-mcp")
    async with ASGIClient(server.http_app(path="/opaque-mcp")) as h:
        target = http(OPAQUE_RESOURCE, headers={"authorization": f"Bearer {good}"}, http_client=h)
        async with Client(target) as c:
            assert (await c.call_tool("whoami", {})).structured_content["client"] == "machine"  # type: ignore[index]
        resp = await post(h, INIT, other, url=OPAQUE_RESOURCE)
        assert resp.status_code == 401
        resp = await post(h, INIT, "not-a-token-at-all", url=OPAQUE_RESOURCE)
        assert resp.status_code == 401
        assert "not active" in challenge(resp)["error_description"]


async def test_tokens_never_reach_logs_or_answers(
    auth_server: AuthorizationServer, caplog: pytest.LogCaptureFixture
) -> None:
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE))
    token = auth_server.token("http://127.0.0.1/other-mcp")
    caplog.set_level(logging.DEBUG)
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, INIT, token)
        body = await resp.aread()
    assert resp.status_code == 401
    assert token not in body.decode()
    assert token not in (resp.headers.get("www-authenticate") or "")
    assert all(token not in r.getMessage() for r in caplog.records)


async def test_the_metadata_answers_a_browser_preflight_and_only_reads(
    auth_server: AuthorizationServer,
) -> None:
    server = protected(JWTVerifier(auth_server.issuer, RESOURCE))
    where = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"
    async with ASGIClient(server.http_app()) as h:
        pre = await h.request("OPTIONS", where, headers={"origin": "https://app.example"})
        assert pre.status_code == 204
        assert pre.headers.get("access-control-allow-origin") == "*"
        assert "GET" in (pre.headers.get("access-control-allow-methods") or "")
        got = await h.request("GET", where, headers={"origin": "https://app.example"})
        assert got.status_code == 200 and got.headers.get("access-control-allow-origin") == "*"
        posted = await h.request("POST", where, content=b"{}")
        assert posted.status_code == 405


async def test_a_scoped_tool_without_authorization_is_refused_over_http_only() -> None:
    """Scopes on a server that checks no tokens: over HTTP nobody can prove them, so the
    tool is refused (not open); a local client (in memory, stdio) has no OAuth and may call."""
    server = Server("unprotected")

    @server.tool(scopes=["mcp:admin"])
    def admin_echo(text: str) -> str:
        return text

    async with ASGIClient(server.http_app()) as h, Client(http(RESOURCE, http_client=h)) as c:
        with pytest.raises(ProtocolError, match="checks no access tokens") as info:
            await c.call_tool("admin_echo", {"text": "x"})
        assert info.value.data == {"requiredScopes": ["mcp:admin"]}
    async with Client(server) as local:
        assert (await local.call_tool("admin_echo", {"text": "x"})).content[0].text == "x"  # type: ignore[union-attr]


async def test_a_step_up_is_not_asked_when_the_challenge_names_nothing_new() -> None:
    """ClientCredentials retries a 403 only for scopes it does not hold yet: a server
    refusing for another reason gets no token request (and no loop)."""
    auth = ClientCredentials("c", "s")
    # As after a token covering both scopes.
    auth._token = Token("t", scopes=["mcp:tools", "mcp:admin"], issuer="https://as.example")

    def refused(challenge: str | None) -> dict[str, str]:
        return {"www-authenticate": challenge} if challenge else {}

    challenge = 'Bearer error="insufficient_scope", scope="mcp:admin"'
    assert await auth.on_challenge("POST", RESOURCE, 403, refused(challenge)) is False
    refusal = refused('Bearer error="invalid_token"')
    assert await auth.on_challenge("POST", RESOURCE, 403, refusal) is False
    assert await auth.on_challenge("POST", RESOURCE, 500, refused(None)) is False


class _ExpiringSoon:
    """A verifier whose every token expires ``ttl`` seconds after it is checked."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl

    async def verify(self, token: str) -> Principal:
        return Principal(
            subject="u", scopes=frozenset({"mcp:tools"}), expires_at=time.time() + self.ttl
        )


async def test_a_listening_stream_ends_when_its_token_expires() -> None:
    """The GET stream is cut when the token that opened it expires (a stream outlives no
    token), and ended cleanly: the client sees its end, then comes back with a new token."""
    server = protected(_ExpiringSoon(0.5))
    async with ASGIClient(server.http_app()) as h:
        resp = await post(h, INIT, "t")
        sid = resp.headers.get("mcp-session-id")
        assert resp.status_code == 200 and sid
        headers = {
            "authorization": "Bearer t",
            "accept": "text/event-stream",
            "mcp-session-id": sid,
            "mcp-protocol-version": "2025-11-25",
        }
        with anyio.fail_after(10):  # the wait is bounded; the stream's end is the event
            async with h.stream("GET", RESOURCE, headers=headers) as stream:
                assert stream.status_code == 200
                async for _ in stream.aiter_bytes():
                    pass
        # The session lives on: the client's next request (a fresh token) is served.
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        extra = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        assert (await post(h, ping, "t2", **extra)).status_code == 200
