"""A sessionless HTTP app (``sessionless=True``, ``mcpkit run --sessionless``) cannot ask
a 2025 client anything: the error says so, instead of blaming the client's declarations
(issue 33). A 2026-07-28 client, whose requests carry their capabilities, is asked."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit import Client, Context, Server, http
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio
URL = "http://127.0.0.1/mcp"


def _server() -> Server:
    server = Server("asker")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Go on?", {"type": "object", "properties": {}})
        return answer.action

    return server


def _yes(params: Any, ctx: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {}}


async def _call(app: Any, revision: str, **handlers: Any) -> Any:
    with anyio.fail_after(20):
        async with (
            ASGIClient(app) as asgi,
            Client(http(URL, http_client=asgi), protocol_version=revision, **handlers) as client,
        ):
            return await client.call_tool("ask")


async def test_a_2025_client_of_a_sessionless_app_hears_the_real_cause() -> None:
    result = await _call(
        _server().http_app(sessionless=True), "2025-11-25", elicitation_handler=_yes
    )
    text = result.content[0].text
    assert result.is_error, text
    assert "runs sessionless" in text and "'elicitation'" in text, text
    assert "did not declare" not in text, text  # it did: the cause is the mode


async def test_a_2026_client_of_a_sessionless_app_is_asked() -> None:
    result = await _call(
        _server().http_app(sessionless=True), "2026-07-28", elicitation_handler=_yes
    )
    assert not result.is_error and result.content[0].text == "accept", result


async def test_a_session_without_the_capability_still_names_the_client() -> None:
    # With sessions the handshake is known: a client that declared nothing is told so.
    result = await _call(_server().http_app(), "2025-11-25")
    text = result.content[0].text
    assert result.is_error and "did not declare the 'elicitation' capability" in text, text
