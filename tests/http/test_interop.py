"""Interoperability with the official Python SDK (``mcp``) over HTTP, both directions."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _http_helpers import CLIENT_INFO, DemoServer, Recorder, built_off_loop, running

from mcpkit._app import create_http_app
from mcpkit._http import open_http, open_sse, open_streamable_http
from mcpkit._session import ClientSession

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.mark.parametrize("sessionless", [False, True], ids=["sessions", "sessionless"])
@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_official_client_against_our_server(
    demo: DemoServer, json_response: bool, sessionless: bool
) -> None:
    from mcp import ClientSession as OfficialSession
    from mcp import types as mt
    from mcp.client.streamable_http import streamable_http_client

    logs: list[Any] = []

    async def on_log(params: mt.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def on_sample(ctx: Any, params: mt.CreateMessageRequestParams) -> mt.CreateMessageResult:
        return mt.CreateMessageResult(
            role="assistant",
            content=mt.TextContent(type="text", text="official sampled"),
            model="m",
        )

    app = create_http_app(demo, json_response=json_response, sessionless=sessionless)
    rec = Recorder(app)
    with running(rec) as srv, anyio.fail_after(30):
        async with (
            streamable_http_client(srv.url) as (read, write),
            OfficialSession(read, write, logging_callback=on_log, sampling_callback=on_sample) as s,
        ):
            init = await s.initialize()
            assert init.server_info.name == "demo"
            tools = await s.list_tools()
            assert {t.name for t in tools.tools} >= {"echo", "log"}
            r = await s.call_tool("echo", {"text": "from the official client"})
            assert r.content[0].text == "from the official client"  # type: ignore[union-attr]
            r = await s.call_tool("log", {})
            assert r.content[0].text == "logged"  # type: ignore[union-attr]
            if not sessionless:
                # Sampling rides the call's SSE stream, or the GET stream in JSON mode.
                r = await s.call_tool("sample", {})
                assert r.content[0].text == "official sampled"  # type: ignore[union-attr]
            if not json_response:
                assert logs == ["line 0", "line 1", "line 2"]
        if not sessionless:
            # The official client sends DELETE on close: once the server has answered it, the
            # session is gone.
            def deleted() -> bool:
                return any(
                    m == "DELETE" and i in rec.finished
                    for i, (_, m, _, _) in enumerate(rec.requests)
                )

            with anyio.fail_after(5):
                await rec.wait_for(deleted)
            assert not app.sessions


def _official_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("official-http", version="0.0.1", log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    return server


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_our_client_against_official_server(json_response: bool) -> None:
    app = built_off_loop(
        lambda: _official_server().streamable_http_app(json_response=json_response)
    )
    with running(app) as srv, anyio.fail_after(30):
        for opener in (open_streamable_http, open_http):
            async with opener(srv.url) as t, ClientSession(t, client_info=CLIENT_INFO) as cs:
                await cs.initialize()
                assert cs.server_info["name"] == "official-http"
                assert t.session_id is not None
                r = await cs.send_request(
                    "tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}}, timeout=10
                )
                assert r["content"][0]["text"] == "42"
                r = await cs.send_request(
                    "tools/call", {"name": "shout", "arguments": {"text": "hey"}}, timeout=10
                )
                assert r["content"][0]["text"] == "HEY"


async def test_our_client_against_official_legacy_sse_server() -> None:
    app = built_off_loop(lambda: _official_server().sse_app())
    with running(app) as srv, anyio.fail_after(30):
        async with (
            open_sse(srv.base + "/sse") as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            r = await cs.send_request(
                "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, timeout=10
            )
            assert r["content"][0]["text"] == "3"
        async with (
            open_http(srv.base + "/sse") as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            assert t._legacy is not None  # fell back
            r = await cs.send_request(
                "tools/call", {"name": "shout", "arguments": {"text": "old"}}, timeout=10
            )
            assert r["content"][0]["text"] == "OLD"


async def test_official_legacy_client_against_our_sse_server(demo: DemoServer) -> None:
    from mcp import ClientSession as OfficialSession
    from mcp.client.sse import sse_client

    from mcpkit._app import create_sse_app

    with running(create_sse_app(demo)) as srv, anyio.fail_after(30):
        async with (
            sse_client(srv.base + "/sse") as (read, write),
            OfficialSession(read, write) as s,
        ):
            await s.initialize()
            r = await s.call_tool("echo", {"text": "legacy interop"})
            assert r.content[0].text == "legacy interop"  # type: ignore[union-attr]
