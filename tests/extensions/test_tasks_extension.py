"""The tasks extension (io.modelcontextprotocol/tasks, 2026-07-28) over the real HTTP app.

Requests are built by hand (the wire is what is tested): a task-capable tool answers a
declaring client with a flat ``CreateTaskResult``; ``tasks/get`` inlines the result, the
error or the pending input requests; ``tasks/update`` answers them; ``tasks/cancel`` acks.
Polls are bounded (the protocol is a poll: the helper polls as a client does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from tests.stateless._stateless_helpers import check_sent, headers_for, meta, post, request

from mcpkit import Context, ProtocolError, Server, ToolError
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"
EXT_CAPS: dict[str, Any] = {"elicitation": {}, "extensions": {TASKS: {}}}
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def make_server(**kw: Any) -> tuple[Server, dict[str, anyio.Event]]:
    server = Server("taskext", task_poll_interval=10, **kw)
    gates = {"go": anyio.Event(), "started": anyio.Event()}

    @server.tool()
    def greet(name: str) -> str:
        """Never a task."""
        return f"Hello, {name}!"

    @server.tool(task_support="optional")
    async def gated(ctx: Context) -> str:
        """Runs until the test opens the gate."""
        gates["started"].set()
        await ctx.report_progress(1, 2, "half way")
        await gates["go"].wait()
        return "through the gate"

    @server.tool(task_support="required")
    async def fails() -> str:
        """A tool error: the task is completed, with isError."""
        raise ToolError("it broke")

    @server.tool(task_support="optional")
    async def crashes() -> str:
        """A protocol error: the task is failed, with the error."""
        raise ProtocolError(-31050, "crashed hard", {"why": "test"})

    @server.tool(task_support="optional")
    async def crashes_reserved() -> str:
        """A code 2026-07-28 reserves but does not define: the task fails with -32603."""
        raise ProtocolError(-32050, "quota exhausted", {"quota": "daily"})

    @server.tool(task_support="optional")
    async def two_questions(ctx: Context) -> str:
        """Asks two things at once."""
        a, b = await ctx.gather(ctx.elicit("A?", NAME), ctx.elicit("B?", NAME))
        return f"{(a.content or {}).get('name')}+{(b.content or {}).get('name')}"

    @server.tool(task_support="required", defer_task=True)
    async def ask_then_work(ctx: Context) -> str:
        """Asks in the request, then becomes a task."""
        answer = await ctx.elicit("Your name?", NAME, key="user_name")
        await ctx.begin_task()
        return f"worked for {(answer.content or {}).get('name')}"

    return server, gates


def call(name: str, args: dict[str, Any] | None = None, caps: Any = EXT_CAPS, **extra: Any) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": args or {}, **extra}
    return request("tools/call", params, caps=caps)


def tasks(method: str, caps: Any = EXT_CAPS, **params: Any) -> Any:
    return request(method, params, caps=caps)


async def result_of(http: ASGIClient, msg: Any) -> dict[str, Any]:
    # The tasks extension's methods and CreateTaskResult are not in the 2026-07-28 schema
    # (the tests check them); every other answer is schema-checked.
    answer = await post(http, msg, validate=False)
    result = answer.result
    method = msg["method"]
    if not method.startswith("tasks/") and result.get("resultType") != "task":
        check_sent(answer.response, msg)
    return result


async def error_of(http: ASGIClient, msg: Any, **headers: str) -> dict[str, Any]:
    answer = await post(http, msg, headers_for(msg, **headers) if headers else None, validate=False)
    assert "error" in answer.response, answer.response
    return answer.response["error"]  # type: ignore[no-any-return]


async def poll(
    http: ASGIClient, task_id: str, until: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """tasks/get until ``until(task)``, as a client polls (bounded)."""
    with anyio.fail_after(10):
        while True:
            task = await result_of(http, tasks("tasks/get", taskId=task_id))
            if until(task):
                return task
            await anyio.sleep(0.01)


def terminal(task: dict[str, Any]) -> bool:
    return task["status"] in ("completed", "failed", "cancelled")


async def test_a_task_capable_tool_answers_a_flat_task_and_tasks_get_inlines_its_result() -> None:
    server, gates = make_server()
    async with ASGIClient(server.http_app()) as http:
        created = await result_of(http, call("gated"))
        assert created["resultType"] == "task"
        assert created["status"] == "working" and isinstance(created["taskId"], str)
        assert "task" not in created and "result" not in created
        assert "requestState" not in created and "ttl" not in created
        assert "pollInterval" not in created
        assert type(created["ttlMs"]) is int and created["ttlMs"] > 0
        assert created["pollIntervalMs"] == 10
        assert created["createdAt"].endswith("Z")
        tid = created["taskId"]
        # Durable before answered: tasks/get finds it at once.
        working = await result_of(http, tasks("tasks/get", taskId=tid))
        assert working["taskId"] == tid and working["resultType"] == "complete"
        assert "result" not in working and "requestState" not in working
        await gates["started"].wait()
        gates["go"].set()
        done = await poll(http, tid, terminal)
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "through the gate"}]
    assert "io.modelcontextprotocol/related-task" not in (done["result"].get("_meta") or {})


async def test_a_tool_error_completes_with_is_error_and_a_protocol_error_fails() -> None:
    server, _ = make_server()
    async with ASGIClient(server.http_app()) as http:
        tool_error = await result_of(http, call("fails"))
        crash = await result_of(http, call("crashes"))
        reserved = await result_of(http, call("crashes_reserved"))
        done = await poll(http, tool_error["taskId"], terminal)
        failed = await poll(http, crash["taskId"], terminal)
        failed_reserved = await poll(http, reserved["taskId"], terminal)
    assert done["status"] == "completed" and done["result"]["isError"] is True
    assert done["result"]["content"][0]["text"] == "it broke"
    assert failed["status"] == "failed" and "result" not in failed
    assert failed["error"] == {"code": -31050, "message": "crashed hard", "data": {"why": "test"}}
    assert failed_reserved["status"] == "failed"
    assert failed_reserved["error"] == {
        "code": -32603,
        "message": "quota exhausted",
        "data": {"quota": "daily"},
    }


async def test_without_the_extension_tasks_are_refused_and_optional_tools_run_plainly() -> None:
    server, gates = make_server()
    gates["go"].set()
    async with ASGIClient(server.http_app()) as http:
        discovered = await result_of(http, request("server/discover"))
        assert discovered["capabilities"]["extensions"] == {TASKS: {}}
        assert "tasks" not in discovered["capabilities"]
        plain = await result_of(http, call("gated", caps={}))
        assert plain["resultType"] == "complete"
        assert plain["content"][0]["text"] == "through the gate"
        required = await error_of(http, call("fails", caps={}))
        assert required["code"] == -32021
        assert required["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
        for method, extra in (
            ("tasks/get", {}),
            ("tasks/cancel", {}),
            ("tasks/update", {"inputResponses": {}}),
        ):
            err = await error_of(http, tasks(method, caps={}, taskId="t1", **extra))
            assert err["code"] == -32021, (method, err)
        # The extension named in one request's _meta is enough for that request.
        opted = request("tools/call", {"name": "gated", "arguments": {}}, caps={})
        opted["params"]["_meta"] = meta({"extensions": {TASKS: {}}})
        assert (await result_of(http, opted))["resultType"] == "task"
        # The removed methods are not found; an unknown task is invalid params.
        for method in ("tasks/result", "tasks/list"):
            assert (await error_of(http, tasks(method, taskId="t1")))["code"] == -32601
        for method, extra in (
            ("tasks/get", {}),
            ("tasks/cancel", {}),
            ("tasks/update", {"inputResponses": {}}),
        ):
            err = await error_of(http, tasks(method, taskId="no-such-task", **extra))
            assert err["code"] == -32602, (method, err)


async def test_input_requests_wait_in_the_task_and_tasks_update_answers_them_one_by_one() -> None:
    server, _ = make_server()
    async with ASGIClient(server.http_app()) as http:
        tid = (await result_of(http, call("two_questions")))["taskId"]
        waiting = await poll(http, tid, lambda t: len(t.get("inputRequests") or {}) == 2)
        assert waiting["status"] == "input_required"
        first, second = waiting["inputRequests"]
        assert waiting["inputRequests"][first]["method"] == "elicitation/create"
        assert waiting["inputRequests"][first]["params"]["requestedSchema"] == NAME
        ack = await result_of(
            http,
            tasks(
                "tasks/update",
                taskId=tid,
                inputResponses={
                    first: {"action": "accept", "content": {"name": "Ann"}},
                    "nobody-asked": {"action": "accept", "content": {}},
                },
            ),
        )
        assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
        partial = await result_of(http, tasks("tasks/get", taskId=tid))
        assert partial["status"] == "input_required"
        assert list(partial["inputRequests"]) == [second]
        answer = {second: {"action": "accept", "content": {"name": "Bob"}}}
        await result_of(http, tasks("tasks/update", taskId=tid, inputResponses=answer))
        done = await poll(http, tid, terminal)
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] in ("Ann+Bob", "Bob+Ann")


async def test_a_malformed_answer_fails_the_tool_and_a_malformed_update_is_refused() -> None:
    server, _ = make_server()
    async with ASGIClient(server.http_app()) as http:
        tid = (await result_of(http, call("two_questions")))["taskId"]
        waiting = await poll(http, tid, lambda t: len(t.get("inputRequests") or {}) == 2)
        bad = await error_of(http, tasks("tasks/update", taskId=tid, inputResponses=["x"]))
        assert bad["code"] == -32602
        key = next(iter(waiting["inputRequests"]))
        wrong = {key: {"action": "maybe"}}
        await result_of(http, tasks("tasks/update", taskId=tid, inputResponses=wrong))
        failed = await poll(http, tid, terminal)
        # The server goes on serving.
        assert (await result_of(http, call("greet", {"name": "x"})))["content"][0][
            "text"
        ] == "Hello, x!"
    # The tool met the error where it asked (as over 2025-11-25): a failed tool run.
    assert failed["status"] == "completed" and failed["result"]["isError"] is True
    assert failed["result"]["content"][0]["text"] == "Error executing tool two_questions"


async def test_cancel_acks_settles_cancelled_and_is_idempotent() -> None:
    server, gates = make_server()
    async with ASGIClient(server.http_app()) as http:
        tid = (await result_of(http, call("gated")))["taskId"]
        await gates["started"].wait()
        ack = await result_of(http, tasks("tasks/cancel", taskId=tid))
        assert set(ack) == {"resultType", "_meta"} and ack["resultType"] == "complete"
        cancelled = await poll(http, tid, terminal)
        again = await result_of(http, tasks("tasks/cancel", taskId=tid))
        still = await result_of(http, tasks("tasks/get", taskId=tid))
    assert cancelled["status"] == "cancelled" and "result" not in cancelled
    assert set(again) == {"resultType", "_meta"}
    assert still["status"] == "cancelled"
    assert tid not in server.tasks_manager._live


async def test_tasks_methods_are_routed_by_task_id_and_a_mismatch_is_refused() -> None:
    server, gates = make_server()
    async with ASGIClient(server.http_app()) as http:
        tid = (await result_of(http, call("gated")))["taskId"]
        msg = tasks("tasks/get", taskId=tid)
        answer = await post(http, msg, headers_for(msg, mcp_name="another-task"), validate=False)
        assert answer.status == 400 and answer.response["error"]["code"] == -32020
        missing = await post(http, msg, headers_for(msg, mcp_name=None), validate=False)
        assert missing.status == 400 and missing.response["error"]["code"] == -32020
        gates["go"].set()
        await poll(http, tid, terminal)


async def test_a_deferred_tool_asks_in_the_request_then_goes_on_as_a_task() -> None:
    server, _ = make_server()
    async with ASGIClient(server.http_app()) as http:
        first = await result_of(http, call("ask_then_work"))
        assert first["resultType"] == "input_required" and "taskId" not in first
        assert list(first["inputRequests"]) == ["user_name"]
        retry = call(
            "ask_then_work",
            inputResponses={"user_name": {"action": "accept", "content": {"name": "Alice"}}},
            requestState=first["requestState"],
        )
        created = await result_of(http, retry)
        assert created["resultType"] == "task" and "requestState" not in created
        assert "inputRequests" not in created
        done = await poll(http, created["taskId"], terminal)
    assert done["result"]["content"][0]["text"] == "worked for Alice"


async def test_a_task_is_bound_to_its_owner() -> None:
    def owner(ctx: Context) -> str | None:
        info = ctx.http_request
        return info.headers.get("x-user") if info is not None else None

    server, gates = make_server(task_owner=owner)
    gates["go"].set()
    async with ASGIClient(server.http_app()) as http:
        msg = call("gated")
        created = (await post(http, msg, headers_for(msg, x_user="alice"), validate=False)).result
        get = tasks("tasks/get", taskId=created["taskId"])
        stranger = await post(http, get, headers_for(get, x_user="mallory"), validate=False)
        assert stranger.response["error"]["code"] == -32602
        mine = await post(http, get, headers_for(get, x_user="alice"), validate=False)
        assert mine.result["taskId"] == created["taskId"]


async def test_code_before_a_deferred_tasks_question_runs_once() -> None:
    server, _ = make_server()
    ran: list[str] = []

    @server.tool(task_support="required", defer_task=True)
    async def charge_then_work(ctx: Context) -> str:
        """Records, asks in the request, then becomes a task."""
        ran.append("charged")
        answer = await ctx.elicit("Your name?", NAME, key="user_name")
        await ctx.begin_task()
        return f"charged {(answer.content or {}).get('name')}"

    async with ASGIClient(server.http_app()) as http:
        first = await result_of(http, call("charge_then_work"))
        assert first["resultType"] == "input_required"
        retry = call(
            "charge_then_work",
            inputResponses={"user_name": {"action": "accept", "content": {"name": "Bo"}}},
            requestState=first["requestState"],
        )
        created = await result_of(http, retry)
        assert created["resultType"] == "task"
        done = await poll(http, created["taskId"], terminal)
    assert done["result"]["content"][0]["text"] == "charged Bo"
    assert ran == ["charged"]
