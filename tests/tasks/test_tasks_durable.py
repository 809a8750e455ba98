"""The SQLite task store across a server restart, and tasks over a real stdio subprocess."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests._schema import WireRecorder
from tests.tasks._helpers import make_server, served

from mcpkit import Client, InvalidParams, ProtocolError, SQLiteTaskStore, TaskRecord
from mcpkit._stores._tasks import INTERRUPTED_MESSAGE
from mcpkit._transports import spawn_stdio

#: Tasks are a 2025-11-25 core feature (2026-07-28 moved them to an extension).
TASKS_REVISION = "2025-11-25"

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
RELATED = "io.modelcontextprotocol/related-task"


def alice(ctx: Any) -> str:
    return "alice"


@pytest.mark.req("TASKS-RESULT-TERMINAL", "TASKS-ISOLATION")
async def test_sqlite_store_answers_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    server, state = make_server(task_store=SQLiteTaskStore(db), task_owner=alice)
    with anyio.fail_after(15):
        async with served(server) as (client, _rec):
            done = await client.call_tool_as_task("must")
            await done.wait(timeout=5)
            running = await client.call_tool_as_task("job", {"n": 1})
            await state["started"].wait()
        # The server stopped with `job` still running: it is failed, with the reason.
        assert state["stopped"].is_set()

        # A process that died without a word leaves a task `working` in the file.
        store = SQLiteTaskStore(db)
        await store.open()
        now = time.time()
        crashed = await store.create(
            TaskRecord(
                task_id="crashed-task",
                owner="principal:alice",
                status="working",
                created_at=now,
                last_updated_at=now,
                ttl=None,
            )
        )
        await store.close()

        server2, _ = make_server(task_store=SQLiteTaskStore(db), task_owner=alice)
        async with served(server2) as (client2, _rec):
            result = await client2.task(done.task_id, "must").result(timeout=5)
            assert result.content[0].text == "ok"  # type: ignore[union-attr]
            assert result.meta is not None
            stopped = await client2.task(running.task_id).status()
            assert stopped.status == "failed"
            assert "server stopped" in (stopped.status_message or "")
            lost = await client2.task(crashed.task_id).status()
            assert lost.status == "failed" and lost.status_message == INTERRUPTED_MESSAGE
            with pytest.raises(ProtocolError) as e:
                await client2.task(crashed.task_id).result(timeout=5)
            assert e.value.code == -32603 and e.value.message == INTERRUPTED_MESSAGE
            listed = [t.task_id for t in await client2.list_tasks()]
            assert listed == [done.task_id, running.task_id, crashed.task_id]

        server3, _ = make_server(task_store=SQLiteTaskStore(db), task_owner=lambda ctx: "eve")
        async with served(server3) as (eve, _rec):
            with pytest.raises(InvalidParams):
                await eve.task(done.task_id).status()
            assert await eve.list_tasks() == []


async def test_sqlite_store_purges_expired_tasks(tmp_path: Path) -> None:
    store = SQLiteTaskStore(tmp_path / "t.db")
    await store.open()
    try:
        old = TaskRecord("a", "o", "completed", created_at=0.0, last_updated_at=0.0, ttl=1000)
        new = TaskRecord("b", "o", "completed", time.time(), time.time(), ttl=None)
        await store.create(old)
        await store.create(new)
        assert await store.delete_expired(time.time()) == ["a"]
        assert [r.task_id for r in await store.list_owned("o", 0, 10)] == ["b"]
    finally:
        await store.close()


@pytest.mark.req(
    "TASKS-CREATE-TASK-RESULT",
    "TASKS-INPUT-REQUIRED-STATUS",
    "TASKS-RELATED-ELICITATION",
    "PROGRESS-TASK-SAME-TOKEN",
)
async def test_tasks_over_stdio_with_the_everything_example() -> None:
    asked: list[Any] = []

    async def on_elicit(params: Any, ctx: Any) -> Any:
        asked.append(params.meta.model_dump(by_alias=True))
        return {"action": "accept", "content": {}}

    with anyio.fail_after(30):
        async with spawn_stdio(sys.executable, [str(EVERYTHING)], cwd=ROOT) as transport:
            recorder = WireRecorder(transport, side="client")
            async with Client(
                recorder, elicitation_handler=on_elicit, protocol_version=TASKS_REVISION
            ) as client:
                raw = await client.send_request(
                    "tools/call",
                    {
                        "name": "long_running_job",
                        "arguments": {"steps": 3, "step_seconds": 0.02},
                        "task": {"ttl": 60_000},
                        "_meta": {"progressToken": 42},
                    },
                )
                handle = client.task(raw["task"]["taskId"], "long_running_job")
                result = await handle.result(timeout=10)
                assert result.content[0].text == "finished 3 steps"  # type: ignore[union-attr]
                # The engine hands our Client only progress of requests still pending, so
                # the task's progress (sent after the CreateTaskResult) is checked on the wire.
                progress = [
                    r.message["params"]
                    for r in recorder.messages
                    if r.direction == "received"
                    and isinstance(r.message, dict)
                    and r.message.get("method") == "notifications/progress"
                ]
                assert [p["progressToken"] for p in progress] == [42, 42, 42]
                assert all(p["_meta"][RELATED] == {"taskId": handle.task_id} for p in progress)

                confirm = await client.call_tool_as_task("confirm_then_run", {"action": "ship"})
                result = await confirm.result(timeout=10)
                assert result.content[0].text == "ship done"  # type: ignore[union-attr]
                assert asked[0][RELATED] == {"taskId": confirm.task_id}

                long = await client.call_tool_as_task(
                    "long_running_job", {"steps": 1000, "step_seconds": 0.05}
                )
                assert (await long.cancel()).status == "cancelled"
                assert (await long.status()).status == "cancelled"
    recorder.check()


def test_sync_client_runs_a_task_over_stdio() -> None:
    from mcpkit import SyncClient

    with SyncClient(
        [sys.executable, str(EVERYTHING)], cwd=ROOT, timeout=20, protocol_version=TASKS_REVISION
    ) as client:
        handle = client.call_tool_as_task("long_running_job", {"steps": 2, "step_seconds": 0.01})
        result = handle.result(timeout=10)
        assert result.content[0].text == "finished 2 steps"  # type: ignore[union-attr]
        assert handle.task.status == "completed"
        assert [t.task_id for t in client.list_tasks()] == [handle.task_id]


DURABLE = Path(__file__).resolve().parent / "durable_server.py"


@pytest.mark.req("TASKS-RESULT-TERMINAL", "TASKS-RESULT-EXACT", "TASKS-LIST-RETRIEVABLE")
async def test_sqlite_store_across_a_process_restart_over_stdio(tmp_path: Path) -> None:
    db = str(tmp_path / "tasks.db")
    argv = [sys.executable, str(DURABLE), db]
    with anyio.fail_after(30):
        async with Client(argv, protocol_version=TASKS_REVISION) as first:
            done = await first.call_tool_as_task("quick", {"n": 1})
            await done.wait(timeout=10)
            running = await first.call_tool_as_task("slow")
            assert (await running.status()).status == "working"
            first_pid = first.session.engine.transport.process.pid  # type: ignore[attr-defined]
        # The first process is gone (stdin closed); a second one opens the same file.
        async with Client(argv, protocol_version=TASKS_REVISION) as second:
            assert second.session.engine.transport.process.pid != first_pid  # type: ignore[attr-defined]
            result = await second.task(done.task_id, "quick").result(timeout=10)
            assert result.content[0].text == "quick 1"  # type: ignore[union-attr]
            stopped = await second.task(running.task_id).status()
            assert stopped.status == "failed"
            assert "server stopped" in (stopped.status_message or "")
            with pytest.raises(ProtocolError):
                await second.task(running.task_id).result(timeout=10)
            listed = [t.task_id for t in await second.list_tasks()]
            assert listed == [done.task_id, running.task_id]


@pytest.mark.req("TASKS-RESULT-TERMINAL", "TASKS-FAILED-STATUS-MESSAGE")
async def test_sqlite_store_across_a_killed_http_server(tmp_path: Path) -> None:
    from tests.client.test_client_http import free_port, listening

    db = str(tmp_path / "tasks.db")
    port = free_port()
    argv = [sys.executable, str(DURABLE), db, "http", str(port)]
    url = f"http://127.0.0.1:{port}/mcp"
    with anyio.fail_after(40):
        with listening(argv, port) as proc:
            async with Client(url, protocol_version=TASKS_REVISION) as client:
                done = await client.call_tool_as_task("quick", {"n": 2})
                await done.wait(timeout=10)
                running = await client.call_tool_as_task("slow")
                assert (await running.status()).status == "working"
                # The server dies without a word (SIGKILL): no chance to mark anything.
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        port = free_port()
        argv[-1] = str(port)
        with listening(argv, port):
            async with Client(
                f"http://127.0.0.1:{port}/mcp", protocol_version=TASKS_REVISION
            ) as client:
                result = await client.task(done.task_id, "quick").result(timeout=10)
                assert result.content[0].text == "quick 2"  # type: ignore[union-attr]
                assert result.meta is not None
                assert result.meta[RELATED] == {"taskId": done.task_id}
                lost = await client.task(running.task_id).status()
                assert lost.status == "failed" and lost.status_message == INTERRUPTED_MESSAGE
                with pytest.raises(ProtocolError) as e:
                    await client.task(running.task_id).result(timeout=10)
                assert e.value.message == INTERRUPTED_MESSAGE
                assert [t.task_id for t in await client.list_tasks()] == [
                    done.task_id,
                    running.task_id,
                ]
