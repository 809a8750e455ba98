"""A tool with a side effect before its question: it happens once per call, in every era.

``pay`` records a charge, reports progress, then asks the user for a tip
(``ctx.elicit``). Under protocol revision 2026-07-28 the question ends the request and the
client sends it again with the answer; mcpkit keeps the call suspended where it asked and
resumes it, so the charge is recorded once. Run it over stdio (``python
examples/checkout.py``) or HTTP (``mcpkit run examples/checkout.py --transport http``);
the ledger is the file named by ``CHECKOUT_LEDGER`` (default: ``ledger.txt``).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel

from mcpkit import Context, Server

server = Server("checkout", version="1.0")


class Tip(BaseModel):
    percent: int = 0


def ledger() -> Path:
    """Where charges are recorded (one line each)."""
    return Path(os.environ.get("CHECKOUT_LEDGER", "ledger.txt"))


@server.tool()
async def pay(order: str, amount: float, ctx: Context) -> str:
    """Charge an order, then ask the user for a tip."""
    with ledger().open("a") as out:  # the side effect: once per call
        out.write(f"charge {order} {amount:.2f} pid={os.getpid()}\n")
    await ctx.report_progress(1, 2, "charged")
    answer = await ctx.elicit(f"Add a tip to order {order}?", Tip)
    tip = answer.data.percent if answer.accepted and answer.data is not None else 0
    await ctx.report_progress(2, 2, "done")
    return f"charged {order}: {amount:.2f} + {tip}% tip"


if __name__ == "__main__":
    server.run()
