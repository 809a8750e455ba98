"""A small stdio server on the session layer (fast to start), for the CLI and facade tests.

    python tests/client/servers/session_stdio.py

Tools (listed two per page): add(a, b) with an outputSchema, shout(text), fail(), picture().
One resource, one template, one prompt.
"""

from __future__ import annotations

from typing import Any

import anyio

from mcpkit._exceptions import InvalidParams
from mcpkit._session import RequestContext, ServerSession
from mcpkit._transports import stdio_server

TOOLS: list[dict[str, Any]] = [
    {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "number"}},
            "required": ["sum"],
        },
    },
    {
        "name": "shout",
        "description": "Upper-case a text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"}},
    {"name": "picture", "description": "A tiny image.", "inputSchema": {"type": "object"}},
]


async def list_tools(ctx: RequestContext, params: Any) -> Any:
    start = int((params or {}).get("cursor") or 0)
    page: dict[str, Any] = {"tools": TOOLS[start : start + 2]}
    if start + 2 < len(TOOLS):
        page["nextCursor"] = str(start + 2)
    return page


async def call_tool(ctx: RequestContext, params: Any) -> Any:
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "add":
        a, b = args.get("a"), args.get("b")
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return {
                "content": [{"type": "text", "text": "a and b must be numbers"}],
                "isError": True,
            }
        s = a + b
        return {"content": [{"type": "text", "text": str(s)}], "structuredContent": {"sum": s}}
    if name == "shout":
        return {"content": [{"type": "text", "text": str(args.get("text", "")).upper()}]}
    if name == "fail":
        return {"content": [{"type": "text", "text": "it failed"}], "isError": True}
    if name == "picture":
        return {"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}
    raise InvalidParams(message=f"Unknown tool: {name}")


async def list_resources(ctx: RequestContext, params: Any) -> Any:
    return {"resources": [{"uri": "mem://hello", "name": "hello", "mimeType": "text/plain"}]}


async def list_templates(ctx: RequestContext, params: Any) -> Any:
    return {"resourceTemplates": [{"uriTemplate": "mem://items/{id}", "name": "item"}]}


async def read_resource(ctx: RequestContext, params: Any) -> Any:
    return {"contents": [{"uri": params["uri"], "mimeType": "text/plain", "text": "hello"}]}


async def list_prompts(ctx: RequestContext, params: Any) -> Any:
    return {
        "prompts": [
            {
                "name": "greet",
                "description": "Greet someone.",
                "arguments": [{"name": "who", "required": True}],
            }
        ]
    }


async def get_prompt(ctx: RequestContext, params: Any) -> Any:
    who = (params.get("arguments") or {}).get("who", "you")
    return {"messages": [{"role": "user", "content": {"type": "text", "text": f"Hello, {who}!"}}]}


async def main() -> None:
    async with stdio_server() as transport:
        session = ServerSession(
            transport,
            server_info={"name": "session-stdio", "version": "1.0"},
            capabilities={"tools": {}, "resources": {}, "prompts": {}},
            handlers={
                "tools/list": list_tools,
                "tools/call": call_tool,
                "resources/list": list_resources,
                "resources/templates/list": list_templates,
                "resources/read": read_resource,
                "prompts/list": list_prompts,
                "prompts/get": get_prompt,
            },
        )
        await session.run()


if __name__ == "__main__":
    anyio.run(main)
