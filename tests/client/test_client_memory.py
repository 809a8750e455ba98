"""The Client against servers written on the session layer, in memory, wire-validated."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.client._helpers import ADD_TOOL, session_server, text_result

from mcpkit import Client
from mcpkit._exceptions import (
    CapabilityError,
    ConnectionClosed,
    InvalidParams,
    InvalidResponse,
    RequestTimeout,
)
from mcpkit._session import RequestContext
from mcpkit.types import (
    CallToolResult,
    PromptReference,
    TextContent,
)

pytestmark = pytest.mark.anyio


async def list_add(ctx: RequestContext, params: Any) -> Any:
    return {"tools": [ADD_TOOL]}


async def call_add(ctx: RequestContext, params: Any) -> Any:
    a = params["arguments"]
    s = a["a"] + a["b"]
    return {"content": [{"type": "text", "text": str(s)}], "structuredContent": {"sum": s}}


# ---------------------------------------------------------------- connect and basics


async def test_connect_initialize_and_server_info() -> None:
    async with session_server({}, {"tools": {}}, instructions="be nice") as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                assert client.server_info.name == "test-server"
                assert client.protocol_version == "2025-11-25"
                assert client.instructions == "be nice"
                assert client.server_capabilities.tools is not None
                await client.ping()
        assert srv.sent_methods()[:2] == ["initialize", "notifications/initialized"]
        init = srv.wire.sent[0]
        assert init["params"]["clientInfo"]["name"] == "mcpkit"
        assert init["params"]["capabilities"] == {}
        srv.wire.check()


async def test_call_tool_typed_result_and_output_schema_ok() -> None:
    async with session_server({"tools/list": list_add, "tools/call": call_add}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                result = await client.call_tool("add", {"a": 2, "b": 3})
                assert isinstance(result, CallToolResult)
                assert result.structured_content == {"sum": 5}
                assert isinstance(result.content[0], TextContent)
                assert result.content[0].text == "5"
                # The schema was learned once; further calls do not list again.
                await client.call_tool("add", {"a": 1, "b": 1})
        assert srv.sent_methods().count("tools/list") == 1
        srv.wire.check()


@pytest.mark.req("TOOLS-CLIENT-VALIDATE-STRUCTURED")
@pytest.mark.parametrize(
    "result, message",
    [
        ({"content": [], "structuredContent": {"sum": "five"}}, "violates its outputSchema"),
        ({"content": [], "structuredContent": {}}, "missing required property 'sum'"),
        ({"content": [{"type": "text", "text": "5"}]}, "has no structuredContent"),
    ],
)
async def test_structured_content_violating_output_schema_is_rejected(
    result: Any, message: str
) -> None:
    async def call(ctx: RequestContext, params: Any) -> Any:
        return result

    async with session_server({"tools/list": list_add, "tools/call": call}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                with pytest.raises(InvalidResponse, match=message):
                    await client.call_tool("add", {"a": 1, "b": 2})
                # The connection is still fine after the bad result.
                await client.ping()


async def test_validation_can_be_turned_off_and_errors_are_not_validated() -> None:
    answers = [
        {"content": [], "structuredContent": {"sum": "five"}},
        {"content": [{"type": "text", "text": "boom"}], "isError": True},
    ]

    async def call(ctx: RequestContext, params: Any) -> Any:
        return answers.pop(0)

    async with session_server({"tools/list": list_add, "tools/call": call}) as srv:
        with anyio.fail_after(5):
            async with Client(
                srv.wire, protocol_version="2025-11-25", validate_output=False
            ) as client:
                r = await client.call_tool("add", {"a": 1, "b": 2})
                assert r.structured_content == {"sum": "five"}
                # An error result is returned as such, whatever the schema says.
                client.validate_output = True
                r = await client.call_tool("add", {"a": 1, "b": 2})
                assert r.is_error is True
                assert r.content[0].text == "boom"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "bad",
    [
        {"content": "not a list"},
        {"structuredContent": {}},
        {"content": [{"type": "text"}]},
        [1, 2],
        None,
    ],
)
async def test_malformed_result_is_a_clear_error_and_connection_survives(bad: Any) -> None:
    async def call(ctx: RequestContext, params: Any) -> Any:
        if params["name"] == "bad":
            return bad
        return text_result("fine")

    async def tools(ctx: RequestContext, params: Any) -> Any:
        return {"tools": []}

    async with session_server({"tools/list": tools, "tools/call": call}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                with pytest.raises(InvalidResponse, match="malformed tools/call result"):
                    await client.call_tool("bad")
                ok = await client.call_tool("good")
                assert ok.content[0].text == "fine"  # type: ignore[union-attr]


async def test_tool_error_result_and_protocol_error() -> None:
    async def call(ctx: RequestContext, params: Any) -> Any:
        if params["name"] == "missing":
            raise InvalidParams(message="Unknown tool: missing")
        return {"content": [{"type": "text", "text": "failed"}], "isError": True}

    async def tools(ctx: RequestContext, params: Any) -> Any:
        return {"tools": []}

    async with session_server({"tools/list": tools, "tools/call": call}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                r = await client.call_tool("x")
                assert r.is_error is True
                with pytest.raises(InvalidParams, match="Unknown tool") as ei:
                    await client.call_tool("missing")
                assert ei.value.code == -32602


@pytest.mark.req("LIFECYCLE-ONLY-NEGOTIATED-CAPABILITIES")
async def test_undeclared_server_capability_fails_locally() -> None:
    async with session_server({}, {"tools": {}}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                with pytest.raises(CapabilityError, match="prompts"):
                    await client.list_prompts()
                with pytest.raises(CapabilityError, match="logging"):
                    await client.set_logging_level("info")
        assert "prompts/list" not in srv.sent_methods()


# ---------------------------------------------------------------- pagination and caches


def paged(items: list[dict[str, Any]], key: str, size: int = 2) -> Any:
    async def handler(ctx: RequestContext, params: Any) -> Any:
        start = int((params or {}).get("cursor") or 0)
        page: dict[str, Any] = {key: items[start : start + size]}
        if start + size < len(items):
            page["nextCursor"] = str(start + size)
        return page

    return handler


@pytest.mark.req("PAGINATION-CLIENT-NO-FIXED-PAGE-SIZE", "PAGINATION-CLIENT-OPAQUE-CURSOR")
async def test_list_everything_follows_cursors() -> None:
    tools = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(5)]
    resources = [{"uri": f"mem://r{i}", "name": f"r{i}"} for i in range(3)]
    templates = [{"uriTemplate": "mem://t/{x}", "name": "t"}]
    prompts = [{"name": f"p{i}"} for i in range(4)]
    handlers = {
        "tools/list": paged(tools, "tools"),
        "resources/list": paged(resources, "resources"),
        "resources/templates/list": paged(templates, "resourceTemplates"),
        "prompts/list": paged(prompts, "prompts", size=3),
    }
    caps = {"tools": {}, "resources": {}, "prompts": {}}
    async with session_server(handlers, caps) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                assert [t.name for t in await client.list_tools()] == [f"t{i}" for i in range(5)]
                assert [r.uri for r in await client.list_resources()] == [
                    f"mem://r{i}" for i in range(3)
                ]
                assert [t.uri_template for t in await client.list_resource_templates()] == [
                    "mem://t/{x}"
                ]
                assert [p.name for p in await client.list_prompts()] == [f"p{i}" for i in range(4)]
                page = await client.list_tools_page()
                assert [t.name for t in page.tools] == ["t0", "t1"] and page.next_cursor == "2"
                page2 = await client.list_tools_page(page.next_cursor)
                assert [t.name for t in page2.tools] == ["t2", "t3"]
        cursors = [
            m["params"]["cursor"]
            for m in srv.wire.sent
            if m.get("method") == "tools/list" and m.get("params")
        ]
        assert cursors == ["2", "4", "2"]  # sent back exactly as received
        srv.wire.check()


async def test_pagination_loop_is_detected() -> None:
    async def loop(ctx: RequestContext, params: Any) -> Any:
        return {"tools": [], "nextCursor": "same"}

    async with session_server({"tools/list": loop}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                with pytest.raises(InvalidResponse, match="repeated the cursor"):
                    await client.list_tools()


async def test_lists_cached_while_server_announces_changes_and_invalidated() -> None:
    version = {"n": 1}
    changed: list[str] = []
    got_change = anyio.Event()

    async def tools(ctx: RequestContext, params: Any) -> Any:
        return {"tools": [{"name": f"v{version['n']}", "inputSchema": {"type": "object"}}]}

    # async: a plain function runs in a worker thread, where setting an anyio.Event is unsafe
    async def on_change(kind: str) -> None:
        changed.append(kind)
        got_change.set()

    caps = {"tools": {"listChanged": True}}
    async with session_server({"tools/list": tools}, caps) as srv:
        with anyio.fail_after(5):
            async with Client(
                srv.wire, protocol_version="2025-11-25", list_changed_handler=on_change
            ) as client:
                assert [t.name for t in await client.list_tools()] == ["v1"]
                version["n"] = 2
                assert [t.name for t in await client.list_tools()] == ["v1"]  # cached
                assert srv.sent_methods().count("tools/list") == 1
                await srv.session.notify("notifications/tools/list_changed")
                await got_change.wait()
                assert changed == ["tools"]
                assert [t.name for t in await client.list_tools()] == ["v2"]
                assert [t.name for t in await client.list_tools(use_cache=False)] == ["v2"]
        assert srv.sent_methods().count("tools/list") == 3


async def test_no_cache_without_list_changed() -> None:
    async def tools(ctx: RequestContext, params: Any) -> Any:
        return {"tools": []}

    async with session_server({"tools/list": tools}, {"tools": {}}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                await client.list_tools()
                await client.list_tools()
        assert srv.sent_methods().count("tools/list") == 2


# ---------------------------------------------------------------- resources, prompts, utilities


async def test_resources_prompts_completion_logging() -> None:
    seen: dict[str, Any] = {}

    async def read(ctx: RequestContext, params: Any) -> Any:
        return {
            "contents": [
                {"uri": params["uri"], "mimeType": "text/plain", "text": "hi"},
                {"uri": params["uri"], "blob": "AAEC"},
            ]
        }

    async def sub(ctx: RequestContext, params: Any) -> Any:
        seen.setdefault("sub", []).append(params["uri"])
        return {}

    async def get_prompt(ctx: RequestContext, params: Any) -> Any:
        seen["prompt_args"] = params.get("arguments")
        return {
            "description": "d",
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": f"hi {params['arguments']['who']}"},
                }
            ],
        }

    async def complete(ctx: RequestContext, params: Any) -> Any:
        seen["complete"] = params
        return {"completion": {"values": ["fr", "fi"], "total": 2, "hasMore": False}}

    async def set_level(ctx: RequestContext, params: Any) -> Any:
        seen["level"] = params["level"]
        return {}

    handlers = {
        "resources/read": read,
        "resources/subscribe": sub,
        "resources/unsubscribe": sub,
        "prompts/get": get_prompt,
        "completion/complete": complete,
        "logging/setLevel": set_level,
    }
    caps = {"resources": {"subscribe": True}, "prompts": {}, "completions": {}, "logging": {}}
    async with session_server(handlers, caps) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                r = await client.read_resource("mem://a")
                assert r.contents[0].text == "hi"  # type: ignore[union-attr]
                assert r.contents[1].blob == "AAEC"  # type: ignore[union-attr]
                await client.subscribe("mem://a")
                await client.unsubscribe("mem://a")
                p = await client.get_prompt("greet", {"who": "Ann", "n": 3})
                assert p.messages[0].content.text == "hi Ann"  # type: ignore[union-attr]
                c = await client.complete(
                    PromptReference(name="greet"), "lang", "f", context={"who": "Ann"}
                )
                assert c.completion.values == ["fr", "fi"] and c.completion.has_more is False
                await client.set_logging_level("warning")
                with pytest.raises(ValueError):
                    await client.set_logging_level("loud")
        assert seen["sub"] == ["mem://a", "mem://a"]
        assert seen["prompt_args"] == {"who": "Ann", "n": "3"}
        assert seen["complete"] == {
            "ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "lang", "value": "f"},
            "context": {"arguments": {"who": "Ann"}},
        }
        assert seen["level"] == "warning"
        srv.wire.check()


async def test_notification_handlers() -> None:
    logs: list[Any] = []
    progress: list[Any] = []
    updated: list[str] = []
    done = anyio.Event()

    async def on_update(p: Any) -> None:
        updated.append(p.uri)
        done.set()

    async def call(ctx: RequestContext, params: Any) -> Any:
        await ctx.report_progress(1, None, "half")
        return text_result("ok")

    async def tools(ctx: RequestContext, params: Any) -> Any:
        return {"tools": []}

    handlers = {"tools/call": call, "tools/list": tools}
    caps = {"tools": {}, "resources": {"subscribe": True}, "logging": {}}
    async with session_server(handlers, caps) as srv:
        with anyio.fail_after(5):
            async with Client(
                srv.wire,
                protocol_version="2025-11-25",
                logging_handler=logs.append,
                progress_handler=progress.append,
                resource_updated_handler=on_update,
            ) as client:
                await srv.session.notify(
                    "notifications/message", {"level": "error", "logger": "db", "data": {"x": 1}}
                )
                await srv.session.notify(
                    "notifications/message", {"level": "bogus"}
                )  # malformed: dropped
                await srv.session.notify(
                    "notifications/progress", {"progressToken": "t", "progress": 1}
                )
                await client.call_tool("x")
                await srv.session.notify("notifications/resources/updated", {"uri": "mem://a"})
                await done.wait()
                assert client.connected
        assert [(x.level, x.logger, x.data) for x in logs] == [("error", "db", {"x": 1})]
        # Progress for an unknown token is ignored; the call's progress arrives.
        assert [(x.progress, x.message) for x in progress] == [(1, "half")]
        assert updated == ["mem://a"]


# ---------------------------------------------------------------- timeouts, progress, cancellation


@pytest.mark.req(
    "LIFECYCLE-TIMEOUTS", "LIFECYCLE-TIMEOUT-SEND-CANCEL", "LIFECYCLE-TIMEOUT-PER-REQUEST-CONFIG"
)
async def test_timeout_sends_cancel_and_connection_stays_usable() -> None:
    cancelled = anyio.Event()

    async def call(ctx: RequestContext, params: Any) -> Any:
        if params["name"] == "hang":
            try:
                await anyio.sleep_forever()
            finally:
                if ctx.cancelled:
                    cancelled.set()
        return text_result("ok")

    async def tools(ctx: RequestContext, params: Any) -> Any:
        return {"tools": []}

    async with session_server({"tools/list": tools, "tools/call": call}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25", timeout=10) as client:
                with pytest.raises(RequestTimeout):
                    await client.call_tool("hang", timeout=0.2)
                await cancelled.wait()
                assert (await client.call_tool("x")).content[0].text == "ok"  # type: ignore[union-attr]
        cancels = [m for m in srv.wire.sent if m.get("method") == "notifications/cancelled"]
        assert len(cancels) == 1
        srv.wire.check()


async def test_progress_resets_the_timeout() -> None:
    async def call(ctx: RequestContext, params: Any) -> Any:
        for i in range(12):
            await anyio.sleep(0.05)
            await ctx.report_progress(i + 1, 12, f"step {i + 1}")
        return text_result("done")

    async def tools(ctx: RequestContext, params: Any) -> Any:
        return {"tools": []}

    seen: list[tuple[float, float | None, str | None]] = []
    async with session_server({"tools/list": tools, "tools/call": call}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                # 0.6 s of work, 0.4 s timeout, but progress every 0.05 s keeps it alive.
                r = await client.call_tool(
                    "slow", timeout=0.4, progress_handler=lambda p, t, m: seen.append((p, t, m))
                )
                assert r.content[0].text == "done"  # type: ignore[union-attr]
        assert [s[0] for s in seen] == list(range(1, 13))
        assert seen[0] == (1, 12, "step 1")
        srv.wire.check()


async def test_cancelling_the_caller_sends_cancelled() -> None:
    started = anyio.Event()
    stopped = anyio.Event()

    async def call(ctx: RequestContext, params: Any) -> Any:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()

    async def tools(ctx: RequestContext, params: Any) -> Any:
        return {"tools": []}

    async with session_server({"tools/list": tools, "tools/call": call}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(client.call_tool, "hang")
                    await started.wait()
                    tg.cancel_scope.cancel()
                await stopped.wait()
                await client.ping()
        cancels = [m for m in srv.wire.sent if m.get("method") == "notifications/cancelled"]
        assert len(cancels) == 1
        call_ids = [m["id"] for m in srv.wire.sent if m.get("method") == "tools/call"]
        assert cancels[0]["params"]["requestId"] == call_ids[0]


async def test_initialize_never_answered_times_out() -> None:
    from mcpkit._transports import memory_pair

    client_end, server_end = memory_pair()
    with anyio.fail_after(5):
        with pytest.raises(RequestTimeout, match="initialize"):
            async with Client(client_end, init_timeout=0.3):
                pass  # pragma: no cover
    await server_end.aclose()


async def test_server_closing_fails_pending_and_later_calls() -> None:
    started = anyio.Event()

    async def call(ctx: RequestContext, params: Any) -> Any:
        started.set()
        await anyio.sleep_forever()

    async def tools(ctx: RequestContext, params: Any) -> Any:
        return {"tools": []}

    async with session_server({"tools/list": tools, "tools/call": call}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25") as client:

                async def close_server() -> None:
                    await started.wait()
                    await srv.session.engine.transport.aclose()

                async with anyio.create_task_group() as tg:
                    tg.start_soon(close_server)
                    with pytest.raises(ConnectionClosed):
                        await client.call_tool("hang")
                with pytest.raises(ConnectionClosed):
                    await client.ping()
                assert not client.connected


# ---------------------------------------------------------------- server -> client requests


async def test_declares_exactly_the_capabilities_it_has_handlers_for() -> None:
    async with session_server({}) as srv:
        with anyio.fail_after(5):
            async with Client(
                srv.wire,
                protocol_version="2025-11-25",
                sampling_handler=lambda p, c: "x",
                sampling_tools=True,
                elicitation_handler=lambda p, c: {"action": "decline"},
                url_elicitation_handler=lambda p, c: {"action": "decline"},
                roots=["/tmp"],
            ):
                pass
        caps = srv.wire.sent[0]["params"]["capabilities"]
        assert caps == {
            "sampling": {"tools": {}},
            "elicitation": {"form": {}, "url": {}},
            "roots": {"listChanged": True},
        }


@pytest.mark.req("LIFECYCLE-TIMEOUT-MAXIMUM")
async def test_max_timeout_caps_progress_resets() -> None:
    async def call(ctx: RequestContext, params: Any) -> Any:
        i = 0
        while True:  # progress forever, never an answer
            i += 1
            await ctx.report_progress(i)
            await anyio.sleep(0.05)

    async def tools(ctx: RequestContext, params: Any) -> Any:
        return {"tools": []}

    async with session_server({"tools/list": tools, "tools/call": call}) as srv:
        with anyio.fail_after(5):
            async with Client(
                srv.wire, protocol_version="2025-11-25", timeout=0.2, max_timeout=0.6
            ) as client:
                seen: list[float] = []
                t0 = anyio.current_time()
                with pytest.raises(RequestTimeout):
                    await client.call_tool(
                        "forever", progress_handler=lambda p, t, m: seen.append(p)
                    )
                elapsed = anyio.current_time() - t0
                assert 0.5 < elapsed < 2.0
                assert len(seen) >= 5  # progress did keep the 0.2 s timeout from firing


async def test_resources_list_changed_drops_resources_and_templates() -> None:
    calls = {"resources/list": 0, "resources/templates/list": 0, "prompts/list": 0}
    changed: list[str] = []
    got = anyio.Event()

    def counting(method: str, key: str) -> Any:
        async def handler(ctx: RequestContext, params: Any) -> Any:
            calls[method] += 1
            return {key: []}

        return handler

    handlers = {
        "resources/list": counting("resources/list", "resources"),
        "resources/templates/list": counting("resources/templates/list", "resourceTemplates"),
        "prompts/list": counting("prompts/list", "prompts"),
    }
    caps = {"resources": {"listChanged": True}, "prompts": {"listChanged": True}}

    # async: a plain function runs in a worker thread, where setting an anyio.Event is unsafe
    async def on_change(kind: str) -> None:
        changed.append(kind)
        got.set()

    async with session_server(handlers, caps) as srv:
        with anyio.fail_after(5):
            async with Client(
                srv.wire, protocol_version="2025-11-25", list_changed_handler=on_change
            ) as client:
                for _ in range(2):
                    await client.list_resources()
                    await client.list_resource_templates()
                    await client.list_prompts()
                assert calls == {
                    "resources/list": 1,
                    "resources/templates/list": 1,
                    "prompts/list": 1,
                }
                await srv.session.notify("notifications/resources/list_changed")
                await got.wait()
                await client.list_resources()
                await client.list_resource_templates()
                await client.list_prompts()
                assert calls == {
                    "resources/list": 2,
                    "resources/templates/list": 2,
                    "prompts/list": 1,
                }
    assert changed == ["resources"]


async def test_prompts_list_changed_drops_only_prompts() -> None:
    calls = {"prompts/list": 0, "tools/list": 0}
    changed: list[str] = []
    got = anyio.Event()

    async def prompts(ctx: RequestContext, params: Any) -> Any:
        calls["prompts/list"] += 1
        return {"prompts": [{"name": f"p{calls['prompts/list']}"}]}

    async def tools(ctx: RequestContext, params: Any) -> Any:
        calls["tools/list"] += 1
        return {"tools": []}

    caps = {"prompts": {"listChanged": True}, "tools": {"listChanged": True}}

    # async: a plain function runs in a worker thread, where setting an anyio.Event is unsafe
    async def on_change(kind: str) -> None:
        changed.append(kind)
        got.set()

    async with session_server({"prompts/list": prompts, "tools/list": tools}, caps) as srv:
        with anyio.fail_after(5):
            async with Client(
                srv.wire, protocol_version="2025-11-25", list_changed_handler=on_change
            ) as client:
                assert [p.name for p in await client.list_prompts()] == ["p1"]
                assert [p.name for p in await client.list_prompts()] == ["p1"]  # cached
                await client.list_tools()
                await srv.session.notify("notifications/prompts/list_changed")
                await got.wait()
                assert [p.name for p in await client.list_prompts()] == ["p2"]
                await client.list_tools()
        assert calls == {"prompts/list": 2, "tools/list": 1}
        srv.wire.check()
    assert changed == ["prompts"]
