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

    return server


async def test_client_runs_task_augmented_sampling_and_elicitation() -> None:
    release = anyio.Event()

    async def sampling(params: Any, ctx: Any) -> Any:
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
                await anyio.sleep(0.05)
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
