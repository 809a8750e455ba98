"""A worker whose sessions expire after a few seconds, with a tool answering big results:
what the Redis memory tests run (``python _blobs.py PORT IDLE``, the Redis URL from
``MCPKIT_REDIS_URL``), as ``server.run`` would serve it in a deployment."""

from __future__ import annotations

import sys

from mcpkit import Context, Server

server = Server("blobs")


@server.tool()
async def blob(size: int, ctx: Context) -> str:
    """Say one progress step, then answer ``size`` bytes of text (SSE events both)."""
    await ctx.report_progress(1, 1, "made")
    return "x" * size


if __name__ == "__main__":
    port, idle = int(sys.argv[1]), float(sys.argv[2])
    server.run("http", port=port, session_idle_timeout=idle, log_level="warning")
