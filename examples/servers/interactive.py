"""Talking back to the client: progress, logs, elicitation, sampling and roots.

mcpkit run examples/servers/interactive.py
"""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from mcpkit import Context, Server

server = Server("interactive", version="1.0.0")


class Preferences(BaseModel):
    language: str
    formal: bool = False


@server.tool()
async def translate(text: str, ctx: Context) -> str:
    """Translate a text: asks the user for preferences, then the client's model."""
    prefs = await ctx.elicit("How should I translate this?", Preferences)
    if not prefs.accepted or prefs.data is None:
        return "translation cancelled"
    tone = "formal" if prefs.data.formal else "casual"
    await ctx.info(f"translating to {prefs.data.language} ({tone})")
    result = await ctx.sample(
        f"Translate to {prefs.data.language}, {tone} tone:\n\n{text}",
        system_prompt="You are a translator. Answer with the translation only.",
        max_tokens=500,
    )
    return getattr(result.content, "text", "")


@server.tool()
async def index_workspace(ctx: Context) -> str:
    """Walk the client's roots, reporting progress; stops when cancelled."""
    roots = await ctx.list_roots()
    for i, root in enumerate(roots, start=1):
        await ctx.report_progress(i, len(roots), f"indexing {root.uri}")
        await anyio.sleep(0.01)
    return f"indexed {len(roots)} root(s)"


if __name__ == "__main__":
    server.run()
