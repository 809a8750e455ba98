"""One endpoint for both eras, in process: what the request's revision decides before any
session is looked up.

A revision named only in the ``MCP-Protocol-Version`` header that the server does not
speak gets UnsupportedProtocolVersion (-32022) with the supported list, as one named in
``_meta`` does; a 2026-07-28 request is served whatever ``Mcp-Session-Id`` it carries (the
header is ignored, never echoed); GET and DELETE of that revision are 405 with ``Allow``.
"""

from __future__ import annotations

import secrets
from typing import Any

import orjson
import pytest
from _stateless_helpers import REV, URL, check_sent, headers_for, post, request
from tests._schema import schema_errors

from mcpkit import Server
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

LEGACY_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"},
    },
}


def _server() -> Server:
    server = Server("shared-endpoint")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server


async def _legacy_session(http: ASGIClient) -> str:
    """Open a 2025-11-25 session (initialize, initialized); its id."""
    resp = await http.post(URL, content=orjson.dumps(INIT), headers=LEGACY_HEADERS)
    await resp.aread()
    assert resp.status_code == 200
    sid = resp.headers.get("mcp-session-id")
    assert sid is not None
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = {**LEGACY_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    done = await http.post(URL, content=orjson.dumps(note), headers=headers)
    assert done.status_code == 202
    return sid


async def _supported(http: ASGIClient) -> list[str]:
    found: list[str] = (await post(http, request("server/discover"))).result["supportedVersions"]
    return found


def _check_unsupported(status: int, body: bytes, rid: Any, requested: str) -> dict[str, Any]:
    assert status == 400
    msg: dict[str, Any] = orjson.loads(body)
    assert msg["id"] == rid
    errors = schema_errors(REV, "UnsupportedProtocolVersionError", msg)
    assert not errors, errors
    assert msg["error"]["code"] == -32022
    assert msg["error"]["data"]["requested"] == requested
    return msg


@pytest.mark.req("HTTP-2026-UNSUPPORTED-VERSION-400")
async def test_an_unsupported_version_only_in_the_header_gets_the_supported_list() -> None:
    """No revision in the body, an unknown one in the header: -32022 listing what the
    server speaks (what a client of both eras needs to pick), not a bare -32600."""
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    headers = {**LEGACY_HEADERS, "mcp-protocol-version": "2099-01-01"}
    async with ASGIClient(_server().http_app()) as http:
        supported = await _supported(http)
        resp = await http.post(URL, content=orjson.dumps(body), headers=headers)
        msg = _check_unsupported(resp.status_code, await resp.aread(), 7, "2099-01-01")
        # The same answer inside a session (the header is checked before the session).
        sid = await _legacy_session(http)
        inside = await http.post(
            URL, content=orjson.dumps(body), headers={**headers, "mcp-session-id": sid}
        )
        again = _check_unsupported(inside.status_code, await inside.aread(), 7, "2099-01-01")
    assert msg["error"]["data"]["supported"] == supported
    assert again["error"]["data"]["supported"] == supported
    assert supported[0] == REV and "2025-11-25" in supported


@pytest.mark.req("HTTP-2026-IGNORE-SESSION-ID")
@pytest.mark.parametrize("which", ["unknown", "terminated", "live"])
async def test_a_2026_request_ignores_the_session_id_it_carries(which: str) -> None:
    """A stale (unknown or terminated) or live session id on a 2026-07-28 request: it is
    served statelessly (not 404), and no session id comes back."""
    msg = request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id=3)
    app = _server().http_app()
    async with ASGIClient(app) as http:
        if which == "unknown":
            sid = secrets.token_hex(16)
        else:
            sid = await _legacy_session(http)
            if which == "terminated":
                gone = await http.delete(
                    URL, headers={"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
                )
                assert gone.status_code == 200
        resp = await http.post(
            URL, content=orjson.dumps(msg), headers={**headers_for(msg), "mcp-session-id": sid}
        )
        body = await resp.aread()
        sessions = len(app.sessions)
    assert resp.status_code == 200, body
    assert resp.headers.get("mcp-session-id") is None
    ctype = resp.headers.get("content-type") or ""
    if ctype.startswith("text/event-stream"):
        body = body.split(b"data: ", 1)[1].strip()
    answer = orjson.loads(body)
    check_sent(answer, msg)
    assert answer["id"] == 3
    assert answer["result"]["content"][0]["text"] == "hi"
    # Serving it neither made a session nor ended the live one.
    assert sessions == (1 if which == "live" else 0)


@pytest.mark.req("HTTP-2026-GET-DELETE-405")
@pytest.mark.parametrize("method", ["GET", "DELETE"])
@pytest.mark.parametrize("with_session", [False, True], ids=["no-session", "session"])
async def test_get_and_delete_of_the_2026_revision_are_405(method: str, with_session: bool) -> None:
    """GET (the old standalone stream) and DELETE (ending a session) do not exist at
    2026-07-28: 405 with ``Allow: POST``, a JSON-RPC error body, and a live session the
    request names is left alone."""
    app = _server().http_app()
    async with ASGIClient(app) as http:
        headers = {"accept": "text/event-stream", "mcp-protocol-version": REV}
        if with_session:
            headers["mcp-session-id"] = await _legacy_session(http)
        resp = await http.request(method, URL, headers=headers)
        body = orjson.loads(await resp.aread())
        sessions = len(app.sessions)
    assert resp.status_code == 405
    assert resp.headers.get("allow") == "POST"
    assert body["error"]["code"] == -32600 and "Method Not Allowed" in body["error"]["message"]
    assert sessions == (1 if with_session else 0)


@pytest.mark.req("HTTP-PROTOCOL-VERSION-INVALID-400")
@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_with_an_unsupported_version_header_are_refused(method: str) -> None:
    """The version header is checked on GET and DELETE too: a session's GET or DELETE
    naming a revision the server does not speak is 400, and the session lives on."""
    app = _server().http_app()
    async with ASGIClient(app) as http:
        sid = await _legacy_session(http)
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": sid,
            "mcp-protocol-version": "1999-01-01",
        }
        resp = await http.request(method, URL, headers=headers)
        body = orjson.loads(await resp.aread())
        sessions = len(app.sessions)
    assert resp.status_code == 400
    assert "1999-01-01" in body["error"]["message"]
    assert sessions == 1
