"""Bench peer: a ServerSession on stdio with one tool, ``echo(text)``, served from a dict.

python bench/session_server.py
"""

from __future__ import annotations

from typing import Any

import anyio

from mcpkit._exceptions import InvalidParams
from mcpkit._session import RequestContext, ServerSession
from mcpkit._transports import stdio_server

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    }
]


async def list_tools(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
    return {"tools": TOOLS}


async def call_tool(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
    if not params or params.get("name") != "echo":
        raise InvalidParams(message="Unknown tool")
    args = params.get("arguments") or {}
    return {"content": [{"type": "text", "text": str(args.get("text", ""))}]}


HANDLERS = {"tools/list": list_tools, "tools/call": call_tool}


def make_session(transport: Any) -> ServerSession:
    return ServerSession(
        transport,
        server_info={"name": "bench-session", "version": "0"},
        capabilities={"tools": {}},
        handlers=HANDLERS,
    )


async def main() -> None:
    async with stdio_server() as transport:
        await make_session(transport).run()


if __name__ == "__main__":
    anyio.run(main)
