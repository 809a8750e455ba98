"""A typed lifespan state: ``Server[State]`` / ``Context[State]`` let the type checker see what
the lifespan yields, and ``Context[State]`` is still recognised as the context parameter."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from tests._mypy import mypy_strict

from mcpkit import Client, Context, Server


@dataclass
class State:
    greeting: str


@asynccontextmanager
async def lifespan(server: Server[State]) -> AsyncIterator[State]:
    yield State(greeting="hello")


@pytest.mark.anyio
async def test_a_parameterised_context_is_the_context() -> None:
    server = Server("typed", lifespan=lifespan)

    @server.tool()
    def greet(name: str, ctx: Context[State]) -> str:
        """Greet someone with the lifespan's greeting."""
        return f"{ctx.lifespan_state.greeting}, {name}"

    (tool,) = server.tools
    assert list(tool["inputSchema"]["properties"]) == ["name"]  # ctx is not an argument
    with anyio.fail_after(20):
        async with Client(server) as client:
            result = await client.call_tool("greet", {"name": "Ada"})
    assert result.content[0].text == "hello, Ada"  # type: ignore[union-attr]


SNIPPET = """
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mcpkit import Context, Server


@dataclass
class State:
    greeting: str


@asynccontextmanager
async def lifespan(server: Server[State]) -> AsyncIterator[State]:
    yield State(greeting="hello")


server = Server("typed", lifespan=lifespan)
reveal_type(server)


@server.tool()
def greet(ctx: Context[State]) -> str:
    reveal_type(ctx.lifespan_state)
    return ctx.lifespan_state.greting
"""


@pytest.mark.xdist_group("mypy-snippets")
def test_the_type_checker_sees_the_state(tmp_path: Path) -> None:
    out = mypy_strict(SNIPPET, tmp_path, "typed_server.py")
    assert 'Revealed type is "mcpkit._server._server.Server[typed_server.State]"' in out, out
    assert 'Revealed type is "typed_server.State"' in out, out
    # The typo is caught: the state's type is known, not Any.
    assert '"State" has no attribute "greting"' in out, out
