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
async def nap(seconds: float) -> str:
    """Sleep ``seconds`` (touching no shared state meanwhile), then finish."""
    await anyio.sleep(seconds)
    return f"napped {seconds} s"


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


@server.tool(task_support="required")
async def survey(n: int, ctx: Context) -> str:
    """Ask ``n`` questions at once (from inside a task); say how many were accepted."""
    accepted = 0

    async def one(i: int) -> None:
        nonlocal accepted
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        if (await ctx.elicit(f"question {i}?", schema)).accepted:
            accepted += 1

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)
    return f"{accepted} of {n}"


@server.tool(task_support="optional")
async def search(query: str) -> dict[str, list[str]]:
    """Finds nothing: a structured result holding an empty list (kept a list in Redis)."""
    return {"hits": []}


@server.tool()
async def chatter(n: int, ctx: Context, wait: float = 3600) -> str:
    """Send ``n`` progress notifications, wait ``wait`` seconds (a stream that stays open),
    send one more, and finish."""
    for i in range(n):
        await ctx.report_progress(i + 1, n + 1, f"said {i + 1}")
    await anyio.sleep(wait)
    await ctx.report_progress(n + 1, n + 1, "said the last")
    return "done"


@server.tool()
async def log_twice(ctx: Context) -> str:
    """Log one record at info and one at error: the session's level decides what is sent."""
    await ctx.info("quiet")
    await ctx.error("loud")
    return "logged"


@server.tool()
async def touch(uri: str) -> str:
    """Tell every subscriber of ``uri`` it changed."""
    await server.notify_resource_updated(uri)
    return "touched"


@server.tool()
def grow(name: str) -> str:
    """Register tool ``name`` on this worker (sync: the registration runs in a worker
    thread, as a user's plain ``def`` tool would)."""

    def grown() -> str:
        return name

    server.add_tool(grown, name=name)
    return "grown"


@server.resource("note://board")
def board() -> str:
    """A resource clients subscribe to."""
    return "the board"


if __name__ == "__main__":
    server.run()
