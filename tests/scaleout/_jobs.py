"""The server the multi-worker tests run on every worker: tasks, progress, subscriptions."""

from __future__ import annotations

import anyio

from mcpkit import Context, Server

server = Server("jobs", task_poll_interval=100)


@server.tool(task_support="optional")
async def build(steps: int, ctx: Context) -> str:
    """Report ``steps`` progress steps, then finish."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        await anyio.sleep(0.02)
    return f"built in {steps} steps"


@server.tool(task_support="optional")
async def hold() -> str:
    """Run until cancelled (or until the worker running it dies)."""
    await anyio.sleep(3600)
    return "never"


@server.tool(task_support="required")
async def confirm(ctx: Context) -> str:
    """Ask the client (from inside a task) whether to go on."""
    answer = await ctx.elicit(
        "Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    )
    return "confirmed" if answer.accepted and answer.data.get("ok") else "declined"


@server.tool()
async def chatter(n: int, ctx: Context) -> str:
    """Send ``n`` progress notifications, then wait (a stream that stays open)."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"said {i + 1}")
    await anyio.sleep(3600)
    return "done"


@server.tool()
async def touch(uri: str) -> str:
    """Tell every subscriber of ``uri`` it changed."""
    await server.notify_resource_updated(uri)
    return "touched"


@server.resource("note://board")
def board() -> str:
    """A resource clients subscribe to."""
    return "the board"


if __name__ == "__main__":
    server.run()
