"""The client as task receiver: task-augmented sampling and elicitation from the server."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.tasks._helpers import served

from mcpkit import Context, Server

pytestmark = pytest.mark.anyio

RELATED = "io.modelcontextprotocol/related-task"


def make_server() -> Server:
    server = Server("asks-the-client")

    @server.tool()
    async def delegate(ctx: Context) -> dict[str, Any]:
        """Ask the client for a completion as a task, poll it, fetch the result."""
        caps = ctx.client_capabilities.get("tasks", {})
        created = await ctx.session.send_request(
            "sampling/createMessage",
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 10,
                "task": {"ttl": 60_000},
            },
            timeout=5,
        )
        tid = created["task"]["taskId"]
        seen = [created["task"]["status"]]
        listed = await ctx.session.send_request("tasks/list", None, timeout=5)
        result = await ctx.session.send_request("tasks/result", {"taskId": tid}, timeout=5)
        final = await ctx.session.send_request("tasks/get", {"taskId": tid}, timeout=5)
        seen.append(final["status"])
        return {
            "caps": caps,
            "seen": seen,
            "listed": [t["taskId"] for t in listed["tasks"]],
            "text": result["content"]["text"],
            "related": result["_meta"][RELATED]["taskId"] == tid,
        }

    @server.tool()
    async def cancel_elicitation(ctx: Context) -> str:
        created = await ctx.session.send_request(
            "elicitation/create",
            {
                "mode": "form",
                "message": "Wait forever?",
                "requestedSchema": {"type": "object", "properties": {}},
                "task": {},
            },
            timeout=5,
        )
        tid = created["task"]["taskId"]
        cancelled = await ctx.session.send_request("tasks/cancel", {"taskId": tid}, timeout=5)
        return str(cancelled["status"])

    @server.tool()
    async def sample_as_task(ctx: Context) -> str:
        result = await ctx.sample("hello", as_task=True, timeout=5)
        return f"{result.content.text}"  # type: ignore[union-attr]

    @server.tool(task_support="optional")
    async def nested(ctx: Context) -> str:
        answer = await ctx.elicit(
            "ok?", {"type": "object", "properties": {}}, as_task=True, timeout=5
        )
        return answer.action

    return server


async def test_context_sends_task_augmented_requests() -> None:
    async def sampling(params: Any, ctx: Any) -> Any:
        return "sampled as a task"

    async def elicit(params: Any, ctx: Any) -> Any:
        return {"action": "decline"}

    server = make_server()
    with anyio.fail_after(10):
        async with served(
            server, sampling_handler=sampling, elicitation_handler=elicit, accept_tasks=True
        ) as (client, recorder):
            result = await client.call_tool("sample_as_task")
            assert result.content[0].text == "sampled as a task"  # type: ignore[union-attr]
            # A tool running as a task asks as a task too; its own task waits meanwhile.
            handle = await client.call_tool_as_task("nested")
            assert (await handle.result(timeout=5)).content[0].text == "decline"  # type: ignore[union-attr]
    sent_by_server = [
        r.message
        for r in recorder.messages
        if r.direction == "received" and isinstance(r.message, dict) and "method" in r.message
    ]
    creates = [
        m for m in sent_by_server if m["method"] in ("sampling/createMessage", "elicitation/create")
    ]
    assert [m["params"]["task"] for m in creates] == [{}, {}]
    assert creates[1]["params"]["_meta"][RELATED] == {"taskId": handle.task_id}
    assert any(m["method"] == "tasks/result" for m in sent_by_server)
    statuses = [
        m["params"]["status"] for m in sent_by_server if m["method"] == "notifications/tasks/status"
    ]
    assert statuses[:2] == ["input_required", "working"]


async def test_without_client_support_as_task_is_a_plain_request() -> None:
    server = make_server()
    with anyio.fail_after(10):
        async with served(server, sampling_handler=lambda p, c: "plain") as (client, recorder):
            result = await client.call_tool("sample_as_task")
            assert result.content[0].text == "plain"  # type: ignore[union-attr]
    creates = [
        r.message
        for r in recorder.messages
        if r.direction == "received"
        and isinstance(r.message, dict)
        and r.message.get("method") == "sampling/createMessage"
    ]
    assert "task" not in creates[0]["params"]


async def test_client_runs_task_augmented_sampling_and_elicitation() -> None:
    release, entered = anyio.Event(), anyio.Event()

    async def sampling(params: Any, ctx: Any) -> Any:
        entered.set()
        await release.wait()
        return "sampled"

    never = anyio.Event()

    async def elicit(params: Any, ctx: Any) -> Any:
        await never.wait()

    server = make_server()
    with anyio.fail_after(10):
        async with served(
            server, sampling_handler=sampling, elicitation_handler=elicit, accept_tasks=True
        ) as (client, _rec):
            caps = client.capabilities()["tasks"]
            assert caps["requests"] == {
                "sampling": {"createMessage": {}},
                "elicitation": {"create": {}},
            }
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    result = await client.call_tool("delegate")
                    box.append(result.structured_content)

                box: list[Any] = []
                tg.start_soon(call)
                # The server has the task as "working" and waits for its result: everything
                # here runs in this loop, so that is once the sampling runs and all tasks wait.
                await entered.wait()
                await anyio.wait_all_tasks_blocked()
                release.set()
            out = box[0]
            assert out["seen"] == ["working", "completed"]
            assert out["text"] == "sampled" and out["related"] is True
            assert len(out["listed"]) == 1
            assert (await client.call_tool("cancel_elicitation")).content[0].text == "cancelled"  # type: ignore[union-attr]


async def test_without_opt_in_the_client_declares_no_tasks() -> None:
    server = make_server()
    with anyio.fail_after(10):
        async with served(server, sampling_handler=lambda p, c: "x") as (client, _rec):
            assert "tasks" not in client.capabilities()
