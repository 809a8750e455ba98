"""A 2026-07-28 call answered in one JSON body, still running when the app shuts down: the
drain waits for it (bounded), then cancels it and answers it with an error saying so; a
``TimeoutError`` the tool raises itself is its own failure, never taken for that
cancellation (on asyncio the drain's scope is the stdlib's timeout context)."""

from __future__ import annotations

import anyio
import pytest
from _stateless_helpers import TIMEOUT, Answer, post, request

from mcpkit import Server
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio


def _server(entered: anyio.Event) -> Server:
    server = Server("json-drain")

    @server.tool()
    async def hang() -> str:
        """Waits until cancelled."""
        entered.set()
        await anyio.sleep_forever()
        return "never"

    @server.tool()
    async def times_out() -> str:
        """Raises a TimeoutError of its own."""
        raise TimeoutError("the tool's own")

    @server.tool()
    def echo(text: str) -> str:
        """Says it back."""
        return text

    return server


async def test_a_json_call_running_at_shutdown_is_answered_with_an_error() -> None:
    entered = anyio.Event()
    app = _server(entered).http_app(json_response=True)
    answers: list[Answer] = []
    async with ASGIClient(app) as http:
        own = await post(http, request("tools/call", {"name": "times_out"}, id=1))
        assert own.status == 200
        assert own.result["isError"] is True
        assert "times_out" in own.result["content"][0]["text"]  # masked: the tool's failure
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    answers.append(await post(http, request("tools/call", {"name": "hang"}, id=2)))

                tg.start_soon(call)
                await entered.wait()
                assert len(app.stateless_era._inflight) == 1
                await app.aclose()
                await app.drain(0.05)
        (answer,) = answers
        assert answer.status == 200
        error = answer.error
        assert error["code"] == -32603
        assert "shutting down" in error["message"]
        assert not app.stateless_era._inflight
