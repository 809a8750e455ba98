"""The real HTTP client transports over the in-process ASGI client: no socket, no server.

The same code paths as over uvicorn (SSE and JSON answers, the GET stream, 404 and a new
session, DELETE on close), driven against the real app in the test's own event loop, on
asyncio and on trio alike.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit import Client, Context, Server, http
from mcpkit.lowlevel import ASGIClient, ClientSession, open_streamable_http

pytestmark = pytest.mark.anyio
URL = "http://127.0.0.1/mcp"
INFO = {"name": "t", "version": "1"}


def _server() -> Server:
    server = Server("in-process")

    @server.tool()
    async def steps(n: int, ctx: Context) -> str:
        """Reports progress and logs on the request's stream."""
        for i in range(n):
            await ctx.report_progress(i + 1, n)
            await ctx.info(f"step {i + 1}")
        return f"{n} steps"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks the client's model (a server-to-client request on the stream)."""
        reply = await ctx.sample("hello?", max_tokens=5)
        return str(reply.content.text)  # type: ignore[union-attr]

    return server


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_a_client_over_the_app_without_a_socket(json_response: bool, revision: str) -> None:
    app = _server().http_app(json_response=json_response)
    logs: list[str] = []
    progress: list[float] = []

    def on_log(params: Any) -> None:
        logs.append(str(params.data))

    def on_progress(params: Any) -> None:
        progress.append(params.progress)

    def sample(params: Any, ctx: Any) -> str:
        return "model says hi"

    with anyio.fail_after(20):
        async with (
            ASGIClient(app) as asgi,
            Client(
                http(URL, http_client=asgi),
                protocol_version=revision,
                logging_handler=on_log,
                progress_handler=on_progress,
                sampling_handler=sample,
            ) as client,
        ):
            assert client.server_info.name == "in-process"
            result = await client.call_tool("steps", {"n": 3})
            assert result.content[0].text == "3 steps"  # type: ignore[union-attr]
            result = await client.call_tool("ask")
            assert result.content[0].text == "model says hi"  # type: ignore[union-attr]
            assert client.protocol_version == revision
            # A 2025 client has a session; 2026 requests share the app's one hub.
            assert len(app.sessions) == (1 if revision == "2025-11-25" else 0)
        # Closing the client ended its session (DELETE), and the lifespan ran down.
        assert len(app.sessions) == 0
    if json_response:
        # Notifications ride the GET stream and race the JSON answer: whatever arrived came
        # in order, and progress that came after the answer was dropped, not misrouted.
        assert logs == ["step 1", "step 2", "step 3"][: len(logs)]
        assert progress == [1, 2, 3][: len(progress)]
    else:  # on the request's own stream, before its answer
        assert logs == ["step 1", "step 2", "step 3"]
        assert progress == [1, 2, 3]


async def test_a_session_the_server_ended_is_started_again_in_process() -> None:
    app = _server().http_app()
    with anyio.fail_after(20):
        async with (
            ASGIClient(app) as asgi,
            open_streamable_http(URL, http_client=asgi) as t,
            ClientSession(t, client_info=INFO) as cs,
        ):
            await cs.initialize()
            first = t.session_id
            for entry in list(app.sessions.values()):
                app.registry.drop(entry)
            call = {"name": "steps", "arguments": {"n": 1}}
            result = await cs.send_request("tools/call", call, timeout=10)
            assert result["content"][0]["text"] == "1 steps"
            assert t.session_id not in (None, first) and t.renewals == 1


async def test_the_app_sees_a_client_that_stops_reading_as_a_disconnect() -> None:
    """A response abandoned mid-stream: the app gets http.disconnect and finishes."""
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        seen.append((await receive())["type"])

    with anyio.fail_after(10):
        async with ASGIClient(app, lifespan=False) as asgi, asgi.stream("GET", URL) as resp:
            chunks = resp.aiter_bytes()
            assert await chunks.__anext__() == b"first"
            await chunks.aclose()
    assert seen == ["http.disconnect"]
