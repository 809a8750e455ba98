"""Tasks end to end over a memory pair: a real Server, a real Client, every message validated."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.tasks._helpers import SendSpy, make_server, served

from mcpkit import (
    CapabilityError,
    Context,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ProtocolError,
    Server,
)

pytestmark = pytest.mark.anyio

RELATED = "io.modelcontextprotocol/related-task"


def _status_notifications(recorder: Any) -> list[dict[str, Any]]:
    """The params of every notifications/tasks/status the client received, in order."""
    return [
        r.message["params"]
        for r in recorder.messages
        if r.direction == "received"
        and isinstance(r.message, dict)
        and r.message.get("method") == "notifications/tasks/status"
    ]


@pytest.mark.req(
    "TASKS-SERVER-CAPABILITY",
    "TASKS-CREATE-TASK-RESULT",
    "TASKS-BEGIN-WORKING",
    "TASKS-ID-STRING",
    "TASKS-CREATED-AT",
    "TASKS-LAST-UPDATED-AT",
    "TASKS-TTL-IN-GET",
    "TASKS-RESULT-BLOCKS",
    "TASKS-RESULT-TERMINAL",
    "TASKS-RESULT-EXACT",
    "TASKS-RELATED-META",
    "TASKS-RESULT-META",
    "TASKS-NO-RELATED-META-IN-RESULTS",
    "TASKS-STATUS-NO-RELATED",
    "TASKS-ID-RECEIVER",
    "PROGRESS-TASK-TOKEN-CONTINUES",
    "PROGRESS-TASK-SAME-TOKEN",
    "PROGRESS-TASK-STOP-AT-TERMINAL",
)
async def test_task_lifecycle_end_to_end() -> None:
    server, state = make_server()
    statuses: list[str] = []
    progress: list[Any] = []
    with anyio.fail_after(10):
        async with served(server) as (client, recorder):
            caps = client.initialize_result.capabilities.model_dump(by_alias=True)["tasks"]
            assert caps["requests"] == {"tools": {"call": {}}}
            assert "list" in caps and "cancel" in caps
            tools = {t.name: t for t in await client.list_tools()}
            assert tools["job"].execution is not None
            assert tools["job"].execution.task_support == "optional"
            assert tools["must"].execution.task_support == "required"  # type: ignore[union-attr]

            # Raw, to see the CreateTaskResult and keep the progress token.
            raw = await client.send_request(
                "tools/call",
                {
                    "name": "job",
                    "arguments": {"n": 7},
                    "task": {"ttl": 60_000},
                    "_meta": {"progressToken": "tok-1"},
                },
            )
            task = raw["task"]
            assert isinstance(task["taskId"], str) and task["taskId"]
            assert task["status"] == "working"
            assert task["ttl"] == 60_000 and task["pollInterval"] == 20
            assert task["createdAt"].endswith("Z") and task["lastUpdatedAt"].endswith("Z")
            tid = task["taskId"]
            await state["started"].wait()

            got = await client.send_request("tasks/get", {"taskId": tid})
            assert got["status"] == "working" and got["ttl"] == 60_000
            assert RELATED not in got.get("_meta", {})

            async with anyio.create_task_group() as tg:
                box: list[Any] = []

                async def fetch() -> None:
                    box.append(await client.send_request("tasks/result", {"taskId": tid}))

                tg.start_soon(fetch)
                # Client and server share this loop: once every task waits, an answer that
                # did not block would be in.
                await anyio.wait_all_tasks_blocked()
                assert not box  # tasks/result blocks while the task works
                state["gate"].set()
            result = box[0]
            assert result["content"] == [{"type": "text", "text": "job 7 done"}]
            assert result["_meta"][RELATED] == {"taskId": tid}
            final = await client.send_request("tasks/get", {"taskId": tid})
            assert final["status"] == "completed"
            # The result is kept: asking again answers the same.
            again = await client.send_request("tasks/result", {"taskId": tid})
            assert again == result

    for rec in recorder.messages:
        msg = rec.message
        if rec.direction != "received" or not isinstance(msg, dict):
            continue
        if msg.get("method") == "notifications/progress":
            progress.append(msg["params"])
        if msg.get("method") == "notifications/tasks/status":
            statuses.append(msg["params"]["status"])
            assert RELATED not in msg["params"].get("_meta", {})
        if msg.get("method") == "notifications/message":
            assert msg["params"]["_meta"][RELATED] == {"taskId": tid}
    assert [p["progress"] for p in progress] == [1, 2]
    assert all(p["progressToken"] == "tok-1" for p in progress)
    assert all(p["_meta"][RELATED] == {"taskId": tid} for p in progress)
    assert statuses == ["completed"]


@pytest.mark.req("TASKS-TOOL-REQUIRED-ERROR", "TASKS-TOOL-FORBIDDEN-ERROR")
async def test_required_and_forbidden_tools_get_method_not_found() -> None:
    server, _ = make_server()
    with anyio.fail_after(10):
        async with served(server) as (client, _rec):
            with pytest.raises(MethodNotFound) as e:
                await client.call_tool("must")
            assert e.value.code == -32601
            with pytest.raises(MethodNotFound):
                await client.send_request("tools/call", {"name": "plain", "task": {}})
            # The same tools, used as they allow, work.
            assert (await client.call_tool("plain")).content[0].text == "plain"  # type: ignore[union-attr]
            handle = await client.call_tool_as_task("must")
            result = await handle.result(timeout=5)
            assert result.content[0].text == "ok"  # type: ignore[union-attr]
            assert handle.task.status == "completed"


@pytest.mark.req(
    "TASKS-CAPABILITY-IGNORED-WITHOUT",
    "TASKS-REQUESTOR-CHECK-CAPABILITY",
    "TASKS-NO-TASKS-WITHOUT-CAPABILITY",
    "TASKS-CLIENT-NO-TASK-WITHOUT-TOOLS-CALL",
)
async def test_server_without_task_tools_ignores_task_metadata() -> None:
    server = Server("no-tasks")

    @server.tool()
    def plain() -> str:
        return "plain"

    def plain_answer(record: Any) -> bool:
        # The validator expects a CreateTaskResult for any tools/call carrying `task`; a
        # server without the capability answers plainly, as the spec requires.
        result = record.message.get("result") if isinstance(record.message, dict) else None
        return isinstance(result, dict) and result.get("content") is not None

    with anyio.fail_after(10):
        async with served(server, ignore=plain_answer) as (client, _rec):
            assert client.initialize_result.capabilities.tasks is None
            with pytest.raises(CapabilityError):
                await client.call_tool_as_task("plain")
            raw = await client.send_request("tools/call", {"name": "plain", "task": {"ttl": 5}})
            assert raw["content"][0]["text"] == "plain"
            with pytest.raises(CapabilityError):
                await client.send_request("tasks/get", {"taskId": "x"})
            # Past our client's own check, the server answers -32601.
            with pytest.raises(MethodNotFound):
                await client.session.engine.request("tasks/get", {"taskId": "x"}, timeout=5)


@pytest.mark.req("TASKS-RESULT-SAME-ERROR", "TASKS-FAILED-STATUS-MESSAGE", "TASKS-RESULT-EXACT")
async def test_failures_are_reported_exactly() -> None:
    server, _ = make_server()
    with anyio.fail_after(10):
        async with served(server) as (client, _rec):
            handle = await client.call_tool_as_task("broken")
            result = await handle.result(timeout=5)
            assert result.is_error is True
            assert handle.task.status == "failed"
            assert "Error executing tool broken" in (handle.task.status_message or "")
            # A JSON-RPC error of the tool is what tasks/result answers.
            handle = await client.call_tool_as_task("rpc_error")
            with pytest.raises(ProtocolError) as e:
                await handle.result(timeout=5)
            assert e.value.code == -32050 and e.value.data == {"why": "test"}
            assert handle.task.status == "failed"
            assert handle.task.status_message == "custom failure"


@pytest.mark.req(
    "TASKS-CANCEL-TERMINAL-REJECT",
    "TASKS-CANCEL-TRANSITION",
    "TASKS-CANCEL-REMAIN",
    "TASKS-TERMINAL-NO-TRANSITION",
    "CANCEL-TASKS-USE-TASKS-CANCEL",
)
async def test_cancel_stops_the_tool_and_is_final() -> None:
    server, state = make_server()
    with anyio.fail_after(10):
        async with served(server) as (client, _rec):
            handle = await client.call_tool_as_task("job", {"n": 1})
            await state["started"].wait()
            task = await handle.cancel()
            assert task.status == "cancelled"
            assert task.status_message == "The task was cancelled by request."
            await state["stopped"].wait()
            assert (await handle.status()).status == "cancelled"
            with pytest.raises(InvalidParams) as e:
                await handle.cancel()
            assert e.value.code == -32602
            with pytest.raises(ProtocolError):
                await handle.result(timeout=5)
            # Completed tasks cannot be cancelled either.
            done = await client.call_tool_as_task("must")
            await done.wait(timeout=5)
            with pytest.raises(InvalidParams):
                await done.cancel()
            assert (await done.status()).status == "completed"


@pytest.mark.req(
    "TASKS-LIST-NEXT-CURSOR",
    "TASKS-LIST-RETRIEVABLE",
    "TASKS-LIST-PAGINATE",
    "TASKS-ID-UNIQUE",
    "TASKS-PROTOCOL-ERRORS",
)
async def test_list_is_paginated() -> None:
    server, _ = make_server(page_size=2)
    with anyio.fail_after(10):
        async with served(server) as (client, _rec):
            ids = [(await client.call_tool_as_task("must")).task_id for _ in range(5)]
            assert len(set(ids)) == 5
            page, cursor = await client.list_tasks_page()
            assert len(page) == 2 and cursor is not None
            everything = await client.list_tasks()
            assert [t.task_id for t in everything] == ids
            for tid in ids:
                assert (await client.task(tid).status()).task_id == tid
            with pytest.raises(InvalidParams):
                await client.send_request("tasks/list", {"cursor": "garbage!"})
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                with pytest.raises(InvalidParams) as e:
                    await client.send_request(method, {"taskId": "no-such-task"})
                assert e.value.code == -32602


@pytest.mark.req("TASKS-TTL-IN-GET", "TASKS-MAX-TTL", "TASKS-CLEANUP-EXPIRED")
async def test_ttl_expiry_purges_the_task() -> None:
    server, _ = make_server(max_task_ttl=60)
    now = [1_700_000_000.0]
    server.tasks_manager.clock = lambda: now[0]  # the test moves time; nothing waits
    with anyio.fail_after(10):
        async with served(server) as (client, _rec):
            handle = await client.call_tool_as_task("must", ttl=10_000_000)
            assert handle.task.ttl == 60  # the server caps what it grants
            now[0] += 0.059
            assert (await handle.status()).task_id == handle.task_id  # not yet expired
            now[0] += 0.002
            with pytest.raises(InvalidParams):
                await handle.status()
            assert await client.list_tasks() == []


@pytest.mark.req(
    "TASKS-INPUT-REQUIRED-STATUS",
    "TASKS-INPUT-RELATED-META",
    "TASKS-INPUT-LEAVE",
    "TASKS-RELATED-ELICITATION",
    "TASKS-VALID-TRANSITIONS",
)
async def test_elicitation_moves_the_task_to_input_required_and_back() -> None:
    server, _ = make_server()
    asked = anyio.Event()
    release = anyio.Event()
    seen_meta: list[Any] = []

    async def on_elicit(params: Any, ctx: Any) -> Any:
        seen_meta.append(params.meta.model_dump(by_alias=True))
        asked.set()
        await release.wait()
        return {"action": "accept", "content": {}}

    with anyio.fail_after(10):
        async with served(server, elicitation_handler=on_elicit) as (client, recorder):
            handle = await client.call_tool_as_task("ask")
            await asked.wait()
            assert (await handle.status()).status == "input_required"
            release.set()
            result = await handle.result(timeout=5)
            assert result.content[0].text == "answer: accept"  # type: ignore[union-attr]
    assert seen_meta[0][RELATED] == {"taskId": handle.task_id}
    statuses = [params["status"] for params in _status_notifications(recorder)]
    assert statuses == ["input_required", "working", "completed"]


async def test_status_notification_wakes_the_waiting_handle() -> None:
    # A poll interval of a minute: only the notification can end the wait in time.
    server, state = make_server()
    server.tasks_manager.poll_interval = 60_000
    with anyio.fail_after(10):
        async with served(server) as (client, _rec):
            handle = await client.call_tool_as_task("job", {"n": 2})
            await state["started"].wait()
            state["gate"].set()
            with anyio.fail_after(3):
                result = await handle.result()
            assert result.content[0].text == "job 2 done"  # type: ignore[union-attr]


@pytest.mark.req("TASKS-ISOLATION")
async def test_tasks_are_private_to_their_session() -> None:
    server, state = make_server()
    with anyio.fail_after(10):
        async with served(server) as (alice, _r1), served(server) as (bob, _r2):
            handle = await alice.call_tool_as_task("job", {"n": 3})
            await state["started"].wait()
            tid = handle.task_id
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                with pytest.raises(InvalidParams) as e:
                    await bob.send_request(method, {"taskId": tid})
                assert "Unknown task" in e.value.message
            assert await bob.list_tasks() == []
            assert [t.task_id for t in await alice.list_tasks()] == [tid]
            state["gate"].set()
            assert (await handle.result(timeout=5)).content[0].text == "job 3 done"  # type: ignore[union-attr]


async def test_principal_owner_sees_tasks_across_sessions() -> None:
    server, _ = make_server(task_owner=lambda ctx: ctx.client_info.get("name"))
    # The server runs across the three sessions (as a real one does): its tasks outlive the
    # session that started them only while the server itself is up.
    with anyio.fail_after(10):
        async with server.running():
            async with served(server, client_info={"name": "alice", "version": "1"}) as (a, _r):
                tid = (await a.call_tool_as_task("must")).task_id
            async with served(server, client_info={"name": "alice", "version": "1"}) as (a2, _r):
                result = await a2.task(tid, "must").result(timeout=5)
                assert result.content[0].text == "ok"  # type: ignore[union-attr]
            async with served(server, client_info={"name": "mallory", "version": "1"}) as (m, _r):
                with pytest.raises(InvalidParams):
                    await m.task(tid).status()


@pytest.mark.req("TASKS-LIMIT-CONCURRENT")
async def test_running_tasks_per_owner_are_limited() -> None:
    server, state = make_server(max_tasks_per_owner=1)
    with anyio.fail_after(10):
        async with served(server) as (client, _rec):
            first = await client.call_tool_as_task("job", {"n": 1})
            await state["started"].wait()
            with pytest.raises(InvalidRequest) as e:
                await client.call_tool_as_task("must")
            assert e.value.data == {"maxTasks": 1}
            state["gate"].set()
            await first.wait(timeout=5)
            second = await client.call_tool_as_task("must")
            assert (await second.result(timeout=5)).content[0].text == "ok"  # type: ignore[union-attr]


@pytest.mark.req("TASKS-INPUT-CALL-RESULT")
async def test_the_handle_calls_tasks_result_when_input_is_required() -> None:
    # The elicitation is answered only once the client sent tasks/result: a handle that
    # kept polling tasks/get instead would never finish.
    server, _ = make_server()
    spies: list[SendSpy] = []

    def spy(transport: Any) -> SendSpy:
        spies.append(SendSpy(transport, "tasks/result"))
        return spies[-1]

    async def on_elicit(params: Any, ctx: Any) -> Any:
        await spies[0].events["tasks/result"].wait()
        return {"action": "accept", "content": {}}

    with anyio.fail_after(10):
        async with served(server, wrap=spy, elicitation_handler=on_elicit) as (client, _rec):
            handle = await client.call_tool_as_task("ask")
            result = await handle.result(timeout=5)
            assert result.content[0].text == "answer: accept"  # type: ignore[union-attr]


@pytest.mark.req("TASKS-RESPECT-POLL-INTERVAL")
async def test_the_handle_polls_at_the_suggested_interval() -> None:
    server, state = make_server()
    server.tasks_manager.poll_interval = 100
    with anyio.fail_after(10):
        async with served(server) as (client, recorder):
            handle = await client.call_tool_as_task("job", {"n": 4})
            await state["started"].wait()
            async with anyio.create_task_group() as tg:
                tg.start_soon(handle.wait)
                await anyio.sleep(0.35)  # a measuring window, not a synchronisation
                state["gate"].set()
            assert handle.task.status == "completed"
    gets = [
        r
        for r in recorder.messages
        if r.direction == "sent"
        and isinstance(r.message, dict)
        and r.message.get("method") == "tasks/get"
    ]
    # One poll at the start, about one per 100 ms, one after the completed notification.
    assert 2 <= len(gets) <= 7, len(gets)


@pytest.mark.req("TASKS-INPUT-REQUIRED-STATUS", "TASKS-INPUT-LEAVE", "TASKS-VALID-TRANSITIONS")
async def test_sampling_moves_the_task_to_input_required_and_back() -> None:
    server = Server("sampling-task", task_poll_interval=20)

    @server.tool(task_support="optional")
    async def think(ctx: Context) -> str:
        result = await ctx.sample("2+2?", max_tokens=5)
        return f"model: {result.content.text}"  # type: ignore[union-attr]

    asked = anyio.Event()
    release = anyio.Event()
    seen_meta: list[Any] = []

    async def on_sample(params: Any, ctx: Any) -> str:
        seen_meta.append(params.meta.model_dump(by_alias=True))
        asked.set()
        await release.wait()
        return "four"

    with anyio.fail_after(10):
        async with served(server, sampling_handler=on_sample) as (client, recorder):
            handle = await client.call_tool_as_task("think")
            await asked.wait()
            assert (await handle.status()).status == "input_required"
            release.set()
            result = await handle.result(timeout=5)
            assert result.content[0].text == "model: four"  # type: ignore[union-attr]
    assert seen_meta[0][RELATED] == {"taskId": handle.task_id}
    statuses = [params["status"] for params in _status_notifications(recorder)]
    assert statuses == ["input_required", "working", "completed"]


@pytest.mark.req("TASKS-FAILED-STATUS-MESSAGE", "TASKS-CANCEL-TRANSITION")
async def test_failed_and_cancelled_tasks_are_announced() -> None:
    server, state = make_server()
    with anyio.fail_after(10):
        async with served(server) as (client, recorder):
            failed = await client.call_tool_as_task("broken")
            await failed.wait(timeout=5)
            running = await client.call_tool_as_task("job", {"n": 5})
            await state["started"].wait()
            await running.cancel()
            await state["stopped"].wait()
            # Both announcements are in before a later request's answer.
            await client.ping()
    announced = {
        params["taskId"]: (params["status"], params.get("statusMessage"))
        for params in _status_notifications(recorder)
    }
    assert announced[failed.task_id][0] == "failed"
    assert "Error executing tool broken" in (announced[failed.task_id][1] or "")
    assert announced[running.task_id] == ("cancelled", "The task was cancelled by request.")


def test_task_settings_are_one_object_or_the_keywords_not_both() -> None:
    from mcpkit import MemoryTaskStore, Server, TaskSettings

    store = MemoryTaskStore()
    server = Server("s", tasks=TaskSettings(store=store, ttl=5_000, poll_interval=250))
    assert server.task_store is store
    assert server.tasks_manager.poll_interval == 250
    with pytest.raises(TypeError, match="either tasks=TaskSettings"):
        Server("s", tasks=TaskSettings(), task_ttl=5)
