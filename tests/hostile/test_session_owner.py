"""Sessions bound to their owner on every transport (GHSA-jpw9-pfvf-9f58's class of bug).

Before the fix, with ``session_owner=`` and ``legacy_sse=True``, another principal's POST to
``/messages/?session_id=...`` ran a tool inside someone else's session and the result
appeared on their stream. Over real uvicorn.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import orjson
import pytest
from tests.http._http_helpers import running, sse_events

from mcpkit import Server

pytestmark = pytest.mark.anyio

INIT = {
    "protocolVersion": "2024-11-05",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


def _server(calls: list[str]) -> Server:
    server = Server("owned")

    @server.tool()
    def whoami(name: str) -> str:
        """Records who called."""
        calls.append(name)
        return f"called by {name}"

    return server


def _user(headers: dict[str, str]) -> str | None:
    return headers.get("x-user")


async def test_legacy_sse_session_refuses_another_principal() -> None:
    calls: list[str] = []
    app = _server(calls).http_app(legacy_sse=True, session_owner=_user)
    with running(app) as srv:
        async with (
            httpx2.AsyncClient(base_url=srv.base, timeout=20) as http,
            http.stream("GET", "/sse", headers={"x-user": "alice"}) as stream,
        ):
            events = sse_events(stream)
            with anyio.fail_after(10):
                endpoint = (await events.__anext__()).data

            async def post(user: str, msg: dict[str, Any]) -> int:
                answer = await http.post(
                    endpoint, headers={"x-user": user}, content=orjson.dumps(msg)
                )
                return answer.status_code

            assert (
                await post(
                    "alice", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
                )
                == 202
            )
            with anyio.fail_after(10):
                assert orjson.loads((await events.__anext__()).data)["id"] == 1
            assert (
                await post("alice", {"jsonrpc": "2.0", "method": "notifications/initialized"})
                == 202
            )
            hijack = {
                "jsonrpc": "2.0",
                "id": "mallory",
                "method": "tools/call",
                "params": {"name": "whoami", "arguments": {"name": "mallory"}},
            }
            # Mallory knows the session id, but it is not hers: as if it did not exist.
            assert await post("mallory", hijack) == 404
            assert await post("", hijack) == 404
            own = {
                **hijack,
                "id": "alice",
                "params": {"name": "whoami", "arguments": {"name": "alice"}},
            }
            assert await post("alice", own) == 202
            with anyio.fail_after(10):
                answer = orjson.loads((await events.__anext__()).data)
            # The next thing on Alice's stream is her own answer: nothing of Mallory's.
            assert answer["id"] == "alice"
    assert calls == ["alice"]


async def test_streamable_http_session_refuses_another_principal() -> None:
    calls: list[str] = []
    app = _server(calls).http_app(json_response=True, session_owner=_user)
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = {**INIT, "protocolVersion": "2025-11-25"}
    with running(app) as srv:
        async with httpx2.AsyncClient(timeout=20) as http:
            first = await http.post(
                srv.url,
                headers={**headers, "x-user": "alice"},
                content=orjson.dumps(
                    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
                ),
            )
            sid = first.headers["mcp-session-id"]
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "whoami", "arguments": {"name": "mallory"}},
            }
            other = await http.post(
                srv.url,
                headers={
                    **headers,
                    "x-user": "mallory",
                    "mcp-session-id": sid,
                    "mcp-protocol-version": "2025-11-25",
                },
                content=orjson.dumps(call),
            )
            assert other.status_code == 404
    assert calls == []
