"""A 2025-11-25 session's request answered over SSE, when the server knows it ends without
waiting (a sync tool its author runs on the loop, ``inline=True``: the engine's
``serves_at_once``), is served in the POST's own task and sent as one body, as a JSON
answer is; not handed to the session's reader and back. Whatever may wait still goes
through the reader and streams what it says live.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.http._http_helpers import CLIENT_INFO, IN_PROCESS_BASE

from mcpkit import Context, Server
from mcpkit._http import open_streamable_http
from mcpkit._session import ClientSession
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio


URL = IN_PROCESS_BASE + "/mcp"


def _server() -> Server:
    server = Server("sse-at-once")

    @server.tool(inline=True)
    def where() -> str:
        """The name of the anyio task serving the call (none in a worker thread)."""
        try:
            return anyio.get_current_task().name
        except RuntimeError:
            return "thread"

    @server.tool()
    async def counts(ctx: Context) -> str:
        """Reports progress before answering (it waits: never served at once)."""
        await ctx.report_progress(1, 2)
        return "counted"

    return server


def _text(result: Any) -> str:
    return str(result["content"][0]["text"])


async def test_short_calls_are_served_in_each_posts_task_and_the_rest_stream_live() -> None:
    server = _server()
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(20):
        async with (
            ASGIClient(server.http_app()) as http,
            open_streamable_http(URL, http_client=http) as t,
            ClientSession(t, client_info=CLIENT_INFO, protocol_version="2025-11-25") as cs,
        ):
            await cs.initialize()
            call = {"name": "where", "arguments": {}}
            at_once = server.kernel.spec.at_once
            assert at_once is not None and at_once("tools/call", call)
            ids = [_text(await cs.send_request("tools/call", call)) for _ in range(6)]
            result = await cs.send_request(
                "tools/call", {"name": "counts", "arguments": {}}, on_progress=on_progress
            )
    # In the task serving the POST (the in-process client's), not the session's reader.
    assert all(name.endswith("run_app") for name in ids), ids
    assert _text(result) == "counted" and progress == [1]
