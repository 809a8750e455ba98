"""A ``tools/call`` of a sync tool its author runs on the loop (``inline=True``) is served
in the session's reader, with no task of its own (the engine's ``serves_at_once``, answered
by the server's spec). Everything that may wait keeps its task: a sync tool left to a worker
thread (the default), a tool taking the Context, one run as a task, one that returned an
awaitable, a mounted server's tool, any middleware, and a server bridging ``logging``.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import anyio
import pytest
from tests.server._harness import connect

from mcpkit import Context, Server

pytestmark = pytest.mark.anyio
CALLS = 16


def _server() -> Server:
    server = Server("at-once")

    @server.tool(inline=True)
    def task_id() -> str:
        """The anyio task serving the call (a sync tool run inline runs in it)."""
        try:
            return str(anyio.get_current_task().id)
        except RuntimeError:  # in a worker thread: no task
            return f"thread {threading.get_ident()}"

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Waits until told (a request that holds its task)."""
        await ctx.info("waiting")
        await RELEASE[0].wait()
        return "done"

    return server


RELEASE: list[anyio.Event] = []


def _ask(server: Server, name: str) -> bool:
    at_once = server.kernel.spec.at_once
    return at_once is not None and at_once("tools/call", {"name": name, "arguments": {}})


async def test_an_inline_sync_tools_calls_are_served_by_one_task_the_reader() -> None:
    server = _server()
    RELEASE[:] = [anyio.Event()]
    async with connect(server) as c:
        ids = [(await c.tool("task_id"))["content"][0]["text"] for _ in range(CALLS)]
        assert _ask(server, "task_id")
        # A slow call in flight keeps its own task; short calls are still answered meanwhile.
        async with anyio.create_task_group() as tg:
            tg.start_soon(c.tool, "slow")
            later = [(await c.tool("task_id"))["content"][0]["text"] for _ in range(4)]
            RELEASE[0].set()
    # One task for every call, from the first: the reader's.
    assert not ids[0].startswith("thread ") and set(ids) == {ids[0]}
    assert set(later) == {ids[0]}


async def test_only_calls_known_not_to_wait_are_served_at_once() -> None:
    server = _server()

    @server.tool(inline=True)
    def takes_ctx(ctx: Context) -> str:
        """Given the Context: it may ask the client something."""
        return "ctx"

    @server.tool(task_support="optional", inline=True)
    def as_task() -> str:
        """May run as a task."""
        return "task"

    async def later() -> str:
        return "awaited"

    @server.tool(inline=True)
    def gives_awaitable() -> Any:
        """Returns an awaitable: awaiting it may wait on anything."""
        return later()

    @server.tool()
    def threaded() -> str:
        """A sync tool left to a worker thread."""
        return "threaded"

    names = ("task_id", "takes_ctx", "as_task", "gives_awaitable", "threaded")
    async with connect(server) as c:
        assert _ask(server, "task_id") and _ask(server, "gives_awaitable")
        for name in names:
            for _ in range(CALLS):
                result = await c.tool(name)
                assert not result.get("isError"), (name, result)
        assert (await c.tool("gives_awaitable"))["content"][0]["text"] == "awaited"
        assert _ask(server, "task_id")
        # No longer said to end at once once it returned an awaitable.
        assert not any(_ask(server, n) for n in names[1:])
        assert not _ask(server, "no-such-tool")
        at_once = server.kernel.spec.at_once
        assert at_once is not None and not at_once("tools/list", None)
        assert not at_once("tools/call", None)


async def test_middleware_or_a_logging_bridge_turns_serving_at_once_off() -> None:
    server = _server()
    assert _ask(server, "task_id")

    async def passthrough(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    server.add_middleware(passthrough)
    assert server.kernel.spec.at_once is None
    bridged = _server()
    assert _ask(bridged, "task_id")
    handler = bridged.bridge_logging("at-once-test")
    try:
        assert not _ask(bridged, "task_id")
    finally:
        logging.getLogger("at-once-test").removeHandler(handler)
