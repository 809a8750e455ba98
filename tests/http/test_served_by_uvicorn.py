"""What ``serve_app`` (so ``serve_http``, ``mcpkit run --transport http`` and
``Server.run(transport="http")``) serves connections with: uvicorn's own HTTP/1.1 protocol,
the app called as plain ASGI (mcpkit has no HTTP/1.1 server protocol of its own since issue
42). On real sockets: the default protocol is uvicorn's (httptools when installed), the
removed ``{"http": "mcpkit"}`` option is refused naming the change, an obviously smuggled
request is refused before it reaches the app (uvicorn's job now: a smoke test), and a
2026-07-28 call known to end at once is answered byte for byte as one served the general
way, JSON and SSE. uvicorn runs on asyncio only.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import orjson
import pytest
from _http_helpers import HEADERS
from _wire import WIRE_MARKS, Launcher, Running, request

import mcpkit
from mcpkit._app import _stateless, _streamable, serve_http
from mcpkit._app._serve import serve_app
from mcpkit._http._sse import SSEParser

pytestmark = WIRE_MARKS

REV = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": REV,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def echo_server() -> mcpkit.Server:
    server = mcpkit.Server("served", version="1.0")

    @server.tool(inline=True)
    def echo(text: str) -> str:
        """Says the text back."""
        if text == "boom":
            raise ValueError("no boom here")
        return text

    return server


def mcp_headers(name: str = "echo") -> dict[str, str]:
    return {**HEADERS, "mcp-protocol-version": REV, "mcp-method": "tools/call", "mcp-name": name}


def tool_call(text: str, rid: int, name: str = "echo") -> bytes:
    params = {"name": name, "arguments": {"text": text}, "_meta": META}
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})


async def _post(srv: Running, text: str, rid: int = 1) -> Any:
    async with srv.connect() as c:
        await c.send(request("POST", "/mcp", tool_call(text, rid), mcp_headers(), host=srv.host))
        return await c.response("POST")


async def test_the_default_protocol_is_uvicorns_own(launcher: Launcher) -> None:
    """No ``http`` option: uvicorn's choice (httptools when installed, else h11), wrapped
    only by the first head's timeout; naming one of uvicorn's gives that one."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    expected: type = H11Protocol
    if importlib.util.find_spec("httptools") is not None:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        expected = HttpToolsProtocol
    app = mcpkit.create_http_app(echo_server(), json_response=True)
    async with launcher.serve(app) as srv:
        assert issubclass(srv.server.config.http_protocol_class, expected)
        assert (await _post(srv, "hi")).status == 200
    app = mcpkit.create_http_app(echo_server(), json_response=True)
    async with launcher.serve(app, http="h11", header_timeout=None) as srv:
        assert srv.server.config.http_protocol_class is H11Protocol
        assert (await _post(srv, "hi")).status == 200


async def test_the_removed_mcpkit_protocol_option_is_refused_naming_the_change() -> None:
    """``uvicorn_options={"http": "mcpkit"}`` named mcpkit's own protocol: refused with a
    ValueError saying it is gone and what to use, before anything listens."""
    app = mcpkit.create_http_app(echo_server())
    with pytest.raises(ValueError, match=r"no longer has an HTTP/1\.1 protocol.*issue 42"):
        await serve_app(app, host="127.0.0.1", port=0, http="mcpkit")
    with pytest.raises(ValueError, match=r"issue 42"):
        serve_http(echo_server(), port=0, uvicorn_options={"http": "mcpkit"})


H = b"host: 127.0.0.1\r\n"
#: Requests whose framing two parsers could read differently (request smuggling).
SMUGGLED = {
    "Content-Length beside Transfer-Encoding": (
        b"POST /mcp HTTP/1.1\r\n" + H + b"content-length: 5\r\n"
        b"transfer-encoding: chunked\r\n\r\n0\r\n\r\nGET /mcp HTTP/1.1\r\n" + H + b"\r\n"
    ),
    "two Content-Length values": (
        b"POST /mcp HTTP/1.1\r\n" + H + b"content-length: 5\r\ncontent-length: 6\r\n\r\nhello!"
    ),
}


@pytest.mark.parametrize("wire", list(SMUGGLED.values()), ids=list(SMUGGLED))
async def test_a_smuggled_request_is_refused_and_the_server_serves_on(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch, wire: bytes
) -> None:
    """uvicorn's parser refuses it (400) and closes the connection; the app never sees it
    (nor what was hidden behind it); the next connection is served."""
    app = mcpkit.create_http_app(echo_server(), json_response=True)
    seen: list[str] = []
    original = _streamable.serve_exchange

    async def serve_exchange(app: Any, exchange: Any) -> Any:
        seen.append(exchange.method)
        return await original(app, exchange)

    monkeypatch.setattr(_streamable, "serve_exchange", serve_exchange)
    async with launcher.serve(app) as srv:
        async with srv.connect() as c:
            await c.send(wire)
            r = await c.response()
            assert r.status == 400, r
            await c.rest()  # then closed (bounded)
        assert seen == []
        r = await _post(srv, "still here")
        assert r.status == 200 and r.json()["result"]["content"][0]["text"] == "still here"
        assert seen == ["POST"]


@pytest.mark.parametrize("json_response", [True, False], ids=["json", "sse"])
async def test_a_call_that_ends_at_once_is_answered_as_one_served_the_general_way(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch, json_response: bool
) -> None:
    """A sync tool run on the loop (inline=True), no Context, nothing asked before the
    answer: the app answers it in one body, with no cancel scope and no task watching the
    client; its answers (a result, a tool error) are those of the general way, byte for byte."""
    told: list[bool] = []
    at_once = _stateless.StatelessEraHandler.at_once

    def spy(self: _stateless.StatelessEraHandler, req: Any, msg: Any) -> bool:
        told.append(at_once(self, req, msg))
        return told[-1]

    answers: dict[str, list[tuple[int, list[tuple[str, str]], bytes]]] = {}
    for way in ("at once", "general"):
        if way == "general":
            monkeypatch.setattr(_stateless.StatelessEraHandler, "at_once", lambda *a: False)
        else:
            monkeypatch.setattr(_stateless.StatelessEraHandler, "at_once", spy)
        app = mcpkit.create_http_app(echo_server(), json_response=json_response)
        async with launcher.serve(app) as srv:
            told.clear()
            got = []
            for rid, text in enumerate(["hi", "boom"], start=1):
                r = await _post(srv, text, rid)
                varying = ("date", "server")
                got.append((r.status, sorted(h for h in r.headers if h[0] not in varying), r.body))
            answers[way] = got
        if way == "at once":
            assert told == [True, True]
    assert answers["at once"] == answers["general"]
    ok, failed = answers["at once"]
    if json_response:
        result = orjson.loads(ok[2])["result"]
        assert ("content-length", str(len(ok[2]))) in ok[1]
    else:
        (event,) = [e for e in SSEParser().feed(ok[2]) if e.data]
        result = orjson.loads(event.data)["result"]
        assert ("content-type", "text/event-stream") in ok[1]
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert b'"isError":true' in failed[2] and b"Error executing tool echo" in failed[2]
