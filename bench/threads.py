"""``python -m bench threads [N]``: what a sync tool's hop to a worker thread costs, through
mcpkit's own pool and through the maintained alternatives, in the same run.

Every call of a sync tool function goes to a worker thread (issue 43, W5), so this hop is
on the path of every ``def`` tool. mcpkit uses a small pool of its own on asyncio (a queue
put and a ``call_soon_threadsafe`` per job; see docs/dependencies.md); its peers here are
``anyio.to_thread.run_sync`` (what trio uses, and what the pool would otherwise be) and
asyncio's ``loop.run_in_executor``, with the default executor and with a dedicated
``ThreadPoolExecutor`` of the pool's size (the caller's context copied, as ours does). Each runs N calls of a
function that returns at once, sequentially and with 64 in flight, on the asyncio loop
(uvloop when installed, as ``mcpkit run`` does), median of 5 rounds, in microseconds per
call of wall time.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread

from mcpkit._server._threads import MAX_THREADS, run_sync

Hop = Callable[[Callable[..., Any]], Awaitable[Any]]


def _work(x: int = 1) -> int:
    return x + 1


async def _ours(fn: Callable[..., Any]) -> Any:
    return await run_sync(fn, {})


async def _anyio(fn: Callable[..., Any]) -> Any:
    return await anyio.to_thread.run_sync(fn)


async def _executor(fn: Callable[..., Any]) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, fn)


_dedicated = concurrent.futures.ThreadPoolExecutor(max_workers=MAX_THREADS)


async def _dedicated_executor(fn: Callable[..., Any]) -> Any:
    call = functools.partial(contextvars.copy_context().run, fn)
    return await asyncio.get_running_loop().run_in_executor(_dedicated, call)


HOPS: dict[str, Hop] = {
    "mcpkit's pool": _ours,
    "anyio.to_thread.run_sync": _anyio,
    "loop.run_in_executor": _executor,
    "run_in_executor, own pool": _dedicated_executor,
}


async def _round(hop: Hop, n: int, in_flight: int) -> float:
    """Microseconds of wall time per call: ``n`` calls, ``in_flight`` at a time."""
    for _ in range(50):  # warm: threads started
        await hop(_work)
    per_worker = n // in_flight
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(in_flight):

            async def worker() -> None:
                for _ in range(per_worker):
                    await hop(_work)

            tg.start_soon(worker)
    return (time.perf_counter() - start) / (per_worker * in_flight) * 1e6


def _loop_factory() -> Any:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 20_000
    factory = _loop_factory()
    loop_name = "uvloop" if factory is not None else "asyncio"
    print(f"a sync function's hop to a worker thread and back, {n} calls, {loop_name} loop")
    print(f"{'':28} {'sequential':>12} {'64 in flight':>14}   (us/call, median of 5)")
    for label, hop in HOPS.items():
        cells = []
        for in_flight in (1, 64):
            runs = []
            for _ in range(5):
                options: dict[str, Any] = {"use_uvloop": factory is not None}
                runs.append(anyio.run(_round, hop, n, in_flight, backend_options=options))
            cells.append(statistics.median(runs))
        print(f"{label:28} {cells[0]:>12.1f} {cells[1]:>14.1f}")
    _dedicated.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
