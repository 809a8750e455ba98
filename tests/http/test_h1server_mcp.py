"""mcpkit's HTTP/1.1 server protocol (``mcpkit._http._h1server``) serving the real mcpkit
app on real sockets: a 2026-07-28 POST whose body has arrived takes the app's direct way in
(``StreamableHTTPApp.direct``) and is answered as the ASGI way answers it on uvicorn's own
protocol (h11), refusals included (they go the ASGI way); a forwarded request never takes
it; a 2025-11-25 session and a 2026 SSE answer work. uvicorn runs on asyncio only.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import orjson
import pytest
from _h1_wire import H1_MARKS, Launcher, counting_writes, request
from _http_helpers import HEADERS, INIT_PARAMS

import mcpkit
from mcpkit import Context
from mcpkit._app import StreamableHTTPApp
from mcpkit._http._asgi import Receive, Scope, Send
from mcpkit._http._sse import SSEParser

pytestmark = H1_MARKS


REV = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": REV,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def mcp_server() -> mcpkit.Server:
    server = mcpkit.Server("h1", version="1.0")

    @server.tool()
    async def echo(text: str, ctx: Context) -> str:
        """Says the text back (and reports progress when asked to)."""
        await ctx.report_progress(1, 1, "echoing")
        return text

    return server


def mcp_headers(method: str = "tools/call", name: str | None = "echo") -> dict[str, str]:
    h = {**HEADERS, "mcp-protocol-version": REV, "mcp-method": method}
    if name is not None:
        h["mcp-name"] = name
    return h


def call(text: str = "hi", meta: dict[str, Any] | None = META, rid: Any = 1) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": text}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


class DirectCount:
    """The app's ``direct`` hook, counting the requests it took (returned an awaitable)."""

    def __init__(self, app: StreamableHTTPApp, monkeypatch: pytest.MonkeyPatch) -> None:
        self.taken = 0
        self.declined = 0
        hook = app.direct

        def direct(scope: Scope, body: bytes, receive: Receive, send: Send) -> Any:
            work: Awaitable[None] | None = hook(scope, body, receive, send)
            if work is None:
                self.declined += 1
            else:
                self.taken += 1
            return work

        monkeypatch.setattr(app, "direct", direct)


#: name: (Host, headers, body, the status expected); Host None: the server's own.
CASES: dict[str, tuple[str | None, dict[str, str], bytes, int]] = {
    "happy": (None, mcp_headers(), orjson.dumps(call()), 200),
    "bad host": ("evil.example", mcp_headers(), orjson.dumps(call()), 421),
    "bad origin": (
        None,
        {**mcp_headers(), "origin": "http://evil.example"},
        orjson.dumps(call()),
        403,
    ),
    "content-type": (
        None,
        {**mcp_headers(), "content-type": "text/plain"},
        orjson.dumps(call()),
        415,
    ),
    "accept": (None, {**mcp_headers(), "accept": "application/json"}, orjson.dumps(call()), 406),
    "invalid json": (None, mcp_headers(), b'{"jsonrpc": "2.0", "id": 1, "meth', 400),
    "name mismatch": (None, mcp_headers(name="other"), orjson.dumps(call()), 400),
    "no _meta": (None, mcp_headers(), orjson.dumps(call(meta=None)), 400),
    "too big": (None, mcp_headers(), orjson.dumps(call("x" * 5000)), 413),
    "batch": (None, mcp_headers(), orjson.dumps([call()]), 400),
    "notification": (
        None,
        mcp_headers("notifications/cancelled", None),
        orjson.dumps(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 7, "_meta": META},
            }
        ),
        202,
    ),
}
#: Headers that differ between two servers answering alike.
_VARYING = {"date", "server"}


async def _answers(
    launcher: Launcher, app: StreamableHTTPApp, **options: Any
) -> dict[str, tuple[int, list[tuple[str, str]], Any]]:
    out: dict[str, tuple[int, list[tuple[str, str]], Any]] = {}
    async with launcher.serve(app, **options) as srv:
        for name, (host, headers, body, _) in CASES.items():
            async with srv.connect() as c:
                await c.send(request("POST", "/mcp", body, headers, host=host or srv.host))
                r = await c.response("POST")
            headers_out = sorted((n, v) for n, v in r.headers if n not in _VARYING)
            out[name] = (r.status, headers_out, orjson.loads(r.body) if r.body else b"")
    return out


async def test_the_direct_way_answers_as_the_asgi_way(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mcp_server()
    ours = mcpkit.create_http_app(server, json_response=True, max_body_size=4096)
    count = DirectCount(ours, monkeypatch)
    theirs = mcpkit.create_http_app(server, json_response=True, max_body_size=4096)
    got = await _answers(launcher, ours)
    # The happy path only; every refusal was offered to the direct way and went the ASGI way.
    assert (count.taken, count.declined) == (1, len(CASES) - 1)
    expected = await _answers(launcher, theirs, http="h11")
    assert {n: s for n, (s, _, _) in got.items()} == {n: c[3] for n, c in CASES.items()}
    assert got == expected
    assert got["happy"][2]["result"]["content"] == [{"type": "text", "text": "hi"}]


async def test_a_forwarded_request_goes_the_asgi_way(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = mcpkit.create_http_app(mcp_server(), json_response=True)
    count = DirectCount(app, monkeypatch)
    async with launcher.serve(app) as srv, srv.connect() as c:
        body = orjson.dumps(call())
        await c.send(request("POST", "/mcp", body, mcp_headers(), host=srv.host))
        r = await c.response()
        assert (r.status, count.taken) == (200, 1)
        forwarded = {**mcp_headers(), "x-forwarded-for": "10.1.2.3"}
        await c.send(request("POST", "/mcp", body, forwarded, host=srv.host))
        r = await c.response()
        assert r.status == 200 and r.json()["result"]["content"][0]["text"] == "hi"
        assert count.taken == 1  # not taken: uvicorn's proxy middleware had to see it


async def test_a_direct_json_answer_goes_out_in_one_write(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = mcpkit.create_http_app(mcp_server(), json_response=True)
    count = DirectCount(app, monkeypatch)
    with counting_writes(monkeypatch) as writes:
        async with launcher.serve(app) as srv, srv.connect() as c:
            body = orjson.dumps(call())
            await c.send(request("POST", "/mcp", body, mcp_headers(), host=srv.host))
            r = await c.response()
            assert (r.status, count.taken) == (200, 1)
            assert writes.all == [r.raw]


async def test_a_2025_session_works_over_the_asgi_way(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = mcpkit.create_http_app(mcp_server(), json_response=True)
    count = DirectCount(app, monkeypatch)
    base = HEADERS
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    async with launcher.serve(app) as srv, srv.connect() as c:
        await c.send(request("POST", "/mcp", orjson.dumps(init), base, host=srv.host))
        r = await c.response()
        assert r.status == 200, r
        assert r.json()["result"]["protocolVersion"] == "2025-11-25"
        sid = r.get("mcp-session-id")
        assert sid
        session = {**base, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await c.send(request("POST", "/mcp", orjson.dumps(note), session, host=srv.host))
        r = await c.response()
        assert r.status == 202, r
        body = orjson.dumps(call("session", meta=None, rid=2))
        await c.send(request("POST", "/mcp", body, session, host=srv.host))
        r = await c.response()
        assert r.status == 200, r
        assert r.json()["id"] == 2
        assert r.json()["result"]["content"] == [{"type": "text", "text": "session"}]
    assert count.taken == 0 and count.declined == 3


async def test_a_2026_call_with_a_progress_token_is_answered_as_sse_the_direct_way(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = mcpkit.create_http_app(mcp_server())  # json_response=False
    count = DirectCount(app, monkeypatch)
    async with launcher.serve(app) as srv, srv.connect() as c:
        body = orjson.dumps(call("streamed", meta={**META, "progressToken": "p1"}))
        await c.send(request("POST", "/mcp", body, mcp_headers(), host=srv.host))
        r = await c.response()
        assert r.status == 200, r
        assert (r.get("content-type") or "").startswith("text/event-stream")
        messages = [orjson.loads(e.data) for e in SSEParser().feed(r.body) if e.data]
        assert [m.get("method") for m in messages] == ["notifications/progress", None]
        assert messages[0]["params"]["progressToken"] == "p1"
        assert messages[-1]["id"] == 1
        assert messages[-1]["result"]["content"] == [{"type": "text", "text": "streamed"}]
        assert count.taken == 1
        await c.send(request("POST", "/mcp", orjson.dumps(call()), mcp_headers(), host=srv.host))
        r = await c.response()  # the connection is kept after the stream
        assert r.status == 200 and count.taken == 2
