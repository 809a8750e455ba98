"""Where a sync function runs: in a worker thread always, on the event loop only when its
author says so (``inline=True`` on a tool, prompt or resource). Issue 42 / issue 43 W5.

Before, a sync tool moved onto the event loop after 8 short calls: a client could train it
with fast calls, then make one slow call that stalled every other client of the process.
Now nothing is learnt from a function's calls.
"""

from __future__ import annotations

import http.client
import threading
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.from_thread
import orjson
import pytest
from tests.http._http_helpers import CLIENT_INFO, HEADERS, running
from tests.server._harness import connect

import mcpkit
from mcpkit import Context, Server

REV = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": REV,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}


def _call(url: str, name: str, arguments: dict[str, Any], rid: int, timeout: float) -> str:
    """One 2026-07-28 ``tools/call`` on a connection of its own: the result's text."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    params = {"name": name, "arguments": arguments, "_meta": META}
    body = orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    headers = {**HEADERS, "mcp-protocol-version": REV, "mcp-method": "tools/call"}
    try:
        conn.request("POST", parts.path, body, {**headers, "mcp-name": name})
        response = conn.getresponse()
        answer = orjson.loads(response.read())
    finally:
        conn.close()
    assert response.status == 200, answer
    return str(answer["result"]["content"][0]["text"])


def test_a_sync_tool_trained_with_fast_calls_still_stalls_nobody_when_slow() -> None:
    """One client makes many fast calls of a sync tool, then a slow one (it waits until the
    test says); another client's call is answered meanwhile. Before: the fast calls moved the
    tool onto the event loop and the slow call held the whole server."""
    started, release = threading.Event(), threading.Event()
    server = Server("trained")

    @server.tool()
    def work(slow: bool = False) -> str:
        """Answers at once, or (slow) once the test releases it."""
        if not slow:
            return "fast"
        started.set()
        return "released" if release.wait(30) else "never released"

    @server.tool()
    def echo(text: str) -> str:
        """Says it back."""
        return text

    with running(mcpkit.create_http_app(server, json_response=True)) as srv:
        for rid in range(50):  # far more than any history rule would ask for
            assert _call(srv.url, "work", {}, rid, timeout=10) == "fast"
        slow: list[str] = []
        caller = threading.Thread(
            target=lambda: slow.append(_call(srv.url, "work", {"slow": True}, 100, timeout=40))
        )
        caller.start()
        try:
            assert started.wait(10), "the slow call never started"
            # The other client: answered while the slow call still runs (a loop held by the
            # slow call would answer only after it, and the call would time out first).
            assert _call(srv.url, "echo", {"text": "meanwhile"}, 101, timeout=10) == "meanwhile"
            assert not slow  # the slow call was still running when the other was answered
        finally:
            release.set()
            caller.join(40)
        assert slow == ["released"]


@pytest.mark.anyio
async def test_inline_true_runs_on_the_loop_thread_and_the_default_never_does() -> None:
    server = Server("inline")

    @server.tool(inline=True)
    def on_loop() -> str:
        """Where it runs."""
        return str(threading.get_ident())

    @server.tool()
    def in_thread() -> str:
        """Where it runs."""
        return str(threading.get_ident())

    @server.prompt(inline=True)
    def prompt_on_loop() -> str:
        """Where it runs."""
        return str(threading.get_ident())

    @server.resource("where://loop", inline=True)
    def resource_on_loop() -> str:
        """Where it runs."""
        return str(threading.get_ident())

    @server.resource("where://{kind}", inline=True)
    def template_on_loop(kind: str) -> str:
        """Where it runs."""
        return str(threading.get_ident())

    loop_thread = str(threading.get_ident())
    async with connect(server) as c:
        for _ in range(20):
            assert (await c.tool("on_loop"))["content"][0]["text"] == loop_thread
            assert (await c.tool("in_thread"))["content"][0]["text"] != loop_thread
        got = await c.call("prompts/get", {"name": "prompt_on_loop"})
        assert got["messages"][0]["content"]["text"] == loop_thread
        for uri in ("where://loop", "where://other"):
            read = await c.call("resources/read", {"uri": uri})
            assert read["contents"][0]["text"] == loop_thread


@pytest.mark.anyio
async def test_a_sync_tool_taking_the_context_runs_in_a_thread_and_may_call_back() -> None:
    server = Server("ctx")

    @server.tool()
    def with_ctx(ctx: Context) -> str:
        """Calls back into the loop from its thread."""
        anyio.from_thread.run(ctx.info, "from a sync tool")
        return str(threading.get_ident())

    async with connect(server) as c:
        for _ in range(3):
            assert (await c.tool("with_ctx"))["content"][0]["text"] != str(threading.get_ident())


async def _later() -> str:
    return "awaited"


def test_inline_is_refused_where_it_cannot_mean_anything() -> None:
    server = Server("refused")

    async def already_on_the_loop() -> str:
        return "x"

    def calls_back() -> str:
        anyio.from_thread.run(_later)
        return "x"

    with pytest.raises(TypeError, match="inline=True is for a sync"):
        server.add_tool(already_on_the_loop, inline=True)
    with pytest.raises(TypeError, match="needs a worker thread"):
        server.add_tool(calls_back, inline=True)
    with pytest.raises(TypeError, match="not content"):
        server.add_resource("text://fixed", "content", inline=True)
    assert server.tools == []
