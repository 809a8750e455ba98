"""mcpkit's own client (``mcpkit.Client``) driving any MCP server with an ``echo`` tool.

    python bench/clients/mcpkit_client.py --stdio-cmd "python bench/servers/mcpkit_server.py"
    python bench/clients/mcpkit_client.py --url http://127.0.0.1:18950/mcp

Same workload and output as the SDK clients of the shared harness: connect and ``tools/list``
(for stdio this includes starting the server), ``--warmup`` calls, ``--n`` sequential
``echo`` calls, then over stdio ``--conc-total`` calls at each ``--conc`` level in flight on
the one connection, over HTTP ``--conc-total`` calls spread over ``--sessions`` sessions (one
in flight each). Prints one JSON line:
``{"label", "client", "transport", "bench": "sdkclient", "metrics": {...}}``.
The client is used with its defaults (output validated against the tool's ``outputSchema``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio

from mcpkit import Client


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def _stats(lat_ns: list[int], wall: float, prefix: str) -> dict[str, float]:
    ms = [x / 1e6 for x in lat_ns]
    return {
        f"{prefix}_calls_s": round(len(ms) / wall, 1),
        f"{prefix}_p50_ms": round(_pct(ms, 50), 3),
        f"{prefix}_p99_ms": round(_pct(ms, 99), 3),
    }


async def _call(client: Client) -> None:
    result = await client.call_tool("echo", {"text": "hello"})
    text = getattr(result.content[0], "text", None)
    if text != "hello":
        raise AssertionError(f"echo returned {result!r}")


async def _workers(
    clients: list[Client],
    inflight: int,
    total: int,
    call: Callable[[Client], Awaitable[None]],
    prefix: str,
) -> dict[str, float]:
    left = total
    lat: list[int] = []

    async def worker(client: Client) -> None:
        nonlocal left
        while left > 0:
            left -= 1
            t = time.perf_counter_ns()
            await call(client)
            lat.append(time.perf_counter_ns() - t)

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(inflight):
            tg.start_soon(worker, clients[i % len(clients)])
    return _stats(lat, time.perf_counter() - t0, prefix)


async def run(a: argparse.Namespace) -> dict[str, Any]:
    target: Any = shlex.split(a.stdio_cmd) if a.stdio_cmd else a.url
    m: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        t0 = time.perf_counter()
        client = await stack.enter_async_context(Client(target))
        await client.list_tools()
        m["connect_list_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        m["protocol"] = client.protocol_version
        for _ in range(a.warmup):
            await _call(client)
        m.update(await _workers([client], 1, a.n, _call, "seq"))
        if a.stdio_cmd:
            for k in a.conc:
                m.update(await _workers([client], k, a.conc_total, _call, f"conc{k}"))
        elif a.sessions:
            t0 = time.perf_counter()
            clients = [await stack.enter_async_context(Client(target)) for _ in range(a.sessions)]
            m[f"sess{a.sessions}_init_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            m.update(await _workers(clients, a.sessions, a.conc_total, _call, f"sess{a.sessions}"))
    return m


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--stdio-cmd", help="server command line (the client spawns it)")
    g.add_argument("--url", help="Streamable HTTP endpoint (server already running)")
    p.add_argument("--label", default="?")
    p.add_argument("--client-name", default="mcpkit")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--conc", default="8,64")
    p.add_argument("--conc-total", type=int, default=2000)
    p.add_argument("--sessions", type=int, default=32)
    a = p.parse_args(argv)
    a.conc = [int(x) for x in a.conc.split(",") if x]
    metrics = anyio.run(run, a)
    out = {
        "label": a.label,
        "client": a.client_name,
        "transport": "stdio" if a.stdio_cmd else "http",
        "bench": "sdkclient",
        "metrics": metrics,
    }
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
