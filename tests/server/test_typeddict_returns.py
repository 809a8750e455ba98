"""A ``TypedDict`` return type: structured output with its object schema, never dropped
without a word (before Python 3.12 pydantic cannot read ``typing.TypedDict``)."""

from __future__ import annotations

import sys
import typing

import anyio
import pytest
import typing_extensions

from mcpkit import Client, Server

pytestmark = pytest.mark.anyio


class PointExt(typing_extensions.TypedDict):
    x: int
    y: int


class PointStd(typing.TypedDict):
    x: int
    y: int


async def test_a_typing_extensions_typeddict_is_structured_output() -> None:
    server = Server("t")

    @server.tool()
    def point() -> PointExt:
        """A point."""
        return {"x": 1, "y": 2}

    with anyio.fail_after(20):
        async with Client(server) as client:
            (tool,) = await client.list_tools()
            result = await client.call_tool("point", {})
    assert tool.output_schema is not None
    assert tool.output_schema.model_dump()["properties"].keys() == {"x", "y"}
    assert result.structured_content == {"x": 1, "y": 2}


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="typing.TypedDict works from 3.12")
def test_a_typing_typeddict_before_312_is_refused_at_registration() -> None:
    server = Server("t")
    with pytest.raises(TypeError, match=r"use typing_extensions\.TypedDict"):

        @server.tool()
        def point() -> PointStd:
            """A point."""
            return {"x": 1, "y": 2}

    assert [t["name"] for t in server.tools] == []


@pytest.mark.skipif(sys.version_info < (3, 12), reason="pydantic reads typing.TypedDict from 3.12")
def test_a_typing_typeddict_from_312_is_structured_output() -> None:
    server = Server("t")

    @server.tool()
    def point() -> PointStd:
        """A point."""
        return {"x": 1, "y": 2}

    (tool,) = server.tools
    assert tool["outputSchema"]["properties"].keys() == {"x", "y"}
