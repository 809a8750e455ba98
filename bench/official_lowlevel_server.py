"""Bench peer: the official SDK's low-level ``Server`` on stdio with the same ``echo`` tool.

python bench/official_lowlevel_server.py
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOL = types.Tool(
    name="echo",
    description="Echo the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server: Server[Any] = Server(
    "bench-official-lowlevel", on_list_tools=list_tools, on_call_tool=call_tool
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
