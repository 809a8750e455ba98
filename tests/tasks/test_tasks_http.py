"""Tasks over Streamable HTTP (real uvicorn): a task outlives its session, for its principal."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
import pytest
from tests._schema import WireRecorder
from tests.http._http_helpers import running

from mcpkit import Client, Context, InvalidParams, Server
from mcpkit._app import create_http_app
from mcpkit._http._client import open_streamable_http

pytestmark = pytest.mark.anyio

RELATED = "io.modelcontextprotocol/related-task"


def make_server() -> tuple[Server, threading.Event, threading.Event]:
    started, gate = threading.Event(), threading.Event()
    server = Server(
        "http-tasks",
        task_poll_interval=20,
        task_owner=lambda ctx: ctx.client_info.get("name"),
    )

    @server.tool(task_support="optional")
    async def job(ctx: Context) -> str:
        await ctx.report_progress(1)
        started.set()
        await anyio.to_thread.run_sync(gate.wait, 10.0)
        # Its first client is gone by now: what it sends is dropped, the job goes on.
        await ctx.report_progress(2)
        await ctx.info("still working")
        return "job done"

    @server.tool(task_support="optional")
    async def ask_later(ctx: Context) -> str:
        started.set()
        await anyio.to_thread.run_sync(gate.wait, 10.0)
        answer = await ctx.elicit("Still there?", {"type": "object", "properties": {}})
        return f"later: {answer.action}"

    @server.tool(task_support="optional")
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Go?", {"type": "object", "properties": {}})
        return f"answer: {answer.action}"

    return server, started, gate


@contextlib.asynccontextmanager
async def connect(url: str, name: str, **kw: Any) -> AsyncIterator[tuple[Client, WireRecorder]]:
    async with open_streamable_http(url) as transport:
        recorder = WireRecorder(transport, side="client")
        async with Client(
            recorder,
            client_info={"name": name, "version": "1"},
            protocol_version="2025-11-25",
            **kw,
        ) as client:
            yield client, recorder
    recorder.check()


@pytest.mark.req("TASKS-ISOLATION", "TASKS-RESULT-BLOCKS", "TASKS-INPUT-RELATED-META")
async def test_task_survives_its_session_over_http() -> None:
    server, started, gate = make_server()
    asked: list[Any] = []

    async def on_elicit(params: Any, ctx: Any) -> Any:
        asked.append(params.meta.model_dump(by_alias=True))
        return {"action": "accept", "content": {}}

    with running(create_http_app(server)) as srv, anyio.fail_after(20):
        async with connect(srv.url, "alice") as (client, _rec):
            handle = await client.call_tool_as_task("job")
            tid = handle.task_id
            await anyio.to_thread.run_sync(started.wait, 10.0)
        # The session is gone (DELETE); the task still runs on the server.
        async with connect(srv.url, "mallory") as (other, _rec):
            with pytest.raises(InvalidParams):
                await other.task(tid).status()
            assert await other.list_tasks() == []
        async with connect(srv.url, "alice") as (again, _rec):
            assert (await again.task(tid).status()).status == "working"
            gate.set()
            result = await again.task(tid, "job").result(timeout=10)
            assert result.content[0].text == "job done"  # type: ignore[union-attr]
            assert [t.task_id for t in await again.list_tasks()] == [tid]

        async with connect(srv.url, "bob", elicitation_handler=on_elicit) as (bob, _rec):
            confirm = await bob.call_tool_as_task("ask")
            result = await confirm.result(timeout=10)
            assert result.content[0].text == "answer: accept"  # type: ignore[union-attr]
            assert asked[0][RELATED] == {"taskId": confirm.task_id}


async def test_a_reconnected_owner_receives_the_tasks_requests() -> None:
    server, started, gate = make_server()

    async def on_elicit(params: Any, ctx: Any) -> Any:
        return {"action": "accept", "content": {}}

    with running(create_http_app(server)) as srv, anyio.fail_after(20):
        async with connect(srv.url, "carol") as (first, _rec):
            tid = (await first.call_tool_as_task("ask_later")).task_id
            await anyio.to_thread.run_sync(started.wait, 10.0)
        async with connect(srv.url, "carol", elicitation_handler=on_elicit) as (back, _rec):
            handle = back.task(tid, "ask_later")
            assert (await handle.status()).status == "working"
            gate.set()
            result = await handle.result(timeout=10)
            assert result.content[0].text == "later: accept"  # type: ignore[union-attr]


def statuses_on_the_wire(recorder: WireRecorder) -> dict[str, list[str]]:
    """taskId -> the statuses announced by notifications/tasks/status, in order."""
    out: dict[str, list[str]] = {}
    for r in recorder.messages:
        msg = r.message
        if (
            r.direction == "received"
            and isinstance(msg, dict)
            and msg.get("method") == "notifications/tasks/status"
        ):
            out.setdefault(msg["params"]["taskId"], []).append(msg["params"]["status"])
    return out


@pytest.mark.req(
    "TASKS-CANCEL-TRANSITION",
    "TASKS-CANCEL-TERMINAL-REJECT",
    "TASKS-INPUT-REQUIRED-STATUS",
    "TASKS-INPUT-LEAVE",
    "TASKS-CLEANUP-EXPIRED",
    "TASKS-MAX-TTL",
)
async def test_cancel_ttl_input_required_and_status_notifications_over_http() -> None:
    server = Server("http-tasks-2", task_poll_interval=20, max_task_ttl=30_000)
    clock = [1_700_000_000.0]  # moved by the test: the TTL check below waits for nothing
    server.tasks_manager.clock = lambda: clock[0]
    started, stopped = threading.Event(), threading.Event()
    asked, release = threading.Event(), threading.Event()

    @server.tool(task_support="optional")
    async def forever(ctx: Context) -> str:
        started.set()
        try:
            await anyio.sleep(60)
        finally:
            stopped.set()
        return "never"

    @server.tool(task_support="optional")
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Go?", {"type": "object", "properties": {}})
        return f"answer: {answer.action}"

    @server.tool(task_support="optional")
    def quick() -> str:
        return "quick"

    async def on_elicit(params: Any, ctx: Any) -> Any:
        asked.set()
        await anyio.to_thread.run_sync(release.wait, 10.0)
        return {"action": "accept", "content": {}}

    with running(create_http_app(server)) as srv, anyio.fail_after(20):
        async with connect(srv.url, "dana", elicitation_handler=on_elicit) as (client, rec):
            # Cancellation: the tool is stopped, the task is final.
            handle = await client.call_tool_as_task("forever", ttl=10_000_000)
            assert handle.task.ttl == 30_000  # capped by the server
            assert await anyio.to_thread.run_sync(started.wait, 10.0)
            assert (await handle.cancel()).status == "cancelled"
            assert await anyio.to_thread.run_sync(stopped.wait, 10.0)
            with pytest.raises(InvalidParams):
                await handle.cancel()

            # input_required while the client answers, then working, then completed.
            asking = await client.call_tool_as_task("ask")
            await anyio.to_thread.run_sync(asked.wait, 10.0)
            assert (await asking.status()).status == "input_required"
            release.set()
            assert (await asking.result(timeout=10)).content[0].text == "answer: accept"  # type: ignore[union-attr]

            # TTL: a finished task is purged once its ttl (1 s) is over.
            done = await client.call_tool_as_task("quick", ttl=1000)
            assert done.task.ttl == 1000
            assert (await done.result(timeout=10)).content[0].text == "quick"  # type: ignore[union-attr]
            clock[0] += 1.001  # its ttl (1 s) is over; the others' (30 s) is not
            for method in ("tasks/get", "tasks/result"):
                with pytest.raises(InvalidParams):
                    await client.send_request(method, {"taskId": done.task_id})
            listed = [t.task_id for t in await client.list_tasks()]
            assert listed == [handle.task_id, asking.task_id]  # their ttl is 30 s

    announced = statuses_on_the_wire(rec)
    assert announced[handle.task_id] == ["cancelled"]
    assert announced[asking.task_id] == ["input_required", "working", "completed"]
    assert announced[done.task_id] == ["completed"]
