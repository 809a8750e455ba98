"""Engine micro-benchmark: request/response round trips per second through mcpkit's layers.

    python -m bench.engine                 # full counts (about a minute)
    python -m bench.engine --quick         # tiny counts (a few seconds; the smoke test uses it)
    python -m bench.engine --cases 'stdio' --n 5000 --json out.json

Cases (each: N sequential round trips, then N with ``--width`` (64) in flight):

* ``engine/memory``: two ``JSONRPCEngine`` in this process over ``memory_pair``; the server
  answers every request with its params.
* ``engine/stdio``: the same server in a child process (``bench/echo_engine_server.py``) over
  ``stdio_server``; the client engine on ``spawn_stdio``.
* ``session/memory``, ``session/stdio``: ``ClientSession`` -> ``ServerSession`` ``tools/call``
  of an ``echo`` tool (``bench/session_server.py``), in process and over stdio.
* ``official/stdio``: the official SDK (``mcp``) doing the same: its ``ClientSession.call_tool``
  over its ``stdio_client`` against its low-level ``Server`` (``bench/official_lowlevel_server.py``).

``--repeat R`` runs each phase R times on the same connection and keeps the best run (the
least disturbed one on a shared machine); all runs are stored under ``runs``.

Prints a table and writes JSON to ``bench/results/engine-<time>.json`` (or ``--json PATH``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import re
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
ARGS = {"text": "hello"}
TOOL_CALL = {"name": "echo", "arguments": ARGS}

Call = Callable[[], Awaitable[Any]]

#: Set by ``--profile DIR``: servers run under cProfile, the client is profiled while measuring.
PROFILE_DIR: Path | None = None
_current_case = ""


def _server_args(script: str) -> list[str]:
    if PROFILE_DIR is None:
        return [str(HERE / script)]
    out = PROFILE_DIR / f"{_current_case.replace('/', '-')}-server.prof"
    return ["-m", "cProfile", "-o", str(out), str(HERE / script)]


# --------------------------------------------------------------------------- cases


@contextlib.asynccontextmanager
async def engine_memory() -> AsyncIterator[Call]:
    from mcpkit._incoming import IncomingRequest
    from mcpkit._jsonrpc import JSONRPCEngine
    from mcpkit._transports import memory_pair

    async def echo(req: IncomingRequest) -> Any:
        return req.params or {}

    async def refuse(req: IncomingRequest) -> Any:
        raise AssertionError("the server sends no requests")

    a, b = memory_pair()
    server = JSONRPCEngine(b, on_request=echo, name="server")
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run)
        async with JSONRPCEngine(a, on_request=refuse, name="client") as client:

            async def call() -> Any:
                return await client.request("echo", ARGS)

            yield call
        tg.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def engine_stdio() -> AsyncIterator[Call]:
    from mcpkit._incoming import IncomingRequest
    from mcpkit._jsonrpc import JSONRPCEngine
    from mcpkit._transports import spawn_stdio

    async def refuse(req: IncomingRequest) -> Any:
        raise AssertionError("the server sends no requests")

    async with (
        spawn_stdio(sys.executable, _server_args("echo_engine_server.py")) as transport,
        JSONRPCEngine(transport, on_request=refuse, name="client") as client,
    ):

        async def call() -> Any:
            return await client.request("echo", ARGS)

        yield call


@contextlib.asynccontextmanager
async def _client_session(transport: Any) -> AsyncIterator[Call]:
    from mcpkit._session import ClientSession

    async with ClientSession(transport, client_info={"name": "bench", "version": "0"}) as session:
        await session.initialize(timeout=30)
        send = session.send_request

        async def call() -> Any:
            return await send("tools/call", TOOL_CALL)

        yield call


@contextlib.asynccontextmanager
async def session_memory() -> AsyncIterator[Call]:
    from mcpkit._transports import memory_pair

    from .session_server import make_session

    a, b = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(make_session(b).run)
        async with _client_session(a) as call:
            yield call
        tg.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def session_stdio() -> AsyncIterator[Call]:
    from mcpkit._transports import spawn_stdio

    async with (
        spawn_stdio(sys.executable, _server_args("session_server.py")) as transport,
        _client_session(transport) as call,
    ):
        yield call


@contextlib.asynccontextmanager
async def official_stdio() -> AsyncIterator[Call]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=_server_args("official_lowlevel_server.py")
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()

        async def call() -> Any:
            return await session.call_tool("echo", ARGS)

        yield call


CASES: dict[str, Callable[[], contextlib.AbstractAsyncContextManager[Call]]] = {
    "engine/memory": engine_memory,
    "engine/stdio": engine_stdio,
    "session/memory": session_memory,
    "session/stdio": session_stdio,
    "official/stdio": official_stdio,
}
#: (ours, theirs): ratios printed and stored when both ran.
RATIOS = [("session/stdio", "official/stdio")]


# --------------------------------------------------------------------------- measuring


async def sequential(call: Call, n: int) -> dict[str, float]:
    clock = time.perf_counter
    lat = []
    start = clock()
    for _ in range(n):
        t = clock()
        await call()
        lat.append(clock() - t)
    total = clock() - start
    lat.sort()
    return {
        "seq_calls_s": n / total,
        "seq_p50_ms": statistics.median(lat) * 1e3,
        "seq_p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e3,
    }


async def concurrent(call: Call, n: int, width: int) -> float:
    left = n

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await call()

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(width):
            tg.start_soon(worker)
    return n / (time.perf_counter() - start)


async def run_case(
    name: str, n: int, width: int, warmup: int, limit: float, repeat: int = 1
) -> dict[str, Any]:
    global _current_case
    _current_case = name
    row: dict[str, Any] = {"case": name, "n": n, "width": width, "repeat": repeat}
    profiler = None
    with anyio.fail_after(limit):
        start = time.perf_counter()
        async with CASES[name]() as call:
            row["connect_ms"] = (time.perf_counter() - start) * 1e3
            for _ in range(warmup):
                await call()
            if PROFILE_DIR is not None:
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            seqs = [await sequential(call, n) for _ in range(repeat)]
            concs = [await concurrent(call, n, width) for _ in range(repeat)]
            if profiler is not None:
                profiler.disable()
    if profiler is not None:
        assert PROFILE_DIR is not None
        profiler.dump_stats(PROFILE_DIR / f"{name.replace('/', '-')}-client.prof")
    # On a shared machine the best of several runs is the least disturbed one.
    row.update(max(seqs, key=lambda r: r["seq_calls_s"]))
    row[f"conc{width}_calls_s"] = max(concs)
    if repeat > 1:
        row["runs"] = {"seq_calls_s": [r["seq_calls_s"] for r in seqs], "conc_calls_s": concs}
    return row


# --------------------------------------------------------------------------- output


def table(rows: list[dict[str, Any]], width: int) -> str:
    head = f"{'case':<16} {'seq calls/s':>12} {'p50 ms':>8} {'p99 ms':>8} {f'conc{width} calls/s':>15} {'connect ms':>11}"
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['case']:<16} error: {r['error']}")
            continue
        lines.append(
            f"{r['case']:<16} {r['seq_calls_s']:>12,.0f} {r['seq_p50_ms']:>8.3f} "
            f"{r['seq_p99_ms']:>8.3f} {r[f'conc{width}_calls_s']:>15,.0f} {r['connect_ms']:>11.0f}"
        )
    return "\n".join(lines)


def ratios(rows: list[dict[str, Any]], width: int) -> dict[str, dict[str, float]]:
    by = {r["case"]: r for r in rows if "error" not in r}
    out = {}
    for ours, theirs in RATIOS:
        if ours in by and theirs in by:
            out[f"{ours} / {theirs}"] = {
                k: by[ours][k] / by[theirs][k] for k in ("seq_calls_s", f"conc{width}_calls_s")
            }
    return out


_SELECT_WAIT = ("<method 'poll' of 'select.", "<method 'select' of 'select.", "<method 'control'")


def print_profiles(row: dict[str, Any], top: int) -> None:
    """Top functions by own time, per measured call, for each profile of one case."""
    import pstats

    assert PROFILE_DIR is not None
    calls = 2 * row["n"] * row["repeat"]  # sequential + concurrent phases
    for side in ("client", "server"):
        path = PROFILE_DIR / f"{row['case'].replace('/', '-')}-{side}.prof"
        if not path.is_file():
            print(f"\n{row['case']} {side}: no profile ({path.name} missing)")
            continue
        stats: dict[Any, Any] = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
        # Time blocked in the selector is waiting for the peer, not work: shown apart.
        waiting = sum(v[2] for (_, _, fn), v in stats.items() if fn.startswith(_SELECT_WAIT))
        busy = {k: v for k, v in stats.items() if not k[2].startswith(_SELECT_WAIT)}
        total = sum(v[2] for v in busy.values())
        note = " (whole process: start-up and warm-up included)" if side == "server" else ""
        print(
            f"\n{row['case']} {side}: {total / calls * 1e6:.0f} us busy + "
            f"{waiting / calls * 1e6:.0f} us waiting in the selector per call{note}"
        )
        print(f"  {'own %':>6} {'us/call':>8} {'n/call':>7}  function")
        for (file, line, fn), v in sorted(busy.items(), key=lambda kv: -kv[1][2])[:top]:
            where = f"{Path(file).name}:{line}" if file != "~" else ""
            print(
                f"  {v[2] / total * 100:6.1f} {v[2] / calls * 1e6:8.2f} {v[1] / calls:7.2f}  "
                f"{fn} {where}"
            )


async def amain(ns: argparse.Namespace) -> dict[str, Any]:
    selected = [c for c in CASES if re.search(ns.cases, c)]
    rows = []
    for name in selected:
        try:
            row = await run_case(name, ns.n, ns.width, ns.warmup, ns.limit, ns.repeat)
        except Exception as e:  # one broken peer must not hide the other figures
            row = {"case": name, "error": f"{type(e).__name__}: {e}"}
        rows.append(row)
        print(table([row], ns.width).splitlines()[-1], file=sys.stderr, flush=True)
    return {
        "bench": "engine",
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "backend": ns.backend,
        "quick": ns.quick,
        "rows": rows,
        "ratios": ratios(rows, ns.width),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny counts (smoke test)")
    ap.add_argument("--n", type=int, help="round trips per phase (default 3000; quick: 50)")
    ap.add_argument("--width", type=int, default=64, help="requests in flight (default 64)")
    ap.add_argument("--warmup", type=int, help="calls before measuring (default 300; quick: 5)")
    ap.add_argument(
        "--repeat", type=int, default=1, help="runs per phase on one connection; the best is kept"
    )
    ap.add_argument("--cases", default=".", help="regex on case names")
    ap.add_argument("--backend", default="asyncio", choices=["asyncio", "trio"])
    ap.add_argument("--limit", type=float, default=300.0, help="seconds allowed per case")
    ap.add_argument("--json", type=Path, help="where to write the results")
    ap.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="cProfile the client while measuring and each server process; print the top "
        "functions per call (figures are then slower: profiler overhead)",
    )
    ap.add_argument("--top", type=int, default=15, help="functions shown per profile")
    ns = ap.parse_args(argv)
    if ns.profile is not None:
        global PROFILE_DIR
        ns.profile.mkdir(parents=True, exist_ok=True)
        PROFILE_DIR = ns.profile.resolve()
    ns.n = ns.n or (50 if ns.quick else 3000)
    ns.warmup = ns.warmup if ns.warmup is not None else (5 if ns.quick else 300)
    result = anyio.run(amain, ns, backend=ns.backend)
    print(table(result["rows"], ns.width))
    for name, r in result["ratios"].items():
        print(f"{name}: " + ", ".join(f"{k} x{v:.2f}" for k, v in r.items()))
    if PROFILE_DIR is not None:
        for row in result["rows"]:
            if "error" not in row:
                print_profiles(row, ns.top)
    path = ns.json or RESULTS / f"engine-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 1 if any("error" in r for r in result["rows"]) else 0


if __name__ == "__main__":
    sys.exit(main())
