"""A server whose tool asks, then works until told to stop: for killing the worker holding
its call while the retry with the answer is being served (tests/scaleout/test_held_across_workers.py).

``pay`` appends ``start <order> pid=<pid>`` to the ledger (``CHECKOUT_LEDGER``), asks for a
tip, appends ``answered <order> pid=<pid>``, then works until its worker is killed (60 s at most).
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from mcpkit import Context, Server

server = Server("slowpay")


def _ledger() -> Path:
    return Path(os.environ["CHECKOUT_LEDGER"])


def _note(line: str) -> None:
    with _ledger().open("a") as out:
        out.write(f"{line} pid={os.getpid()}\n")


@server.tool()
async def pay(order: str, ctx: Context) -> str:
    """Record the start, ask for a tip, record the answer, then work until released."""
    _note(f"start {order}")
    await ctx.elicit("Tip?", {"type": "object", "properties": {"percent": {"type": "integer"}}})
    _note(f"answered {order}")
    with anyio.fail_after(60):  # works until its worker is killed (bounded all the same)
        await anyio.Event().wait()
    return f"paid {order}"
