"""W4 (issue 43): a server function raising ``KeyboardInterrupt``, ``GeneratorExit``,
``SystemExit`` or a ``BaseException`` of its own does not take its server down.

Before: over stdio such a tool on the event loop ended the server (a custom BaseException
from a worker thread too); over HTTP a call served at once got no answer, and on the plain
asyncio loop (no uvloop) the HTTP server process died. Now what the function raised is its
call's failure: a tool's ``isError`` result naming the exception's type, a prompt's or a
resource's -32603 error, and the next call is served. What a signal handler raises while a
function runs is the process's, not the function's: it still ends the server.

Real processes only: ``mcpkit run FILE`` over stdio (raw JSON-RPC lines), and over HTTP on
uvicorn with the standard asyncio loop (``MCPKIT_UVLOOP=0``), both eras.
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest
from tests._served import Served
from tests.hostile._proc import MCPKIT, StdioServer

SERVER = """
import signal
import sys

from mcpkit import Server

server = Server("base-exceptions", mask_errors=False)


class Boom(BaseException):
    '''Not an Exception: a class of the tool author's own.'''


RAISES = {
    "KeyboardInterrupt": KeyboardInterrupt,
    "GeneratorExit": GeneratorExit,
    "SystemExit": SystemExit,
    "Boom": Boom,
}


def register(kind, exc):
    async def on_loop_async() -> str:
        raise exc(f"{kind} from an async tool")

    def in_a_thread() -> str:
        raise exc(f"{kind} from a sync tool in a worker thread")

    def on_loop_sync() -> str:
        raise exc(f"{kind} from a sync tool run on the loop")

    server.add_tool(on_loop_async, name=f"{kind}-async")
    server.add_tool(in_a_thread, name=f"{kind}-thread")
    server.add_tool(on_loop_sync, name=f"{kind}-inline", inline=True)


for kind, exc in RAISES.items():
    register(kind, exc)


@server.tool()
def echo(text: str = "still serving") -> str:
    '''Answers at once.'''
    return text


@server.prompt()
async def interrupted() -> str:
    '''A prompt raising KeyboardInterrupt on the loop.'''
    raise KeyboardInterrupt("from a prompt")


@server.resource("boom://resource")
def boom_resource() -> str:
    '''A resource raising a BaseException of its own in a worker thread.'''
    raise Boom("from a resource")


signal.signal(signal.SIGUSR1, lambda signum, frame: sys.exit(7))


@server.tool(inline=True)
def signalled() -> str:
    '''Signals its own process: the handler's exit lands while this tool runs.'''
    signal.raise_signal(signal.SIGUSR1)
    return "not reached"
"""

KINDS = ("KeyboardInterrupt", "GeneratorExit", "SystemExit", "Boom")
WHERE = ("async", "thread", "inline")
CASES = [f"{kind}-{where}" for kind in KINDS for where in WHERE]


def _result(answer: dict[str, Any]) -> dict[str, Any]:
    assert "result" in answer, answer
    return dict(answer["result"])


def _check_failed(result: dict[str, Any], tool: str) -> None:
    kind = tool.split("-")[0]
    assert result.get("isError") is True, result
    text = result["content"][0]["text"]
    assert text.startswith(f"Error executing tool {tool}: {kind}: {kind} from "), text


# ------------------------------------------------------------------------------ stdio


@pytest.mark.parametrize("tool", CASES)
def test_a_tool_raising_a_base_exception_fails_its_call_only_over_stdio(
    tmp_path: Path, tool: str
) -> None:
    with StdioServer(tmp_path, SERVER) as server:
        server.handshake()
        server.call(2, tool)
        _check_failed(_result(server.answer(2)), tool)
        server.call(3, "echo")
        assert _result(server.answer(3))["content"][0]["text"] == "still serving"
        server.call(4, tool)  # again: the server's state survived the first one
        _check_failed(_result(server.answer(4)), tool)
        assert server.proc.poll() is None


def test_a_prompt_or_resource_raising_one_gets_an_internal_error_over_stdio(
    tmp_path: Path,
) -> None:
    with StdioServer(tmp_path, SERVER) as server:
        server.handshake()
        server.send(
            {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "interrupted"}}
        )
        error = server.answer(2)["error"]
        assert error["code"] == -32603 and "KeyboardInterrupt" in error["message"], error
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "resources/read",
                "params": {"uri": "boom://resource"},
            }
        )
        error = server.answer(3)["error"]
        assert error["code"] == -32603 and "Boom" in error["message"], error
        server.call(4, "echo")
        assert _result(server.answer(4))["content"][0]["text"] == "still serving"


def test_an_exit_a_signal_handler_raises_while_a_tool_runs_still_ends_the_server(
    tmp_path: Path,
) -> None:
    """The tool did not raise it: the process's own handler did (as a supervisor's SIGTERM
    handler calling ``sys.exit`` would), so it is not taken for the tool's failure."""
    with StdioServer(tmp_path, SERVER) as server:
        server.handshake()
        server.call(2, "signalled")
        assert server.exit_status(timeout=15) != 0
        assert 2 not in server.answers


# ------------------------------------------------------------------------------- HTTP

REV_2026 = "2026-07-28"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
CLIENT_INFO = {"name": "hostile", "version": "1"}


@contextmanager
def _http_server(tmp_path: Path, *extra: str) -> Iterator[Served]:
    """``mcpkit run FILE --transport http`` on uvicorn with the standard asyncio loop."""
    path = tmp_path / "hostile_server.py"
    path.write_text(SERVER)
    env = {**os.environ, "MCPKIT_UVLOOP": "0"}
    argv = [MCPKIT, "run", str(path), "--transport", "http", "--port", "0", *extra]
    served = Served.start(argv, env=env)
    try:
        yield served
    finally:
        if served.proc.poll() is None:
            served.proc.send_signal(signal.SIGINT)
            try:
                served.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                served.proc.kill()
                served.proc.wait(timeout=10)
        served.close()


class _Client:
    """Raw JSON-RPC POSTs to one endpoint, each on a fresh connection, bounded in time."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "", parts.port or 80, parts.path
        self.session: str | None = None

    def post(self, message: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=15)
        try:
            sent = {**HEADERS, **headers}
            if self.session is not None:
                sent["mcp-session-id"] = self.session
            conn.request("POST", self.path, orjson.dumps(message), sent)
            response = conn.getresponse()
            body = response.read()
            self.session = response.getheader("mcp-session-id") or self.session
        finally:
            conn.close()
        if response.status == 202:
            return {}
        assert response.status == 200, (response.status, body)
        if response.getheader("content-type", "").startswith("text/event-stream"):
            datas = [line[5:].strip() for line in body.split(b"\n") if line.startswith(b"data:")]
            body = next(d for d in datas if d)
        return dict(orjson.loads(body))

    def handshake(self) -> None:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        assert "result" in self.post(init, {})
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.post(done, {"mcp-protocol-version": "2025-11-25"})

    def call(self, era: str, rid: int, name: str) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": {}}
        if era == REV_2026:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": REV_2026,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            }
            headers = {"mcp-protocol-version": REV_2026, "mcp-method": "tools/call"}
            headers["mcp-name"] = name
        else:
            headers = {"mcp-protocol-version": "2025-11-25"}
        message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
        return _result(self.post(message, headers))


@pytest.mark.parametrize("json_response", [True, False], ids=["json", "sse"])
@pytest.mark.parametrize("era", ["2025-11-25", REV_2026])
def test_a_tool_raising_a_base_exception_fails_its_call_only_over_http(
    tmp_path: Path, era: str, json_response: bool
) -> None:
    with _http_server(tmp_path, *(["--json-response"] if json_response else [])) as served:
        client = _Client(served.url())
        if era != REV_2026:
            client.handshake()
        for rid, tool in enumerate(CASES, start=1):
            _check_failed(client.call(era, rid, tool), tool)
            assert served.proc.poll() is None, served.stderr()
        assert client.call(era, 99, "echo")["content"][0]["text"] == "still serving"
        assert served.proc.poll() is None
