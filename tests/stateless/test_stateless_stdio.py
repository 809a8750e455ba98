"""``examples/everything.py`` over stdio (``mcpkit run``), spoken to at revision 2026-07-28.

A real subprocess: discovery, input rounds answered by the client's handlers, the log level
per request, ``subscriptions/listen`` on the one pipe, and methods the revision removed.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from _stateless_helpers import EVERYTHING, ROOT, TIMEOUT, meta

from mcpkit._exceptions import MethodNotFound, MissingRequiredClientCapability
from mcpkit.lowlevel import ClientSession, spawn_stdio

pytestmark = pytest.mark.anyio

RUN = [sys.executable, "-c", "import sys; from mcpkit._cli import main; sys.exit(main())", "run"]
SUB_ID = "io.modelcontextprotocol/subscriptionId"


async def test_the_example_at_2026_over_stdio() -> None:
    stderr: list[str] = []
    notes: list[tuple[str, Any]] = []
    acked, changed = anyio.Event(), anyio.Event()

    async def elicit(ctx: Any, params: Any) -> Any:
        return {"action": "accept", "content": {"name": "Ada"}}

    async def sample(ctx: Any, params: Any) -> Any:
        return {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m"}

    async def roots(ctx: Any, params: Any) -> Any:
        return {"roots": [{"uri": "file:///home/ada", "name": "home"}]}

    def recorder(method: str, event: anyio.Event | None = None) -> Any:
        async def record(params: Any) -> None:
            notes.append((method, params))
            if event is not None:
                event.set()

        return record

    with anyio.fail_after(TIMEOUT):
        async with (
            spawn_stdio(
                RUN[0], [*RUN[1:], str(EVERYTHING)], cwd=ROOT, on_stderr=stderr.append
            ) as t,
            ClientSession(
                t,
                client_info={"name": "stdio-2026", "version": "1"},
                capabilities={"elicitation": {}, "sampling": {}, "roots": {}},
                handlers={
                    "elicitation/create": elicit,
                    "sampling/createMessage": sample,
                    "roots/list": roots,
                },
                notification_handlers={
                    "notifications/message": recorder("message"),
                    "notifications/subscriptions/acknowledged": recorder("ack", acked),
                    "notifications/tools/list_changed": recorder("tools", changed),
                    "notifications/elicitation/complete": recorder("complete"),
                },
            ) as session,
        ):
            found = await session.discover()
            assert (
                found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpkit-everything"
            )
            assert session.stateless

            # Three questions in one round, answered by the handlers, then the result.
            done = await session.send_request(
                "tools/call", {"name": "test_input_required_result_multiple_inputs"}
            )
            assert done["content"][0]["text"] == "Hi Ada (1 root(s))"

            # Log messages only once the request asks for them (the pipe keeps their order
            # ahead of the response, so "none yet" is final).
            await session.send_request("tools/call", {"name": "test_logging_tool"})
            assert [n for n in notes if n[0] == "message"] == []
            session.log_level = "info"
            await session.send_request("tools/call", {"name": "test_logging_tool"})
            levels = [p["level"] for kind, p in notes if kind == "message"]
            assert levels == ["info", "warning"]
            session.log_level = None

            # URL mode: no elicitationId, and no completion notification (2026-07-28 removed
            # both; the retry is how the client learns the outcome).
            session.capabilities = {**session.capabilities, "elicitation": {"form": {}, "url": {}}}
            linked = await session.send_request("tools/call", {"name": "connect_account"})
            assert linked["content"][0]["text"] == "url elicitation: accept"
            assert [kind for kind, _ in notes if kind == "complete"] == []

            # A listen stream on the same pipe: acknowledged, then tagged change notifications.
            listen_id: list[Any] = []

            async def listen() -> None:
                await session.engine.request(
                    "subscriptions/listen",
                    {"_meta": meta(), "notifications": {"toolsListChanged": True}},
                    timeout=None,
                )

            async with anyio.create_task_group() as tg:
                tg.start_soon(listen)
                await acked.wait()
                ack = next(p for kind, p in notes if kind == "ack")
                listen_id.append(ack["_meta"][SUB_ID])
                await session.send_request("tools/call", {"name": "test_trigger_tool_change"})
                await changed.wait()
                # Cancelling the request ends the stream (notifications/cancelled on stdio).
                tg.cancel_scope.cancel()
            tools = next(p for kind, p in notes if kind == "tools")
            assert tools["_meta"][SUB_ID] == listen_id[0]

            # What the revision removed, or what the client cannot do, is refused.
            with pytest.raises(MethodNotFound):
                await session.engine.request("logging/setLevel", {"level": "info", "_meta": meta()})
            with pytest.raises(MissingRequiredClientCapability) as refused:
                await session.engine.request(
                    "tools/call", {"name": "test_missing_capability", "_meta": meta()}
                )
            assert refused.value.required_capabilities == {"sampling": {}}
