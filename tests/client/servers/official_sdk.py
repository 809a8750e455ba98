"""A server written with the official Python SDK (``mcp``), run over stdio by our client's tests.

    python tests/client/servers/official_sdk.py

It exercises what a client must read from a server we did not write: structured output,
progress, logging, sampling, elicitation, roots, resources, templates, prompts, completion.
"""

from __future__ import annotations

import warnings

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

warnings.simplefilter("ignore")

server = MCPServer(
    "official-fixture", version="1.2.3", instructions="Use add to add.", log_level="WARNING"
)


class Sum(BaseModel):
    total: int


class Contact(BaseModel):
    name: str
    age: int = 30


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(total=a + b)


@server.tool()
async def countdown(n: int, ctx: Context) -> str:
    """Report progress n times, logging each step."""
    for i in range(n):
        await ctx.info(f"step {i + 1}")
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    return "done"


@server.tool()
async def ask_model(prompt: str, ctx: Context) -> str:
    """Ask the client's model."""
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=50,
        related_request_id=ctx.request_id,
    )
    content = result.content
    return (
        f"model said: {content.text}"
        if isinstance(content, types.TextContent)
        else "model said nothing"
    )


@server.tool()
async def ask_user(ctx: Context) -> str:
    """Ask the user for a contact."""
    r = await ctx.elicit("Who?", Contact)
    if r.action == "accept":
        return f"{r.data.name} ({r.data.age})"
    return r.action


@server.tool()
async def show_roots(ctx: Context) -> str:
    """List the client's roots."""
    r = await ctx.session.list_roots()
    return ",".join(str(x.uri) for x in r.roots)


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("nope")


@server.resource("memo://readme", mime_type="text/plain")
def readme() -> str:
    """The readme."""
    return "hello from the official SDK"


@server.resource("memo://items/{item}", mime_type="text/plain")
def item(item: str) -> str:
    """One item."""
    return f"item {item}"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@server.completion()
async def complete(ref, argument, context):  # type: ignore[no-untyped-def]
    return types.Completion(values=[v for v in ("alice", "bob") if v.startswith(argument.value)])


if __name__ == "__main__":
    server.run()
