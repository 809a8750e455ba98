"""The server of the visibility-across-workers test: admin tools hidden server-wide, a
login tool unlocking them for its session, and a lockdown tool hiding a tool server-wide."""

from __future__ import annotations

from mcpkit import Context, Server

server = Server("visible", exclude_tags={"admin"})


@server.tool(tags={"public"})
def status() -> str:
    """Say how things are."""
    return "fine"


@server.tool(tags={"admin"})
def wipe() -> str:
    """Wipe everything (admin)."""
    return "wiped"


@server.tool()
async def login(ctx: Context) -> str:
    """Unlock the admin tools for this session."""
    await ctx.enable(tags={"admin"})
    return "welcome"


@server.tool()
def lockdown() -> str:
    """Hide the status tool from everyone, on every worker."""
    server.disable(names={"status"})
    return "locked"


if __name__ == "__main__":
    server.run()
