"""``examples/protected_server.py`` as a user runs it (``mcpkit run ... --transport http``),
in front of a real authorization server: bad tokens refused with the right status and
challenge, good ones served, step-up per tool, and another subject kept off a session.
Also the legacy HTTP+SSE transport behind the same protection.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from tests.auth._as import INTROSPECTOR, MACHINE, AuthorizationServer
from tests.auth.test_resource_server import INIT, challenge, post, protected

from mcpkit import Client, HTTPStatusError, ProtocolError, http
from mcpkit._http._h1client import HTTP1Client
from mcpkit.auth import ClientCredentials, JWTVerifier
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "protected_server.py"


async def test_example_refuses_missing_and_bad_tokens(
    auth_server: AuthorizationServer, served: str
) -> None:
    async with HTTP1Client() as h:
        for token, status in (
            (None, 401),
            ("garbage", 401),
            (auth_server.token("http://x/y"), 401),
        ):
            resp = await post(h, INIT, token, url=served)
            assert resp.status_code == status
            params = challenge(resp)
            assert params["resource_metadata"] == served.replace(
                "/mcp", "/.well-known/oauth-protected-resource/mcp"
            )
            assert params["scope"] == "mcp:tools"
        meta = await h.request("GET", params["resource_metadata"])
        doc = orjson.loads(await meta.aread())
        assert doc["resource"] == served and doc["authorization_servers"] == [auth_server.issuer]
        assert doc["scopes_supported"] == ["mcp:tools", "mcp:admin"]


async def test_example_keeps_another_subject_off_a_session(
    auth_server: AuthorizationServer, served: str
) -> None:
    async with HTTP1Client() as h:
        resp = await post(h, INIT, auth_server.token(served), url=served)
        sid = resp.headers.get("mcp-session-id")
        assert resp.status_code == 200 and sid
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        extra = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        other = auth_server.token(served, client=INTROSPECTOR)
        assert (await post(h, ping, other, url=served, **extra)).status_code == 404
        assert (
            await post(h, ping, auth_server.token(served), url=served, **extra)
        ).status_code == 200


async def test_legacy_sse_is_protected_too(auth_server: AuthorizationServer) -> None:
    server = protected(JWTVerifier(auth_server.issuer, "http://127.0.0.1/mcp"))
    app = server.http_app(legacy_sse=True)
    token = auth_server.token("http://127.0.0.1/mcp", "mcp:tools")
    async with ASGIClient(app) as h:
        resp = await h.request(
            "GET", "http://127.0.0.1/sse", headers={"accept": "text/event-stream"}
        )
        assert resp.status_code == 401
        assert "resource_metadata" in (resp.headers.get("www-authenticate") or "")
        target = http("http://127.0.0.1/sse", headers=bearer(token), http_client=h)
        async with Client(target) as c:
            who = (await c.call_tool("whoami", {})).structured_content
            assert who["subject"] == "machine"  # type: ignore[index]
            # The legacy transport POSTs beside its stream: the refusal is that POST's status.
            with pytest.raises(HTTPStatusError) as refused:
                await c.call_tool("admin_echo", {"text": "x"})
            assert refused.value.status == 403
            assert "insufficient_scope" in str(refused.value)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_example_serves_a_good_token_and_steps_up_per_tool(
    auth_server: AuthorizationServer, served: str
) -> None:
    narrow = auth_server.token(served, "mcp:tools")
    wide = auth_server.token(served, "mcp:tools mcp:admin")
    async with Client(http(served, headers=bearer(narrow))) as c:
        who = (await c.call_tool("whoami", {})).structured_content
        assert who == {"subject": "machine", "client_id": "machine", "scopes": ["mcp:tools"]}
        with pytest.raises(ProtocolError) as info:
            await c.call_tool("admin_echo", {"text": "hi"})
        assert info.value.data["httpStatus"] == 403
        assert 'error="insufficient_scope"' in info.value.data["wwwAuthenticate"]
        assert 'scope="mcp:tools mcp:admin"' in info.value.data["wwwAuthenticate"]
    async with Client(http(served, headers=bearer(wide)), protocol_version="2025-11-25") as c:
        assert (await c.call_tool("admin_echo", {"text": "hi"})).content[0].text == "hi"  # type: ignore[union-attr]
        contents = await c.read_resource("protected://motd")
        assert "authorized" in contents.contents[0].text  # type: ignore[union-attr]


async def test_a_machine_client_logs_in_by_itself_and_steps_up(
    auth_server: AuthorizationServer, served: str
) -> None:
    """``ClientCredentials``: from the 401 challenge to the metadata, the authorization
    server and a token for this server; a 403 for ``admin_echo`` gets a wider token (the
    union of the scopes) and the call goes through, on both revisions."""
    for version in (None, "2025-11-25"):
        auth = ClientCredentials(*MACHINE)
        async with Client(served, auth=auth, protocol_version=version) as c:
            who = (await c.call_tool("whoami", {})).structured_content
            assert who == {"subject": "machine", "client_id": "machine", "scopes": ["mcp:tools"]}
            assert auth.issuer == auth_server.issuer
            assert (await c.call_tool("admin_echo", {"text": "up"})).content[0].text == "up"  # type: ignore[union-attr]
            who = (await c.call_tool("whoami", {})).structured_content
            assert who["scopes"] == ["mcp:admin", "mcp:tools"]  # type: ignore[index]
    assert "machine-secret" not in repr(auth)


async def test_a_login_goes_through_a_users_own_httpx2_client(
    auth_server: AuthorizationServer, served: str
) -> None:
    """``http(url, http_client=httpx2.AsyncClient(), auth=...)``: the OAuth flow's headers
    and its answer to the 401 and the 403 go through the user's client too (the adapter
    dropped the auth= before)."""
    import httpx2

    async with httpx2.AsyncClient() as mine:
        auth = ClientCredentials(*MACHINE)
        async with Client(http(served, http_client=mine, auth=auth)) as c:
            assert (await c.call_tool("admin_echo", {"text": "via httpx2"})).content[0].text == (  # type: ignore[union-attr]
                "via httpx2"
            )
    assert auth.token is not None and "mcp:admin" in auth.token.scopes


async def test_wrong_client_credentials_fail_clearly(served: str) -> None:
    auth = ClientCredentials(MACHINE[0], "wrong-secret")
    with pytest.raises(ProtocolError, match="invalid_client") as info:
        async with Client(served, auth=auth) as c:
            await c.call_tool("whoami", {})
    assert info.value.data == {"authError": "invalid_client"}
    assert "wrong-secret" not in str(info.value)
