"""The server of the lost-answer tests (issue 41): slow tools that record each start of
their body, so a test can tell whether a call ran twice.

Each tool appends ``<call> <pid>`` to ``<where>/starts`` as its body starts, reports
progress (the response stream is open: the client is told the call is under way), then
waits until ``<where>/release`` exists (bounded) and answers. ``record`` declares nothing
about its effects; ``peek`` is annotated read-only and ``put`` idempotent.
"""

from __future__ import annotations

import os

import anyio

from mcpkit import Context, Server
from mcpkit.types import ToolAnnotations

server = Server("effects")

#: Bound on the wait for the test's release (seconds).
RELEASE_WITHIN = 20.0


async def _run(where: str, call: str, ctx: Context) -> str:
    here = anyio.Path(where)
    async with await (here / "starts").open("a") as starts:  # one short line, O_APPEND: whole
        await starts.write(f"{call} {os.getpid()}\n")
    await ctx.report_progress(1, 2, "started")
    with anyio.move_on_after(RELEASE_WITHIN):
        # The test process releases every worker at once by creating one file.
        while not await (here / "release").exists():  # noqa: ASYNC110 (another process)
            await anyio.sleep(0.02)
        return f"done {call}"
    return f"never released {call}"


@server.tool()
async def record(where: str, call: str, ctx: Context) -> str:
    """Start (recorded), wait for the release, finish: an effect the client knows nothing of."""
    return await _run(where, call, ctx)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def peek(where: str, call: str, ctx: Context) -> str:
    """The same, annotated read-only: safe to call again."""
    return await _run(where, call, ctx)


@server.tool(annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True))
async def put(where: str, call: str, ctx: Context) -> str:
    """The same, annotated idempotent: calling it twice does no more than once."""
    return await _run(where, call, ctx)


if __name__ == "__main__":
    server.run()
