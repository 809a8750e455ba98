"""The server of the ``mcpkit run --redis`` tests: a plain tool and one that asks a question
(under 2026-07-28, a multi round-trip request whose ``requestState`` a retry brings back)."""

from __future__ import annotations

from mcpkit import Context, Server

server = Server("asker")


@server.tool()
def where() -> str:
    """Answers from whichever worker serves it."""
    return "here"


@server.tool()
async def greet(ctx: Context) -> str:
    """Ask the client for a name, then greet it."""
    answer = await ctx.elicit(
        "What is your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        key="name",
    )
    return f"Hello, {answer.data['name']}!" if answer.accepted else "Hello, nobody!"


if __name__ == "__main__":
    server.run()
