"""One Server object served under asyncio, then trio, then asyncio again, in one process.

Test suites do this (a module-level server, the suite run on each backend). Before, a lock
made under the first loop was reused under the next: "no running event loop" on trio after
asyncio, "must be called from async context" the other way.
"""

from __future__ import annotations

import anyio

from mcpkit import Client, Server

server = Server("across-loops")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(task_support="optional")
async def build(target: str) -> str:
    """A task-capable tool: its store is opened under a lock."""
    return f"built {target}"


async def _use() -> tuple[object, str]:
    # Tasks are a 2025-11-25 core feature (2026-07-28 moved them to an extension).
    async with Client(server, protocol_version="2025-11-25") as client:
        added = (await client.call_tool("add", {"a": 1, "b": 2})).structured_content
        handle = await client.call_tool_as_task("build", {"target": "all"})
        built = await handle.result(timeout=10)
        text = built.content[0].text  # type: ignore[union-attr]
        return added, text


def test_a_server_serves_under_one_loop_then_another() -> None:
    for backend in ("asyncio", "trio", "asyncio"):
        assert anyio.run(_use, backend=backend) == ({"result": 3}, "built all")
