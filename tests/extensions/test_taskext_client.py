"""The tasks extension from the Client: one tool, both eras, followed to its end.

A 2026-07-28 Client declares the extension, so a task-capable tool comes back as a task
that ``call_tool`` follows (polling, answering input with the callbacks); a 2025-11-25
Client runs the same tool with the core ``task`` param. The SQLite store keeps the tasks of
both across a restart of a real server process.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit import (
    Client,
    Context,
    ExtensionTaskHandle,
    InternalError,
    ProtocolError,
    Server,
    TaskHandle,
)

pytestmark = pytest.mark.anyio

STATELESS, HANDSHAKE = "2026-07-28", "2025-11-25"
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
DURABLE = Path(__file__).resolve().parents[1] / "tasks" / "durable_server.py"


def make_server() -> tuple[Server, anyio.Event]:
    server = Server("taskext-client", task_poll_interval=10)
    go = anyio.Event()

    @server.tool(task_support="optional")
    async def build(target: str, ctx: Context) -> str:
        """Builds after asking who builds."""
        await ctx.report_progress(1, 3, "compiling")
        who = await ctx.elicit(f"Who builds {target}?", NAME)
        await ctx.report_progress(2, 3, "linking")
        await go.wait()
        return f"{target} built by {(who.content or {}).get('name')}"

    @server.tool(task_support="optional")
    async def forever() -> str:
        """Never ends on its own."""
        await anyio.sleep_forever()
        return "never"

    @server.tool(task_support="optional")
    async def crash() -> str:
        """A protocol error."""
        raise ProtocolError(-32603, "boom")

    return server, go


async def answer(params: Any, ctx: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Robin"}}


@pytest.mark.parametrize("version", [STATELESS, HANDSHAKE])
async def test_the_same_tool_runs_as_a_task_in_both_eras(version: str) -> None:
    server, go = make_server()
    async with Client(server, protocol_version=version, elicitation_handler=answer) as client:
        with anyio.fail_after(10):
            handle = await client.call_tool_as_task("build", {"target": "app"})
            expected = ExtensionTaskHandle if version == STATELESS else TaskHandle
            assert isinstance(handle, expected)
            assert handle.task_id
            go.set()
            result = await handle.result()
    assert result.content[0].text == "app built by Robin"  # type: ignore[union-attr]


async def test_call_tool_follows_a_task_and_reports_its_status_messages() -> None:
    server, go = make_server()
    go.set()
    heard: list[str | None] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(message)

    async with Client(server, protocol_version=STATELESS, elicitation_handler=answer) as client:
        with anyio.fail_after(10):
            result = await client.call_tool("build", {"target": "lib"}, progress_handler=progress)
            with pytest.raises(InternalError, match="boom"):
                await client.call_tool("crash")
    assert result.content[0].text == "lib built by Robin"  # type: ignore[union-attr]
    assert "linking" in heard


async def test_a_handle_cancels_and_a_known_id_is_followed_again() -> None:
    server, _ = make_server()
    async with Client(server, protocol_version=STATELESS) as client:
        with anyio.fail_after(10):
            handle = await client.call_tool_as_task("forever")
            assert isinstance(handle, ExtensionTaskHandle)
            again = client.task(handle.task_id, "forever")
            assert (await again.status()).status == "working"
            assert (await handle.cancel()).status == "cancelled"
            with pytest.raises(ProtocolError, match="cancelled"):
                await again.result()


async def test_sqlite_keeps_the_tasks_of_both_eras_across_a_process_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "tasks.db")
    argv = [sys.executable, str(DURABLE), db]
    with anyio.fail_after(40):
        async with Client(argv, protocol_version=HANDSHAKE) as old:
            core_done = await old.call_tool_as_task("quick", {"n": 1})
            await core_done.wait(timeout=10)
            core_running = await old.call_tool_as_task("slow")
            async with Client(argv, protocol_version=STATELESS) as new:
                ext_done = await new.call_tool_as_task("quick", {"n": 2})
                await ext_done.wait(timeout=10)
                ext_running = await new.call_tool_as_task("slow")
                assert (await ext_running.status()).status == "working"
        # Both processes are gone; fresh ones open the same file.
        async with Client(argv, protocol_version=STATELESS) as new:
            result = await new.task(ext_done.task_id, "quick").result(timeout=10)
            assert result.content[0].text == "quick 2"  # type: ignore[union-attr]
            # A 2025-11-25 task is seen through the extension too (same owner, same store).
            assert (await new.task(core_done.task_id).status()).status == "completed"
            lost = await new.task(ext_running.task_id).status()
            assert lost.status == "failed" and lost.error is not None
            assert "stopped" in lost.error["message"]
        async with Client(argv, protocol_version=HANDSHAKE) as old:
            result = await old.task(core_done.task_id, "quick").result(timeout=10)
            assert result.content[0].text == "quick 1"  # type: ignore[union-attr]
            assert (await old.task(core_running.task_id).status()).status == "failed"
