"""What a stateless request gets besides its result (2026-07-28), over HTTP in process.

Log messages only for a request that set ``io.modelcontextprotocol/logLevel``, and at or above
it; change notifications only on a ``subscriptions/listen`` stream, acknowledged first, each
tagged with the subscription's id, and only of the kinds the client opted in to.
"""

from __future__ import annotations

import logging
import runpy
from typing import Any

import anyio
import pytest
from _stateless_helpers import EVERYTHING, TIMEOUT, meta, post, request, stream

from mcpkit import Context, Server
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

ACK = "notifications/subscriptions/acknowledged"
SUB_ID = "io.modelcontextprotocol/subscriptionId"


def _server() -> Server:
    server = Server("notes")
    server.bridge_logging("stateless-notes")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Log at three levels and report progress."""
        await ctx.debug("d")
        await ctx.info("i")
        await ctx.warning("w")
        await ctx.report_progress(1, 2)
        return "done"

    @server.tool()
    def bridged(n: int) -> str:
        """Log through Python's logging, from a worker thread."""
        for i in range(n):
            logging.getLogger("stateless-notes").error("record %d", i)
        return "logged"

    @server.prompt()
    def hello() -> str:
        """Say hello."""
        return "hello"

    @server.resource("test://watched", mime_type="text/plain")
    def watched() -> str:
        """A resource to subscribe to."""
        return "v1"

    return server


def _levels(notes: list[dict[str, Any]]) -> list[str]:
    return [n["params"]["level"] for n in notes if n["method"] == "notifications/message"]


async def test_no_log_messages_unless_the_request_sets_a_level() -> None:
    async with ASGIClient(_server().http_app()) as http:
        silent = await post(http, request("tools/call", {"name": "chatty"}))
        info = await post(
            http, request("tools/call", {"name": "chatty", "_meta": meta(log_level="info")})
        )
        debug = await post(
            http, request("tools/call", {"name": "chatty", "_meta": meta(log_level="debug")})
        )
    assert silent.notifications == []
    assert silent.result["content"][0]["text"] == "done"
    assert _levels(info.notifications) == ["info", "warning"]
    assert _levels(debug.notifications) == ["debug", "info", "warning"]


async def test_python_logging_reaches_only_requests_that_set_a_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # More records than a session's outbox holds: none may pile up anywhere (they used to
    # wait there for an `initialized` a stateless client never sends).
    call = request("tools/call", {"name": "bridged", "arguments": {"n": 1500}})
    async with ASGIClient(_server().http_app()) as http:
        silent = await post(http, call)
        with caplog.at_level(logging.WARNING, logger="mcpkit"):
            again = await post(http, call)
    assert silent.notifications == [] and again.notifications == []
    assert not [r for r in caplog.records if r.name.startswith("mcpkit")]


async def test_an_unknown_log_level_is_invalid_params() -> None:
    async with ASGIClient(_server().http_app()) as http:
        got = await post(
            http, request("tools/call", {"name": "chatty", "_meta": meta(log_level="loud")})
        )
    assert got.error["code"] == -32602


async def test_progress_goes_to_a_request_that_asked_for_it() -> None:
    body = request("tools/call", {"name": "chatty", "_meta": meta(progressToken="p1")})
    async with ASGIClient(_server().http_app()) as http:
        got = await post(http, body)
    progress = [n["params"] for n in got.notifications if n["method"] == "notifications/progress"]
    assert progress == [{"progressToken": "p1", "progress": 1, "total": 2}]


async def test_listen_acknowledges_first_then_delivers_what_was_asked() -> None:
    server = _server()
    body = request(
        "subscriptions/listen",
        {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["test://watched"]}},
        id="sub-1",
    )
    async with ASGIClient(server.http_app()) as http, stream(http, body) as listen:
        assert listen.status == 200
        ack = await listen.next()
        assert ack["method"] == ACK
        # Tagged with the client's own request id (the app renumbers requests inside).
        assert ack["params"]["_meta"][SUB_ID] == "sub-1"
        assert ack["params"]["notifications"] == {
            "toolsListChanged": True,
            "resourceSubscriptions": ["test://watched"],
        }
        # Prompt changes and other resources were not asked for: never delivered, so the
        # next messages are exactly the ones that were.
        server.add_prompt(lambda: "x", name="another_prompt")
        await server.notify_resource_updated("test://elsewhere")
        server.add_tool(lambda: "x", name="another_tool", description="Added live.")
        changed = await listen.next()
        assert changed["method"] == "notifications/tools/list_changed"
        assert changed["params"]["_meta"][SUB_ID] == "sub-1"
        await server.notify_resource_updated("test://watched")
        updated = await listen.next()
        assert updated["method"] == "notifications/resources/updated"
        assert updated["params"]["uri"] == "test://watched"
        assert updated["params"]["_meta"][SUB_ID] == "sub-1"
        # The server ending the stream answers the request with a result.
        server.listeners.close_all()
        end = await listen.next()
    assert end["id"] == "sub-1"
    assert end["result"]["_meta"][SUB_ID] == "sub-1"


async def test_listen_streams_even_when_the_app_answers_in_json() -> None:
    server = _server()
    app = server.http_app(json_response=True)
    body = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    async with ASGIClient(app) as http:
        plain = await post(http, request("tools/list"))
        assert plain.content_type.startswith("application/json")
        async with stream(http, body) as listen:
            assert (await listen.next())["method"] == ACK
            server.remove_tool("bridged")
            assert (await listen.next())["method"] == "notifications/tools/list_changed"
            server.listeners.close_all()
            assert "result" in await listen.next()


async def test_only_supported_kinds_are_acknowledged() -> None:
    server = Server("no-prompts")

    @server.tool()
    def one() -> str:
        """A tool."""
        return "1"

    body = request(
        "subscriptions/listen",
        {"notifications": {"toolsListChanged": True, "promptsListChanged": True}},
    )
    async with ASGIClient(server.http_app()) as http, stream(http, body) as listen:
        ack = await listen.next()
        server.listeners.close_all()
        await listen.next()
    assert ack["params"]["notifications"] == {"toolsListChanged": True}


async def test_a_malformed_filter_is_invalid_params() -> None:
    body = request("subscriptions/listen", {"notifications": {"toolsListChanged": "yes"}})
    async with ASGIClient(_server().http_app()) as http:
        got = await post(http, body)
    assert got.error["code"] == -32602


async def test_listeners_each_get_their_own_kinds() -> None:
    server = runpy.run_path(str(EVERYTHING))["server"]
    tools_only = request(
        "subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=1
    )
    prompts_only = request(
        "subscriptions/listen", {"notifications": {"promptsListChanged": True}}, id=2
    )
    trigger_tools = request("tools/call", {"name": "test_trigger_tool_change"})
    trigger_prompts = request("tools/call", {"name": "test_trigger_prompt_change"})
    async with (
        ASGIClient(server.http_app()) as http,
        stream(http, tools_only) as tools,
        stream(http, prompts_only) as prompts,
    ):
        assert (await tools.next())["method"] == ACK
        assert (await prompts.next())["method"] == ACK
        # The example's trigger tools change the lists from another request.
        assert (await post(http, trigger_tools)).result["resultType"] == "complete"
        assert (await post(http, trigger_prompts)).result["resultType"] == "complete"
        got_tools = await tools.next()
        got_prompts = await prompts.next()
        server.listeners.close_all()
        # Each stream's next message is its end: nothing of the other kind came first.
        assert "result" in await tools.next()
        assert "result" in await prompts.next()
    assert got_tools["method"] == "notifications/tools/list_changed"
    assert got_tools["params"]["_meta"][SUB_ID] == 1
    assert got_prompts["method"] == "notifications/prompts/list_changed"
    assert got_prompts["params"]["_meta"][SUB_ID] == 2


async def test_a_change_made_from_a_worker_thread_reaches_listeners() -> None:
    server = _server()
    body = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    async with ASGIClient(server.http_app()) as http, stream(http, body) as listen:
        await listen.next()
        with anyio.fail_after(TIMEOUT):
            await anyio.to_thread.run_sync(lambda: server.remove_tool("chatty"))
        assert (await listen.next())["method"] == "notifications/tools/list_changed"
        server.listeners.close_all()
        await listen.next()
