"""Server CPU per sequential ``tools/call`` over stdio, ours against the bare floor (issue 35).

    python -m bench.stdio_cpu                   # 3 rounds, 20,000 calls each, pinned
    python -m bench.stdio_cpu --n 500 --rounds 1 --no-pin     # the smoke test's counts

A blocking client of a few lines (this process: write a line, read a line, no event loop)
drives each server over pipes: first ``--warmup`` calls, then ``--n`` timed ones. The server's
CPU time over the timed calls is read from ``/proc/<pid>/stat`` (Linux: user + system ticks),
so the figure is the server's own work per call, whatever the client costs. With ``--pin``
(the default) the client runs on the first CPU it may use and the server on the second, so
neither waits for the other's core: on a 2-core machine the shared driver's figures also carry the driver's own
~50 µs per call. The servers alternate, round by round: ``bench/servers/mcpkit_server.py``
(plain ``def`` tools, as users write them) and the harness's floor (a blocking read-line,
``orjson``, write-line loop: ``../shared/bench/floor/stdio_server.py``).

Prints one line per server and round, then the median ratio of calls/s (ours / floor).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

from bench.eras_load import cpu_seconds

ROOT = Path(__file__).resolve().parents[1]
#: The shared harness (its floor servers), as ``python -m bench`` finds it.
HARNESS = Path(os.environ.get("MCP_BENCH_HARNESS", ROOT.parent / "shared" / "bench")).resolve()
SERVERS = {
    "mcpkit": [sys.executable, str(ROOT / "bench" / "servers" / "mcpkit_server.py")],
    "floor": [sys.executable, str(HARNESS / "floor" / "stdio_server.py")],
}
CALL = {"name": "echo", "arguments": {"text": "hello"}}


def measure(cmd: list[str], n: int, warmup: int, server_cpu: int | None) -> dict[str, float]:
    """Drive ``cmd`` over stdio (on CPU ``server_cpu``, if given): its CPU µs per call and
    the calls per second."""

    def pin() -> None:  # in the child, best effort (a sandbox may refuse affinity)
        if server_cpu is not None:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, {server_cpu})

    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=pin)
    assert proc.stdin is not None and proc.stdout is not None
    write, flush, readline = proc.stdin.write, proc.stdin.flush, proc.stdout.readline

    def rpc(i: int, method: str, params: dict[str, object]) -> bytes:
        write(orjson.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}))
        write(b"\n")
        flush()
        line = readline()
        if not line:
            raise RuntimeError(f"{cmd[-1]} closed its stdout")
        return line

    try:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "stdio-cpu", "version": "1"},
        }
        rpc(0, "initialize", init)
        write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        flush()
        for i in range(1, warmup + 1):
            rpc(i, "tools/call", CALL)
        before, start = cpu_seconds(proc.pid), time.perf_counter()
        for i in range(warmup + 1, warmup + n + 1):
            answer = orjson.loads(rpc(i, "tools/call", CALL))
            if answer.get("id") != i or "result" not in answer:
                raise RuntimeError(f"unexpected answer: {answer!r}")
        wall = time.perf_counter() - start
        cpu = cpu_seconds(proc.pid) - before
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    return {"server_cpu_us": cpu * 1e6 / n, "calls_s": n / wall}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=20000, help="timed calls per server and round")
    p.add_argument("--warmup", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-pin", dest="pin", action="store_false", help="leave CPUs to the OS")
    a = p.parse_args(argv)
    cpus = sorted(os.sched_getaffinity(0))
    server_cpu = None
    if a.pin and len(cpus) >= 2:  # the first two CPUs we may use: this process, the server
        try:
            os.sched_setaffinity(0, {cpus[0]})
            server_cpu = cpus[1]
        except OSError:  # a sandbox that refuses affinity: unpinned figures
            pass
    ratios = []
    for r in range(1, a.rounds + 1):
        got = {name: measure(cmd, a.n, a.warmup, server_cpu) for name, cmd in SERVERS.items()}
        for name, m in got.items():
            print(
                f"round {r} {name:7s} server CPU {m['server_cpu_us']:6.1f} µs per call, "
                f"{m['calls_s']:8.0f} calls/s"
            )
        ratios.append(got["mcpkit"]["calls_s"] / got["floor"]["calls_s"])
    print(
        f"mcpkit / floor, calls/s (median of {len(ratios)} rounds): {statistics.median(ratios):.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
