"""A handler of ours that fails while answering a server's input request: under the
handshake era the server gets the error (its tool decides); under 2026-07-28 no input
response can carry one, so the request ends with InputFailed (spec: client/sampling.mdx and
client/roots.mdx, "Error Handling": the client need not retry)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit import Client, Context, InputFailed, ProtocolError, Server

pytestmark = pytest.mark.anyio


def _server() -> Server:
    server = Server("asks")

    @server.tool()
    async def ask_model(ctx: Context) -> str:
        """Samples once; says what came of it."""
        try:
            return f"model said: {await ctx.sample('hi', max_tokens=5)}"
        except ProtocolError as e:
            return f"sampling failed: {e.message}"

    @server.tool()
    async def ask_user(ctx: Context) -> str:
        """Elicits a word."""
        answer = await ctx.elicit(
            "A word?", {"type": "object", "properties": {"w": {"type": "string"}}}
        )
        return f"user: {answer.action}"

    return server


async def _failing_sampler(params: Any, ctx: Any) -> Any:
    raise RuntimeError("no model here")


async def _refusing_sampler(params: Any, ctx: Any) -> Any:
    raise ProtocolError(-1, "User rejected sampling request")


async def _failing_elicitor(params: Any, ctx: Any) -> Any:
    raise ValueError("no user here")


@pytest.mark.parametrize(
    ("sampler", "cause"), [(_failing_sampler, RuntimeError), (_refusing_sampler, ProtocolError)]
)
async def test_under_2026_a_failing_sampling_handler_ends_the_call(
    sampler: Any, cause: type
) -> None:
    with anyio.fail_after(20):
        async with Client(_server(), sampling_handler=sampler, protocol_version="2026-07-28") as c:
            with pytest.raises(InputFailed) as caught:
                await c.call_tool("ask_model", {})
            # The session goes on: the next call is served.
            assert [t.name for t in await c.list_tools()] == ["ask_model", "ask_user"]
    assert caught.value.method == "sampling/createMessage"
    assert isinstance(caught.value.__cause__, cause)
    assert "sampling/createMessage" in str(caught.value)


async def test_under_2026_a_failing_elicitation_handler_ends_the_call() -> None:
    with anyio.fail_after(20):
        async with Client(
            _server(), elicitation_handler=_failing_elicitor, protocol_version="2026-07-28"
        ) as c:
            with pytest.raises(InputFailed) as caught:
                await c.call_tool("ask_user", {})
    assert caught.value.method == "elicitation/create"
    assert isinstance(caught.value.__cause__, ValueError)


async def test_under_the_handshake_era_the_server_gets_the_error() -> None:
    with anyio.fail_after(20):
        async with Client(
            _server(), sampling_handler=_refusing_sampler, protocol_version="2025-11-25"
        ) as c:
            result = await c.call_tool("ask_model", {})
    assert result.content[0].text == "sampling failed: User rejected sampling request"  # type: ignore[union-attr]
