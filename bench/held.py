"""``python -m bench held [N]``: what a question held across rounds costs in memory.

Under 2026-07-28 a call that asks the client for input is held where it asked until the
retry brings the answer (``StatelessSettings.hold_calls``). This holds N such calls at once
(a tool like examples/checkout.py: an effect, then ``ctx.elicit``), each its first round
served through the app in process, and reports the memory they keep: Python's own
allocations (tracemalloc, the difference once all are held) and the process's resident
size, per held call; then the retries answer them all and the memory they kept is freed.
Its peer for comparison is the same round with ``hold_calls=False`` (the function ends at
its question; nothing is kept but the sealed state the client carries).
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from typing import Any

import anyio
import orjson

from mcpkit import Client, Context, Server, StatelessSettings
from mcpkit.lowlevel import ASGIClient

FORM = {"type": "object", "properties": {"percent": {"type": "integer"}}}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "pay",
}


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _server(hold: bool) -> Server:
    server = Server("held-bench", stateless=StatelessSettings(hold_calls=hold, max_held=100_000))
    ledger: list[str] = []

    @server.tool()
    async def pay(order: str, ctx: Context) -> str:
        """An effect, then a question."""
        ledger.append(order)
        answer = await ctx.elicit("Tip?", FORM)
        return f"{order}: {(answer.content or {}).get('percent')}"

    return server


def _body(i: int, **more: Any) -> dict[str, Any]:
    params = {"name": "pay", "arguments": {"order": f"o{i}"}, "_meta": META, **more}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}


async def _run(n: int, hold: bool) -> dict[str, float]:
    server = _server(hold)
    async with ASGIClient(server.http_app(json_response=True)) as http:
        url = "http://127.0.0.1:8000/mcp"
        # Warm up (imports, caches) before measuring.
        await http.post(url, content=orjson.dumps(_body(0)), headers=HEADERS)
        gc.collect()
        tracemalloc.start()
        base, rss0 = tracemalloc.get_traced_memory()[0], _rss_kib()
        states = []
        for i in range(1, n + 1):
            resp = await http.post(url, content=orjson.dumps(_body(i)), headers=HEADERS)
            states.append(orjson.loads(await resp.aread())["result"]["requestState"])
        gc.collect()
        held, rss1 = tracemalloc.get_traced_memory()[0], _rss_kib()
        tip = {"action": "accept", "content": {"percent": 5}}
        for i, state in enumerate(states, 1):
            more = {"inputResponses": {"elicitation-1": tip}, "requestState": state}
            resp = await http.post(url, content=orjson.dumps(_body(i, **more)), headers=HEADERS)
            assert orjson.loads(await resp.aread())["result"]["content"][0]["text"] == f"o{i}: 5"
        del states
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    return {
        "python_bytes_per_call": (held - base) / n,
        "rss_bytes_per_call": (rss1 - rss0) * 1024 / n,
        "python_bytes_left_after": float(after - base),
    }


async def _speed(n: int, hold: bool, askable: bool = True) -> float:
    """Microseconds per sequential call of a tool that takes a Context and asks nothing
    (a held call's other cost: it starts in a task of the server's), over the in-memory
    transport (the least else to measure), by a client that declares elicitation
    (``askable``: its calls may be asked something, so they are held) or nothing."""
    server = _server(hold)

    @server.tool()
    async def quick(ctx: Context) -> str:
        """Takes a Context, asks nothing."""
        return "ok"

    handler = (lambda params, ctx: {"action": "decline"}) if askable else None
    async with Client(server, protocol_version="2026-07-28", elicitation_handler=handler) as client:
        for _ in range(min(n, 300)):
            await client.call_tool("quick", {})
        start = time.perf_counter()
        for _ in range(n):
            await client.call_tool("quick", {})
        return (time.perf_counter() - start) / n * 1e6


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 2000
    print(f"{n} calls each waiting for its answer (2026-07-28, in process)")
    print(f"{'':24} {'Python B/call':>14} {'RSS B/call':>12} {'left after':>12}")
    for label, hold in (("held (default)", True), ("not held (peer)", False)):
        got = anyio.run(_run, n, hold)
        print(
            f"{label:24} {got['python_bytes_per_call']:>14,.0f} "
            f"{got['rss_bytes_per_call']:>12,.0f} {got['python_bytes_left_after']:>12,.0f}"
        )
    print("a Context tool that asks nothing, sequential calls in process (median of 5 runs)")
    rows = (
        ("client declaring elicitation: held (default)", True, True),
        ("client declaring elicitation: not held (peer)", False, True),
        ("client declaring nothing (never held)", True, False),
    )
    for label, hold, askable in rows:
        # As many calls as held ones asked for, at least 3,000 unless fewer were asked for.
        runs = sorted(
            anyio.run(_speed, max(n, 3000) if n >= 1000 else n, hold, askable) for _ in range(5)
        )
        print(f"{label:48} {runs[2]:>8.1f} us/call")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
