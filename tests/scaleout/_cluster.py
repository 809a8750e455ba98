"""A real Redis server and a cluster of mcpkit workers behind the round-robin proxy.

``redis_server()`` starts the system's ``redis-server`` on a free port (no persistence);
``cluster()`` starts N ``mcpkit run FILE --transport http --redis URL`` workers and the
proxy in front of them. As a script, it runs a cluster until it gets SIGTERM (a
deployment to point a harness at by hand): ``python tests/scaleout/_cluster.py --port P
--redis URL``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
PROXY = Path(__file__).with_name("_rrproxy.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes] | None = None, timeout: float = 30) -> None:
    """Until ``port`` accepts connections (bounded; fails at once if ``proc`` exited).

    Given ``proc``, until ``proc`` (or a child of it) is what listens there: ``free_port``
    only found the port free a moment ago, and under a parallel run another test's server
    may take it meanwhile (a worker that waits 5 s on a Redis that never answers before it
    listens was once answered by another test's server)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening")
        if proc is not None:
            if _listens(proc.pid, port):
                return
        else:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing of ours listens on port {port} after {timeout} s")


def _listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` or one of its children holds a socket listening on ``port``
    (Linux: /proc/net/tcp{,6} name the socket's inode, /proc/PID/fd the holder's)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                # local address "HEXIP:HEXPORT", state 0A = LISTEN, inode in column 10
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return False
    pids = [pid]
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            pids += [int(c) for c in (task / "children").read_text().split()]
    for p in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{p}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in inodes:
                        return True
    return False


def redis_binary() -> str:
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None
    )
    if found is None:
        raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
    return found


@dataclass
class RedisServer:
    port: int
    proc: subprocess.Popen[bytes]
    workdir: Path
    durable: bool = False
    #: More ``redis-server`` options (``--requirepass PW``).
    extra: Sequence[str] = ()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = _spawn_redis(self.port, self.workdir, self.durable, self.extra)
        wait_port(self.port, self.proc)

    def stop(self) -> None:
        stop_process(self.proc)


def _spawn_redis(
    port: int, workdir: Path, durable: bool = False, extra: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    # Durable: every write in the append-only file before it is acknowledged.
    aof = ["--appendonly", "yes", "--appendfsync", "always"] if durable else ["--appendonly", "no"]
    args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", *aof, "--dir", str(workdir)]
    return subprocess.Popen(
        [redis_binary(), *args, *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


@contextlib.contextmanager
def redis_server(
    workdir: Path, *, durable: bool = False, extra: Sequence[str] = ()
) -> Iterator[RedisServer]:
    """A ``redis-server`` on a free port, with ``extra`` options, until the block ends."""
    port = free_port()
    proc = _spawn_redis(port, workdir, durable, extra)
    server = RedisServer(port, proc, workdir, durable, extra)
    try:
        wait_port(port, server.proc)
        yield server
    finally:
        server.stop()


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM ``proc`` and wait for it (bounded), then SIGKILL if it is still there."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@dataclass
class Cluster:
    url: str
    workers: list[subprocess.Popen[bytes]]
    worker_urls: list[str]
    proxy: subprocess.Popen[bytes]
    logs: list[Path] = field(default_factory=list)


def _mcpkit() -> list[str]:
    exe = Path(sys.executable).parent / "mcpkit"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mcpkit"]


def start_worker(
    redis_url: str,
    target: Path,
    port: int,
    log: Path,
    extra: list[str] | None = None,
    *,
    script: bool = False,
    flag: bool = False,
) -> subprocess.Popen[bytes]:
    """``mcpkit run TARGET -t http --port PORT EXTRA...`` on ``redis_url``, or, ``script``,
    ``python TARGET PORT EXTRA...`` (a file serving itself with ``server.run``).

    Both documented ways to name Redis are used: ``flag`` gives ``--redis URL`` (and no
    environment variable), otherwise ``MCPKIT_REDIS_URL`` is set."""
    env = {k: v for k, v in os.environ.items() if k != "MCPKIT_REDIS_URL"}
    if script or not flag:
        env["MCPKIT_REDIS_URL"] = redis_url
    argv = (
        [sys.executable, str(target), str(port), *(extra or [])]
        if script
        else [*_mcpkit(), "run", str(target), "--transport", "http", "--port", str(port)]
        + (["--redis", redis_url] if flag else [])
        + (extra or [])
    )
    with open(log, "ab") as out:
        return subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )


@contextlib.contextmanager
def cluster(
    redis_url: str,
    logdir: Path,
    *,
    workers: int = 3,
    target: Path = EVERYTHING,
    port: int | None = None,
    extra: list[str] | None = None,
    script: bool = False,
) -> Iterator[Cluster]:
    procs: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    logs: list[Path] = []
    proxy: subprocess.Popen[bytes] | None = None
    try:
        for i in range(workers):
            p = free_port()
            log = logdir / f"worker{i}.log"
            # Every other worker names Redis with the flag, the rest with the variable.
            procs.append(
                start_worker(redis_url, target, p, log, extra, script=script, flag=i % 2 == 0)
            )
            urls.append(f"http://127.0.0.1:{p}")
            logs.append(log)
        for u, proc in zip(urls, procs, strict=True):
            wait_port(int(u.rsplit(":", 1)[1]), proc)
        front = port or free_port()
        proxy = subprocess.Popen(
            [sys.executable, str(PROXY), str(front), *urls],
            stdout=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        wait_port(front, proxy)
        yield Cluster(f"http://127.0.0.1:{front}/mcp", procs, urls, proxy, logs)
    finally:
        for proc in [*procs, *([proxy] if proxy else [])]:
            stop_process(proc)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", required=True)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--logdir", default=None)
    args = parser.parse_args()
    stop = False

    def on_term(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    logdir = Path(args.logdir) if args.logdir else Path.cwd()
    with cluster(args.redis, logdir, workers=args.workers, port=args.port):
        while not stop:
            time.sleep(0.2)


if __name__ == "__main__":
    main()
