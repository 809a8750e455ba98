"""One client holding hundreds of 2026-07-28 requests open stalls nobody else, over real
uvicorn on 127.0.0.1.

Before: every 2026 request went through one shared "hub" session with 256 handler slots,
and a listen stream held a slot for its whole life: 300 listen streams (or ~270 slow calls)
from one unauthenticated client made every other 2026 client's tools/call, tools/list and
server/discover (the health check) time out, while 2025 sessions still answered. Each 2026
request is now served in the task of its own POST; what the app bounds is its budgets
(docs/deploy.md, "Limits").
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import orjson
import pytest
from tests.http._http_helpers import CLIENT_INFO, HEADERS, INIT_PARAMS, running

from mcpkit import Server

pytestmark = pytest.mark.slow

MODERN = "2026-07-28"
HOLD = 300
#: What "answered" means for the clients that must not be stalled (the issue's bound).
ANSWER_WITHIN = 3.0


def _meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }


def _modern(
    rid: int, method: str, params: dict[str, Any], name: str | None = None
) -> tuple[dict[str, str], bytes]:
    headers = {**HEADERS, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": _meta()}}
    return headers, orjson.dumps(body)


def _server() -> tuple[Server, Any]:
    """The server, and ``release()``: a coroutine function that lets every slow call go
    (run on the server's loop, where the event lives)."""
    server = Server("busy")
    events: list[anyio.Event] = []

    def gate() -> anyio.Event:
        if not events:
            events.append(anyio.Event())
        return events[0]

    async def release() -> None:
        gate().set()

    @server.tool()
    async def slow() -> str:
        """Waits until the test lets it go."""
        await gate().wait()
        return "released"

    @server.tool()
    def echo(text: str) -> str:
        """Says it back."""
        return text

    return server, release


@contextmanager
def _held(
    url: str, method: str, params: dict[str, Any], name: str | None
) -> Iterator[list[socket.socket]]:
    """HOLD raw connections, each with one 2026 request open on it (its response started or
    not), closed at the end."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    with ExitStack() as stack:
        socks: list[socket.socket] = []
        for i in range(HOLD):
            headers, body = _modern(1000 + i, method, params, name)
            lines = [f"POST {parts.path} HTTP/1.1", f"host: {host}:{port}"]
            lines += [f"{k}: {v}" for k, v in headers.items()]
            lines.append(f"content-length: {len(body)}")
            sock = stack.enter_context(socket.create_connection((host, port), timeout=10))
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
            socks.append(sock)
        yield socks


def _others_answered(url: str) -> None:
    """Another 2026 client and a 2025 session are each answered within ANSWER_WITHIN."""
    with httpx2.Client(timeout=ANSWER_WITHIN) as http:
        for rid, (method, params, name) in enumerate(
            [
                ("server/discover", {}, None),
                ("tools/list", {}, None),
                ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, "echo"),
            ]
        ):
            headers, body = _modern(rid, method, params, name)
            reply = http.post(url, headers=headers, content=body)
            assert reply.status_code == 200, reply.text
            assert "result" in _message(reply), reply.text
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
        first = http.post(url, headers=HEADERS, content=orjson.dumps(init))
        assert first.status_code == 200, first.text
        session = {
            **HEADERS,
            "mcp-session-id": first.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        http.post(
            url, headers=session, content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        )
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "old"}},
        }
        reply = http.post(url, headers=session, content=orjson.dumps(call))
        assert _message(reply)["result"]["content"][0]["text"] == "old"


def _message(reply: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC response of a JSON body or of the last event of an SSE body."""
    if reply.headers.get("content-type", "").startswith("application/json"):
        return dict(reply.json())
    data = [line[5:].strip() for line in reply.text.splitlines() if line.startswith("data:")]
    return dict(orjson.loads(data[-1]))


def test_300_listen_streams_of_one_client_stall_nobody() -> None:
    server, _ = _server()
    # One address may hold 64 listen streams by default (W15): this client is allowed all.
    with running(server.http_app(max_listen_streams_per_principal=HOLD)) as srv:
        listen = {"notifications": {"toolsListChanged": True}}
        with _held(srv.url, "subscriptions/listen", listen, None) as socks:
            # Every stream was accepted: its acknowledgement arrived on each connection.
            for sock in socks:
                assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            _others_answered(srv.url)
        _others_answered(srv.url)  # and after they all went away


def test_300_slow_calls_of_one_client_stall_nobody() -> None:
    server, release = _server()
    with running(server.http_app(json_response=True)) as srv:
        call = {"name": "slow", "arguments": {}}
        with _held(srv.url, "tools/call", call, "slow") as socks:
            _others_answered(srv.url)
            srv.call(release)
            # Released, every held call is answered too.
            for sock in socks:
                head = sock.recv(65536)
                assert head.startswith(b"HTTP/1.1 200"), head[:200]
                assert b"released" in head or b"released" in sock.recv(65536)
