"""Calls per second of ``mcpkit.Client`` against an ``mcpkit.Server`` echo tool over stdio.

    python examples/client_bench.py [--n 2000] [--inflight 8,64] [--server-cmd "..."]

Without ``--server-cmd`` it starts this file with ``--serve`` (an ``mcpkit.Server`` with one
``echo(text: str) -> str`` tool, the same tool the shared benchmark peers expose), so the
figure is "our client against our server". Give another command to drive another server that
has an ``echo`` tool.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

import anyio


def serve() -> None:
    from mcpkit import Server

    server = Server("echo-bench")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text back."""
        return text

    server.run()


async def bench(cmd: list[str], n: int, inflight: list[int]) -> None:
    from mcpkit import Client

    t0 = time.perf_counter()
    async with Client(cmd) as client:
        await client.list_tools()
        print(
            f"connect+list: {(time.perf_counter() - t0) * 1000:.0f} ms ({client.server_info.name})"
        )
        for _ in range(200):
            await client.call_tool("echo", {"text": "hello"})
        lat: list[float] = []
        t = time.perf_counter()
        for _ in range(n):
            s = time.perf_counter()
            r = await client.call_tool("echo", {"text": "hello"})
            lat.append(time.perf_counter() - s)
        wall = time.perf_counter() - t
        assert r.content[0].text == "hello"  # type: ignore[union-attr]
        lat.sort()
        print(
            f"sequential: {n / wall:,.0f} calls/s  p50 {lat[n // 2] * 1000:.3f} ms  p99 {lat[n * 99 // 100] * 1000:.3f} ms"
        )
        for k in inflight:
            left = n

            async def worker() -> None:
                nonlocal left
                while left > 0:
                    left -= 1
                    await client.call_tool("echo", {"text": "hello"})

            t = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for _ in range(k):
                    tg.start_soon(worker)
            print(f"{k} in flight: {n / (time.perf_counter() - t):,.0f} calls/s")


def main() -> None:
    if "--serve" in sys.argv:
        serve()
        return
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--inflight", default="8,64")
    p.add_argument("--server-cmd", default=None)
    a = p.parse_args()
    cmd = shlex.split(a.server_cmd) if a.server_cmd else [sys.executable, __file__, "--serve"]
    anyio.run(bench, cmd, a.n, [int(x) for x in a.inflight.split(",") if x])


if __name__ == "__main__":
    main()
