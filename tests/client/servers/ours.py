"""Our own ``mcpkit.Server`` with a bit of everything, for the client tests.

    python tests/client/servers/ours.py [stdio | http PORT | sse PORT]

In process, tests import :func:`make_server` and pass the server to ``Client`` directly.
"""

from __future__ import annotations

import sys

from pydantic import BaseModel

from mcpkit import Context, Server


class Contact(BaseModel):
    name: str
    age: int = 30


def make_server() -> Server:
    server = Server("in-process", version="2.0", instructions="Be brief.", page_size=2)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def work(steps: int, ctx: Context) -> str:
        """Report progress and log."""
        for i in range(steps):
            await ctx.info(f"step {i + 1}")
            await ctx.report_progress(i + 1, steps)
        return "worked"

    @server.tool()
    async def ask(prompt: str, ctx: Context) -> str:
        """Sample from the client's model."""
        result = await ctx.sample(prompt, max_tokens=20)
        return f"model: {result.content.text}"  # type: ignore[union-attr]

    @server.tool()
    async def who(ctx: Context) -> str:
        """Elicit a contact."""
        answer = await ctx.elicit("Who?", Contact)
        return (
            f"{answer.data.name}/{answer.data.age}"
            if answer.accepted and answer.data
            else answer.action
        )

    @server.tool()
    async def roots(ctx: Context) -> list[str]:
        """The client's roots."""
        return [r.uri for r in await ctx.list_roots()]

    @server.resource("memo://readme", mime_type="text/plain")
    def readme() -> str:
        """The readme."""
        return "read me"

    @server.resource("memo://items/{item}")
    def item(item: str) -> str:
        """One item."""
        return f"item {item}"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    return server


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        make_server().run()
    else:
        from mcpkit._app import serve_http, serve_sse

        (serve_http if mode == "http" else serve_sse)(make_server(), port=int(sys.argv[2]))
