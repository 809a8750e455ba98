"""A ``tools/call`` of a sync tool that has shown itself short is served in the session's
reader, with no task of its own (the engine's ``serves_at_once``, answered by the server's
spec). Everything that may wait keeps its task: a tool taking the Context, one run as a
task, one that returned an awaitable, a mounted server's tool, any middleware, a server
bridging ``logging``, and every call before the tool has shown itself short.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import anyio
import pytest
from tests._clock import use_work_clock
from tests.server._harness import connect

from mcpkit import Context, Server
from mcpkit._server import _threads

pytestmark = pytest.mark.anyio
WARM = 2 * _threads.INLINE_AFTER


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every sync call measures short, whatever the machine's load (a preempted worker
    thread would restart the count of short runs)."""
    use_work_clock(monkeypatch)


def _server() -> Server:
    server = Server("at-once")

    @server.tool()
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


async def test_once_short_a_sync_tools_calls_are_served_by_one_task_the_reader() -> None:
    server = _server()
    RELEASE[:] = [anyio.Event()]
    async with connect(server) as c:
        ids = [(await c.tool("task_id"))["content"][0]["text"] for _ in range(WARM)]
        assert _ask(server, "task_id")
        # A slow call in flight keeps its own task; short calls are still answered meanwhile.
        async with anyio.create_task_group() as tg:
            tg.start_soon(c.tool, "slow")
            later = [(await c.tool("task_id"))["content"][0]["text"] for _ in range(4)]
            RELEASE[0].set()
    # Threads first, then one task for every call: the reader's.
    assert ids[0].startswith("thread ") and not ids[-1].startswith("thread ")
    assert set(later) == {ids[-1]}


async def test_only_calls_known_not_to_wait_are_served_at_once() -> None:
    server = _server()

    @server.tool()
    def takes_ctx(ctx: Context) -> str:
        """Given the Context: it may call back into the loop."""
        return "ctx"

    @server.tool(task_support="optional")
    def as_task() -> str:
        """May run as a task."""
        return "task"

    async def later() -> str:
        return "awaited"

    @server.tool()
    def gives_awaitable() -> Any:
        """Returns an awaitable: awaiting it may wait on anything."""
        return later()

    names = ("task_id", "takes_ctx", "as_task", "gives_awaitable")
    async with connect(server) as c:
        assert not any(_ask(server, n) for n in names)  # not yet shown short
        for name in names:
            for _ in range(WARM):
                result = await c.tool(name)
                assert not result.get("isError"), (name, result)
        assert (await c.tool("gives_awaitable"))["content"][0]["text"] == "awaited"
        assert _ask(server, "task_id")
        assert not any(_ask(server, n) for n in names[1:])
        assert not _ask(server, "no-such-tool")
        at_once = server.kernel.spec.at_once
        assert at_once is not None and not at_once("tools/list", None)
        assert not at_once("tools/call", None)


async def test_middleware_or_a_logging_bridge_turns_serving_at_once_off() -> None:
    server = _server()
    async with connect(server) as c:
        for _ in range(WARM):
            await c.tool("task_id")
    assert _ask(server, "task_id")

    async def passthrough(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    server.add_middleware(passthrough)
    assert server.kernel.spec.at_once is None
    bridged = _server()
    async with connect(bridged) as c:
        for _ in range(WARM):
            await c.tool("task_id")
    assert _ask(bridged, "task_id")
    handler = bridged.bridge_logging("at-once-test")
    try:
        assert not _ask(bridged, "task_id")
    finally:
        logging.getLogger("at-once-test").removeHandler(handler)
