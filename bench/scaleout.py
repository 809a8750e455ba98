"""Calls/s with sessions in Redis against sessions in memory, and Redis commands per call.

    python -m bench.scaleout [--n 2000]

Starts a real redis-server (the system's), then measures with the shared neutral driver
(``../shared/bench/driver/mcpdrive.py``, sequential calls and 32 concurrent sessions):

- one worker, state in memory (the floor of this comparison);
- one worker, state in Redis (``MCPKIT_REDIS_URL``);
- three workers on Redis behind the round-robin proxy of the tests, and one in-memory
  worker behind the same proxy (the proxy's own cost, so the two can be compared).

Redis commands per ``tools/call`` come from ``INFO commandstats`` around a sequential run.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT.parent / "shared" / "bench" / "driver" / "mcpdrive.py"
SERVER = ROOT / "bench" / "servers" / "mcpkit_server.py"
sys.path.insert(0, str(ROOT))
from tests.scaleout._cluster import PROXY, free_port, wait_port  # noqa: E402
from tests.scaleout._cluster import stop_process as _stop  # noqa: E402


@contextlib.contextmanager
def _procs(argvs: list[list[str]], env: dict[str, str], ports: list[int]) -> Iterator[None]:
    procs = [
        subprocess.Popen(a, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for a in argvs
    ]
    try:
        for p, port in zip(procs, ports, strict=True):
            wait_port(port, p)
        yield
    finally:
        for p in procs:
            _stop(p)


def _drive(url: str, n: int, label: str) -> dict[str, float]:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "drive.py"),
            str(DRIVER),
            "http",
            "--url",
            url,
            "--n",
            str(n),
            "--warmup",
            "200",
            "--sessions",
            "32",
            "--payload-n",
            "0",
            "--label",
            label,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    metrics = json.loads(out.stdout.strip().splitlines()[-1])["metrics"]
    return {k: v for k, v in metrics.items() if isinstance(v, (int, float))}


def _calls(r: redis.Redis) -> int:
    stats = r.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--json", action="store_true", help="JSON responses (default: SSE)")
    args = parser.parse_args()
    exe = shutil.which("redis-server")
    if exe is None:
        raise SystemExit("redis-server is not installed")
    mode = ["--json"] if args.json else []
    results: dict[str, object] = {"responses": "json" if args.json else "sse", "n": args.n}
    with tempfile.TemporaryDirectory() as tmp:
        rport = free_port()
        redis_proc = subprocess.Popen(
            [exe, "--port", str(rport), "--save", "", "--appendonly", "no", "--dir", tmp],
            stdout=subprocess.DEVNULL,
        )
        try:
            wait_port(rport, redis_proc)
            url = f"redis://127.0.0.1:{rport}/0"
            r = redis.Redis(port=rport)
            plain = {k: v for k, v in os.environ.items() if k != "MCPKIT_REDIS_URL"}
            shared = {**plain, "MCPKIT_REDIS_URL": url}
            for label, env in (("memory", plain), ("redis", shared)):
                port = free_port()
                with _procs(
                    [[sys.executable, str(SERVER), "--http", str(port), *mode]], env, [port]
                ):
                    before = _calls(r)
                    results[f"1 worker, {label}"] = _drive(
                        f"http://127.0.0.1:{port}/mcp", args.n, label
                    )
                    if label == "redis":
                        # initialize + initialized per session, then the calls.
                        results["redis commands per call (incl. handshakes)"] = (
                            _calls(r) - before
                        ) / (args.n + 200 + 32 * 100)
            for label, env, count in (("memory", plain, 1), ("redis", shared, 3)):
                ports = [free_port() for _ in range(count)]
                front = free_port()
                argvs = [[sys.executable, str(SERVER), "--http", str(p), *mode] for p in ports]
                with _procs(argvs, env, ports):
                    proxy = [sys.executable, str(PROXY), str(front)]
                    proxy += [f"http://127.0.0.1:{p}" for p in ports]
                    with _procs([proxy], plain, [front]):
                        key = f"{count} worker(s), {label}, behind the round-robin proxy"
                        results[key] = _drive(f"http://127.0.0.1:{front}/mcp", args.n, label)
            r.close()
        finally:
            _stop(redis_proc)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
