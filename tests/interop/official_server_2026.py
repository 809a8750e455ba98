"""The official SDK's ``MCPServer`` with the features our client meets at 2026-07-28.

Our client is tested against it in ``test_official_2026.py``:

    python tests/interop/official_server_2026.py

Tools ``add`` and ``greet`` (a multi round-trip tool written the official way: it returns an
``InputRequiredResult`` and reads the answer from ``ctx.input_responses`` on the retry), a
resource, a resource template and a prompt.
"""

from __future__ import annotations

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("official-2026", version="0.0.1", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def greet(ctx: Context) -> types.CallToolResult | types.InputRequiredResult:
    """Ask the user's name (one round trip), then greet them."""
    answers = ctx.input_responses or {}
    answer = answers.get("name")
    if answer is None:
        ask = types.ElicitRequest(
            method="elicitation/create",
            params=types.ElicitRequestFormParams(
                mode="form",
                message="What is your name?",
                requested_schema={
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            ),
        )
        return types.InputRequiredResult(input_requests={"name": ask})
    content = getattr(answer, "content", None) or {}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"Hello, {content.get('name')}!")]
    )


@server.resource("data://motd", mime_type="text/plain")
def motd() -> str:
    """The message of the day."""
    return "be kind"


@server.resource("data://items/{item_id}", mime_type="application/json")
def item(item_id: str) -> dict[str, str]:
    """One item by id."""
    return {"id": item_id}


@server.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Review this: {code}"


if __name__ == "__main__":
    server.run()
