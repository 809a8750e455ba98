"""``Depends`` in a task-augmented tool call (2025-11-25 core tasks; the 2026-07-28 tasks
extension): the dependencies are resolved for the task's work, stay open while it works
after the call was answered with the task, and are torn down once that work is done; an
override replaces one there too."""

# No `from __future__ import annotations`: the dependency is local to the test, and a string
# annotation naming it could not be resolved.

from collections.abc import AsyncIterator
from typing import Annotated

import anyio
import pytest

from mcpkit import Client, Context, Depends, Server

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_task_calls_dependencies_resolve_and_tear_down_after_its_work(
    version: str,
) -> None:
    server = Server("deps-tasks", task_poll_interval=10)
    events: list[str] = []
    started, go, closed = anyio.Event(), anyio.Event(), anyio.Event()

    async def connection(ctx: Context) -> AsyncIterator[str]:
        events.append(f"open for {ctx.server.name}")
        try:
            yield "conn"
        finally:
            events.append("close")
            closed.set()

    @server.tool(task_support="optional")
    async def build(target: str, conn: Annotated[str, Depends(connection)]) -> str:
        """Build a target over a connection the server opens per call."""
        events.append(f"work with {conn}")
        started.set()
        await go.wait()
        events.append("work done")
        return f"built {target} with {conn}"

    async def fake() -> str:
        return "fake"

    with anyio.fail_after(20):
        async with Client(server, protocol_version=version) as client:
            handle = await client.call_tool_as_task("build", {"target": "all"})
            assert handle.task_id  # answered with a task, the work still going on
            await started.wait()
            # Resolved for the work, and still open after the call was answered.
            assert events == ["open for deps-tasks", "work with conn"]
            assert (await handle.status()).status == "working"
            go.set()
            result = await handle.result(timeout=10)
            await closed.wait()
            assert events[2:] == ["work done", "close"]  # torn down after the work, once
            with server.dependency_overrides.use(connection, fake):
                faked = await client.call_tool_as_task("build", {"target": "docs"})
                faked_result = await faked.result(timeout=10)
    assert result.content[0].text == "built all with conn"  # type: ignore[union-attr]
    assert faked_result.content[0].text == "built docs with fake"  # type: ignore[union-attr]
    assert events[4:] == ["work with fake", "work done"]  # the real one never opened again
