"""The server side of progress tokens, in process over Streamable HTTP (2025-11-25): the
requests a server has in flight to the client at once, each asking for progress, never
share a token (each direction's tokens name that sender's own requests)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _http_helpers import CLIENT_INFO, IN_PROCESS_BASE

from mcpkit import Context, Server
from mcpkit._http import open_streamable_http
from mcpkit._session import ClientSession
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

URL = IN_PROCESS_BASE + "/mcp"
#: How many requests the tool has in flight to the client at once.
FAN_OUT = 12


def _server() -> Server:
    server = Server("fan-out")

    @server.tool()
    async def fan_out(n: int, ctx: Context) -> int:
        """Ask the client for its roots ``n`` times at once, each wanting progress."""

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            pass

        async def ask() -> None:
            await ctx.request_context.send_request("roots/list", None, on_progress=on_progress)

        async with anyio.create_task_group() as tg:
            for _ in range(n):
                tg.start_soon(ask)
        return n

    return server


@pytest.mark.req("PROGRESS-TOKEN-UNIQUE")
async def test_server_progress_tokens_are_unique_across_active_requests() -> None:
    tokens: list[Any] = []
    all_in = anyio.Event()

    async def roots(ctx: Any, params: Any) -> dict[str, Any]:
        tokens.append(params["_meta"]["progressToken"])
        if len(tokens) == FAN_OUT:
            all_in.set()
        # Answered only once every request arrived: all of them are active together.
        await all_in.wait()
        return {"roots": []}

    with anyio.fail_after(20):
        async with (
            ASGIClient(_server().http_app()) as http,
            open_streamable_http(URL, http_client=http) as t,
            ClientSession(
                t,
                client_info=CLIENT_INFO,
                capabilities={"roots": {}},
                handlers={"roots/list": roots},
                protocol_version="2025-11-25",
            ) as cs,
        ):
            await cs.initialize()
            result = await cs.send_request(
                "tools/call",
                {"name": "fan_out", "arguments": {"n": FAN_OUT}, "_meta": {"progressToken": 1}},
            )
    assert result["structuredContent"] == {"result": FAN_OUT}
    assert len(tokens) == FAN_OUT
    assert len(set(tokens)) == FAN_OUT, tokens
    assert all(isinstance(tok, (str, int)) and not isinstance(tok, bool) for tok in tokens)
