"""The Context: progress, elicitation (form and URL), sampling (with tools), roots, lifespan."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import AsyncIterator
from enum import Enum
from typing import Any

import anyio
import pytest
from pydantic import BaseModel
from tests.server._harness import connect

from mcpkit import Context, ElicitationResult, Server
from mcpkit.types import ToolUseContent

pytestmark = pytest.mark.anyio


class Color(str, Enum):
    red = "red"
    blue = "blue"


class Order(BaseModel):
    item: str
    quantity: int = 1
    color: Color = Color.red
    gift: bool | None = None


def context_server() -> Server:
    server = Server("ctx")

    @server.tool()
    async def progress(ctx: Context) -> str:
        """Reports progress."""
        for i in range(3):
            await ctx.report_progress(i + 1, 3, f"step {i + 1}")
        return "done"

    @server.tool()
    async def order(ctx: Context) -> str:
        """Typed form elicitation."""
        answer: ElicitationResult[Order] = await ctx.elicit("What do you want?", Order)
        if answer.data is None:
            return answer.action
        return (
            f"{answer.action}:{answer.data.item}:{answer.data.quantity}:{answer.data.color.value}"
        )

    @server.tool()
    async def url(ctx: Context) -> str:
        """URL elicitation."""
        r = await ctx.elicit_url("Sign in", "https://example.com/login", elicitation_id="e-1")
        if r.accepted:
            await ctx.complete_elicitation("e-1")
        return r.action

    @server.tool()
    async def sample(ctx: Context) -> str:
        """Sampling with tools."""
        r = await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "add 1 and 2"}}],
            max_tokens=50,
            system_prompt="be brief",
            tools=["adder"],
            tool_choice="required",
        )
        blocks = r.content if isinstance(r.content, list) else [r.content]
        use = next(b for b in blocks if isinstance(b, ToolUseContent))
        return f"{r.model}:{use.name}:{use.input}"

    @server.tool()
    def adder(a: int, b: int) -> int:
        """Adds."""
        return a + b

    @server.tool()
    async def roots(ctx: Context) -> list[str]:
        """The client's roots."""
        return [r.uri for r in await ctx.list_roots()]

    @server.tool()
    async def reads(ctx: Context) -> str:
        """Reads a resource of this server."""
        contents = await ctx.read_resource("mem://note")
        return str(getattr(contents[0], "text", ""))

    @server.resource("mem://note")
    def note() -> str:
        return "remember"

    return server


async def test_progress_notifications() -> None:
    server = context_server()
    got: list[Any] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        got.append((progress, total, message))

    async with connect(server) as c:
        await c.call("tools/call", {"name": "progress", "arguments": {}}, on_progress=on_progress)
        # Without a progress token nothing is sent.
        await c.tool("progress")
    assert got == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.req("ELICIT-SERVER-VALIDATE-RESPONSES")
async def test_typed_form_elicitation() -> None:
    server = context_server()
    requests: list[Any] = []
    answers = iter(
        [
            {"action": "accept", "content": {"item": "pen", "quantity": 3, "color": "blue"}},
            {"action": "decline"},
            {"action": "accept", "content": {"item": "pen", "quantity": "lots"}},
        ]
    )

    async def elicit(ctx: Any, params: Any) -> Any:
        requests.append(params)
        return next(answers)

    async with connect(
        server, capabilities={"elicitation": {}}, handlers={"elicitation/create": elicit}
    ) as c:
        assert (await c.tool("order"))["content"][0]["text"] == "accept:pen:3:blue"
        assert (await c.tool("order"))["content"][0]["text"] == "decline"
        bad = await c.tool("order")
        assert bad["isError"] is True and "does not match" in bad["content"][0]["text"]
    schema = requests[0]["requestedSchema"]
    assert requests[0]["mode"] == "form" and requests[0]["message"] == "What do you want?"
    assert schema["properties"]["color"]["enum"] == ["red", "blue"]
    assert schema["properties"]["gift"]["type"] == "boolean"
    assert schema["required"] == ["item"]
    assert "$ref" not in str(schema) and "$defs" not in schema


async def test_url_elicitation_and_completion_notification() -> None:
    server = context_server()
    seen: list[Any] = []

    async def elicit(ctx: Any, params: Any) -> Any:
        seen.append(params)
        return {"action": "accept"}

    caps = {"elicitation": {"form": {}, "url": {}}}
    async with connect(server, capabilities=caps, handlers={"elicitation/create": elicit}) as c:
        assert (await c.tool("url"))["content"][0]["text"] == "accept"
        done = await c.wait_for("notifications/elicitation/complete")
    assert seen == [
        {
            "mode": "url",
            "message": "Sign in",
            "url": "https://example.com/login",
            "elicitationId": "e-1",
        }
    ]
    assert done == [{"elicitationId": "e-1"}]


async def test_sampling_with_tools() -> None:
    server = context_server()
    seen: list[Any] = []

    async def sampling(ctx: Any, params: Any) -> Any:
        seen.append(params)
        return {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "u1", "name": "adder", "input": {"a": 1, "b": 2}}
            ],
            "model": "test-model",
            "stopReason": "toolUse",
        }

    caps = {"sampling": {"tools": {}}}
    async with connect(
        server, capabilities=caps, handlers={"sampling/createMessage": sampling}
    ) as c:
        r = await c.tool("sample")
    assert r["content"][0]["text"] == "test-model:adder:{'a': 1, 'b': 2}"
    assert seen[0]["tools"][0]["name"] == "adder"
    assert seen[0]["tools"][0]["inputSchema"]["required"] == ["a", "b"]
    assert seen[0]["toolChoice"] == {"mode": "required"}
    assert seen[0]["systemPrompt"] == "be brief" and seen[0]["maxTokens"] == 50


@pytest.mark.req("ELICIT-SERVER-SUPPORTED-MODES-ONLY", "SAMPLING-SERVER-TOOLS-NEED-CAPABILITY")
async def test_missing_client_capabilities_give_clear_errors() -> None:
    server = context_server()
    async with connect(server, capabilities={"sampling": {}, "elicitation": {}}) as c:
        for tool, words in (
            ("sample", "sampling.tools"),
            ("roots", "'roots'"),
            ("url", "URL-mode"),
        ):
            r = await c.tool(tool)
            assert r["isError"] is True, tool
            assert words in r["content"][0]["text"], r
    async with connect(server) as c:
        r = await c.tool("order")
        assert r["isError"] is True and "'elicitation'" in r["content"][0]["text"]
        assert (await c.tool("reads"))["content"][0]["text"] == "remember"


async def test_roots_and_roots_changed_hook() -> None:
    server = context_server()
    hook_saw: list[list[str]] = []
    hook_done = anyio.Event()

    @server.on_roots_changed()
    async def changed(ctx: Context) -> None:
        hook_saw.append([r.uri for r in await ctx.list_roots()])
        hook_done.set()

    roots = [{"uri": "file:///a", "name": "a"}]

    async def list_roots(ctx: Any, params: Any) -> Any:
        return {"roots": roots}

    caps = {"roots": {"listChanged": True}}
    async with connect(server, capabilities=caps, handlers={"roots/list": list_roots}) as c:
        assert (await c.tool("roots"))["structuredContent"] == {"result": ["file:///a"]}
        roots.append({"uri": "file:///b"})
        await c.client.notify("notifications/roots/list_changed")
        with anyio.fail_after(5):
            await hook_done.wait()
    assert hook_saw == [["file:///a", "file:///b"]]


async def test_lifespan_entered_once_and_reachable() -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
        events.append("start")
        yield {"db": "connected"}
        events.append("stop")

    server = Server("life", lifespan=lifespan)

    @server.tool()
    def state(ctx: Context) -> str:
        """Lifespan state from a sync tool."""
        return str(ctx.lifespan_state["db"])

    async with connect(server) as a, connect(server) as b:
        assert (await a.tool("state"))["content"][0]["text"] == "connected"
        assert (await b.tool("state"))["content"][0]["text"] == "connected"
        assert events == ["start"]
    assert events == ["start", "stop"]
    assert server.lifespan_state is None


async def test_sync_tool_can_use_async_context_methods() -> None:
    server = Server("sync-ctx")

    @server.tool()
    def sync_logs(ctx: Context) -> str:
        """Logs from a worker thread through anyio.from_thread."""
        anyio.from_thread.run(ctx.info, "from a sync tool")
        return "ok" if not ctx.cancelled else "cancelled"

    async with connect(server) as c:
        assert (await c.tool("sync_logs"))["content"][0]["text"] == "ok"
        assert await c.wait_for("notifications/message") == [
            {"level": "info", "data": "from a sync tool"}
        ]


async def test_session_enters_the_lifespan_when_its_transport_did_not() -> None:
    from mcpkit._session import ClientSession
    from mcpkit._transports import memory_pair

    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        events.append("start")
        yield "state"
        events.append("stop")

    server = Server("bare", lifespan=lifespan)

    @server.tool()
    async def state(ctx: Context) -> str:
        """The lifespan state."""
        return str(ctx.lifespan_state)

    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.create_session(server_end).run)
        async with ClientSession(client_end, client_info={"name": "c", "version": "1"}) as client:
            with anyio.fail_after(5):
                await client.initialize()
                r = await client.send_request("tools/call", {"name": "state", "arguments": {}})
        assert r["content"][0]["text"] == "state"
        await server_end.aclose()
    assert events == ["start", "stop"]


async def test_elicitation_form_must_be_flat() -> None:
    class Inner(BaseModel):
        x: int

    class Nested(BaseModel):
        inner: Inner

    server = Server("flat")

    @server.tool()
    async def nested(ctx: Context) -> str:
        """Asks with a nested model."""
        await ctx.elicit("?", Nested)
        return "unreachable"

    async with connect(server, capabilities={"elicitation": {}}) as c:
        r = await c.tool("nested")
    assert r["isError"] is True
    assert r["content"][0]["text"] == "Error executing tool nested"


async def test_lifespan_entered_once_when_sessions_start_together() -> None:
    starts: list[int] = []
    release = anyio.Event()

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        starts.append(1)
        await release.wait()  # a slow start: the other session must wait for it
        yield "ready"

    server = Server("together", lifespan=lifespan)
    seen: list[Any] = []

    async def user() -> None:
        async with server.running():
            seen.append(server.lifespan_state)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(user)
            tg.start_soon(user)
            await anyio.wait_all_tasks_blocked()
            release.set()
    assert starts == [1]
    assert seen == ["ready", "ready"]
    assert server.lifespan_state is None


def test_form_answers_are_checked_against_dict_schemas() -> None:
    from mcpkit._server._asking import check_form_answer

    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "score": {"type": "number"},
            "ok": {"type": "boolean"},
            "color": {"type": "string", "enum": ["red", "blue"]},
            "size": {
                "type": "string",
                "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            },
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        },
        "required": ["name"],
    }
    good = {
        "name": "x",
        "age": 3,
        "score": 1,
        "ok": False,
        "color": "red",
        "size": "l",
        "tags": ["a"],
    }
    assert check_form_answer(schema, good) == []
    bad = {"age": "3", "score": True, "ok": 1, "color": "green", "size": "m", "tags": ["c"]}
    problems = check_form_answer(schema, bad)
    assert len(problems) == 7, problems
    assert problems[0] == "`name` is required"


@pytest.mark.req("ELICIT-SERVER-VALIDATE-RESPONSES")
async def test_dict_schema_elicitation_answers_are_validated() -> None:
    server = Server("dict-form")

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Dict-schema elicitation."""
        schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
        answer = await ctx.elicit("n?", schema)
        return str(answer.data)

    answers = iter(
        [{"action": "accept", "content": {"n": 2}}, {"action": "accept", "content": {"n": "two"}}]
    )

    async def elicit(ctx: Any, params: Any) -> Any:
        return next(answers)

    async with connect(
        server, capabilities={"elicitation": {}}, handlers={"elicitation/create": elicit}
    ) as c:
        assert (await c.tool("ask"))["content"][0]["text"] == "{'n': 2}"
        bad = await c.tool("ask")
        assert (
            bad["isError"] is True and "`n` should be of type integer" in bad["content"][0]["text"]
        )


@pytest.mark.req("SAMPLING-SERVER-ANSWER-EVERY-TOOL-USE")
async def test_sampling_tool_results_must_answer_every_tool_use() -> None:
    server = Server("tool-loop")

    @server.tool()
    async def wrong(ctx: Context) -> str:
        """Answers a tool use with mixed content."""
        await ctx.sample(
            [
                "add 1 and 2",
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "u1", "name": "add", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "toolUseId": "u1", "content": []},
                        {"type": "text", "text": "extra"},
                    ],
                },
            ],
            tools=[{"name": "add", "inputSchema": {"type": "object"}}],
        )
        return "sent"

    @server.tool()
    async def unanswered(ctx: Context) -> str:
        """Leaves a tool use unanswered."""
        await ctx.sample(
            [
                "add",
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "u1", "name": "add", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "toolUseId": "u2", "content": []}],
                },
            ],
            tools=[{"name": "add", "inputSchema": {"type": "object"}}],
        )
        return "sent"

    sent: list[Any] = []

    async def sampling(ctx: Any, params: Any) -> Any:
        sent.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}

    caps = {"sampling": {"tools": {}}}
    async with connect(
        server, capabilities=caps, handlers={"sampling/createMessage": sampling}
    ) as c:
        r = await c.tool("wrong")
        assert r["isError"] is True
        r = await c.tool("unanswered")
        assert r["isError"] is True
    assert sent == []


@pytest.mark.req("SAMPLING-TOOL-LOOP-LIMIT", "SAMPLING-SERVER-ANSWER-EVERY-TOOL-USE")
async def test_sample_with_tools_runs_the_loop() -> None:
    server = Server("loop")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    @server.tool()
    async def solve(question: str, ctx: Context) -> str:
        """Lets the model use `add`."""
        result = await ctx.sample_with_tools(question, tools=["add"], max_rounds=3)
        return str(getattr(result.content, "text", ""))

    @server.tool()
    async def forever(ctx: Context) -> str:
        """The model never stops asking."""
        await ctx.sample_with_tools("loop", tools=["add"], max_rounds=2)
        return "unreachable"

    seen: list[Any] = []

    async def sampling(ctx: Any, params: Any) -> Any:
        seen.append(params["messages"])
        last = params["messages"][-1]
        if params["messages"][0]["content"]["text"] == "loop" or (
            last["role"] == "user" and not isinstance(last["content"], list)
        ):
            return {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"u{len(seen)}",
                        "name": "add",
                        "input": {"a": 2, "b": 3},
                    }
                ],
                "model": "m",
                "stopReason": "toolUse",
            }
        result = last["content"][0]
        return {
            "role": "assistant",
            "content": {"type": "text", "text": f"it is {result['structuredContent']['result']}"},
            "model": "m",
        }

    caps = {"sampling": {"tools": {}}}
    async with connect(
        server, capabilities=caps, handlers={"sampling/createMessage": sampling}
    ) as c:
        assert (await c.tool("solve", {"question": "2+3?"}))["content"][0]["text"] == "it is 5"
        assert [m["role"] for m in seen[-1]] == ["user", "assistant", "user"]
        r = await c.tool("forever")
        assert r["isError"] is True and "after 2 rounds" in r["content"][0]["text"]


@pytest.mark.req("CANCEL-RECEIVER-NO-RESPONSE", "CANCEL-RECEIVER-STOP-PROCESSING")
async def test_a_sync_tool_sees_the_cancellation_through_ctx_cancelled() -> None:
    # Issue 3, Context: "cancellation state". A sync tool cannot be interrupted in its worker
    # thread; it polls ctx.cancelled, which turns true when notifications/cancelled arrives.
    server = Server("sync-cancel")
    started = threading.Event()
    saw_cancel = threading.Event()

    @server.tool()
    def poll(ctx: Context) -> str:
        """Works until cancelled (10 s at most)."""
        started.set()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if ctx.cancelled:
                saw_cancel.set()
                return "stopped"
            time.sleep(0.005)
        return "never cancelled"

    @server.tool()
    def echo_ctx(ctx: Context) -> str:
        """A request nobody cancels."""
        return str(ctx.cancelled)

    async with connect(server) as c:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await c.tool("poll")

                tg.start_soon(call)
                assert await anyio.to_thread.run_sync(started.wait, 5)
                tg.cancel_scope.cancel()  # the client sends notifications/cancelled
            assert await anyio.to_thread.run_sync(saw_cancel.wait, 5)
            # The server still serves, and it sent no response for the cancelled call.
            assert (await c.tool("echo_ctx"))["content"][0]["text"] == "False"
            await anyio.sleep(0.1)  # room for a wrongly sent late response to arrive
        (cancel,) = [m for m in c.recorder.sent if m.get("method") == "notifications/cancelled"]
        cancelled_id = cancel["params"]["requestId"]
        assert not [m for m in c.recorder.received if m.get("id") == cancelled_id]
