"""Soak benchmark: hours of mixed traffic compressed into minutes against ONE server process.

``python -m bench.soak [--minutes M] [--transport http|stdio] [--out FILE.json]``

One mcpkit server runs as a real subprocess (``mcpkit run FILE --transport http`` by default).
Worker tasks drive it with ``mcpkit.Client`` in a random mix (fixed seed): short sessions closed
properly, bursts of concurrent ``echo`` calls, calls cancelled mid-flight, failing tools, calls
with progress and logging, sessions cancelled abruptly, and (HTTP) sessions dropped at the TCP
level without ``DELETE``. Every ``--interval`` seconds the server's RSS, open fds and threads are
sampled from ``/proc``, with the server's live session count and GC object count (read through a
``stats`` tool of the server, public API: ``Server.sessions``).

It is a benchmark: the verdict (RSS and fds flat after the warm-up?) is printed, never
asserted. The exit status is 1 only when something crashed: the server died, or an operation
hung past its bound.

Over stdio the measured server is the one spawned by a long-lived client: bursts, cancels,
failures and progress go through that one connection; the session churn (short and abandoned
sessions) spawns servers of its own, which are exercised but not measured.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

import anyio

from mcpkit import Client

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent

#: An operation (one session's worth of traffic) must finish within this many seconds, or it
#: counts as hung. The client's own per-request timeout is shorter.
OP_BOUND = 30.0
CLIENT_TIMEOUT = 10.0
WARMUP_FRACTION = 0.2
RSS_FLAT = 0.05  # growth of the last third vs the middle third (after the warm-up)
FDS_SLACK = 2  # fds may move by this many (connections in flight) and still be flat

SERVER_SOURCE = '''\
"""The soak benchmark's server (written by bench/soak.py): public mcpkit API only."""

import gc
import sys
import threading

import anyio

from mcpkit import Context, Server

server = Server("soak", version="1.0")


@server.tool()
async def echo(text: str) -> str:
    """Echo the text."""
    return text


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
async def fail() -> str:
    """Always raise (an unexpected exception, not a ToolError)."""
    raise RuntimeError("soak: this tool always fails")


@server.tool()
async def work(steps: int, ctx: Context) -> int:
    """Log and report progress for each step."""
    for i in range(steps):
        await ctx.info(f"step {i + 1} of {steps}")
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        await anyio.sleep(0)
    return steps


@server.tool()
async def stats() -> dict:
    """Live sessions and GC objects of this process (for the benchmark's sampler)."""
    return {
        "sessions": len(server.sessions),
        "gc_objects": len(gc.get_objects()),
        "py_threads": threading.active_count(),
    }


if __name__ == "__main__":
    if len(sys.argv) > 1:  # PORT IDLE_TIMEOUT: HTTP with a compressed session idle timeout
        server.run("http", port=int(sys.argv[1]), session_idle_timeout=float(sys.argv[2]))
    else:
        server.run()  # stdio
'''


# ---------------------------------------------------------------------------- bookkeeping


@dataclass
class Stats:
    ops: Counter[str] = field(default_factory=Counter)
    op_errors: Counter[str] = field(default_factory=Counter)  # "kind: ExcType"
    error_examples: dict[str, str] = field(default_factory=dict)
    calls: int = 0  # calls answered (results, tool errors included)
    calls_cancelled: int = 0  # calls cancelled by the client mid-flight
    tool_errors: int = 0  # results with isError, as expected from `fail`
    sessions_opened: int = 0
    sessions_closed: int = 0  # closed properly (the client's context exited normally)
    sessions_abandoned: int = 0  # cancelled abruptly or dropped without DELETE
    connects_cancelled: int = 0  # abandoned before the handshake finished
    progress: int = 0
    logs: int = 0
    hangs: list[str] = field(default_factory=list)


@dataclass
class Sample:
    t: float
    rss_kib: int
    fds: int
    threads: int
    calls: int
    sessions_opened: int
    sessions_closed: int
    sessions_abandoned: int
    server_sessions: int | None
    gc_objects: int | None


def proc_sample(pid: int) -> tuple[int, int, int]:
    """(VmRSS in KiB, open fds, threads) of a process, from /proc."""
    rss = threads = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss, fds, threads


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def children_running(path: str) -> list[int]:
    """Pids of our child processes whose command line mentions ``path``."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != me:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if path in cmdline:
            found.append(int(entry))
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# ---------------------------------------------------------------------------- traffic


class Traffic:
    """The operations the workers pick from; each is one session's worth of traffic."""

    def __init__(
        self, transport: str, server_file: Path, url: str | None, port: int | None
    ) -> None:
        self.transport = transport
        self.server_file = server_file
        self.url = url
        self.port = port
        self.stats = Stats()
        self.shared: Client | None = None  # stdio: the measured server's one connection

    def _new_client(self) -> Client:
        target: Any = (
            self.url if self.transport == "http" else [sys.executable, str(self.server_file)]
        )
        return Client(
            target,
            timeout=CLIENT_TIMEOUT,
            logging_handler=self._on_log,
            on_stderr=self._on_stderr,
        )

    def _on_log(self, params: Any) -> None:
        self.stats.logs += 1

    def _on_progress(self, done: float, total: float | None, message: str | None) -> None:
        self.stats.progress += 1

    def _on_stderr(self, line: str) -> None:
        pass  # spawned stdio servers: tracebacks of `fail` are expected

    @contextlib.asynccontextmanager
    async def fresh(self) -> AsyncIterator[Client]:
        """A new session (over stdio: a new server process, not the measured one)."""
        client = self._new_client()
        async with client:
            self.stats.sessions_opened += 1
            yield client
        self.stats.sessions_closed += 1

    @contextlib.asynccontextmanager
    async def measured(self) -> AsyncIterator[Client]:
        """A session on the measured server: a new one over HTTP, the shared one over stdio."""
        if self.shared is not None:
            yield self.shared
            return
        async with self.fresh() as client:
            yield client

    async def _call(self, client: Client, name: str, args: dict[str, Any]) -> Any:
        progress = self._on_progress if name == "work" else None
        result = await client.call_tool(name, args, progress_handler=progress)
        self.stats.calls += 1
        if result.is_error:
            self.stats.tool_errors += 1
        return result

    # -- the kinds of operation

    async def short_session(self, rng: random.Random) -> None:
        async with self.fresh() as c:
            await c.list_tools()
            for _ in range(rng.randint(1, 4)):
                if rng.random() < 0.7:
                    await self._call(c, "echo", {"text": "x" * rng.randint(1, 2000)})
                else:
                    await self._call(c, "work", {"steps": rng.randint(1, 5)})

    async def burst(self, rng: random.Random) -> None:
        n = rng.randint(20, 100)
        async with self.measured() as c, anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(self._call, c, "echo", {"text": f"burst {i}"})

    async def cancel_midflight(self, rng: random.Random) -> None:
        async with self.measured() as c:
            for _ in range(rng.randint(1, 3)):
                with anyio.move_on_after(rng.uniform(0.01, 0.2)) as scope:
                    await self._call(c, "slow", {"seconds": 5.0})
                if scope.cancelled_caught:
                    self.stats.calls_cancelled += 1
            # the session keeps working after its cancelled calls
            await self._call(c, "echo", {"text": "after cancel"})

    async def failing(self, rng: random.Random) -> None:
        async with self.measured() as c:
            for _ in range(rng.randint(1, 3)):
                result = await self._call(c, "fail", {})
                if not result.is_error:
                    raise AssertionError("fail() did not return an error result")
            await self._call(c, "echo", {"text": "after failures"})

    async def progress(self, rng: random.Random) -> None:
        async with self.measured() as c:
            await self._call(c, "work", {"steps": rng.randint(5, 30)})

    async def abandon_cancel(self, rng: random.Random) -> None:
        """A session whose owner is cancelled abruptly, mid-call (the client may still say
        goodbye: mcpkit's Client sends DELETE under a shield on the way out)."""
        opened = False
        with anyio.move_on_after(rng.uniform(0.05, 0.5)) as scope:
            async with self._new_client() as c:
                opened = True
                self.stats.sessions_opened += 1
                await self._call(c, "echo", {"text": "soon gone"})
                await self._call(c, "slow", {"seconds": 10.0})
        if not opened:
            self.stats.connects_cancelled += 1
        elif scope.cancelled_caught:
            self.stats.sessions_abandoned += 1
            self.stats.calls_cancelled += 1
        else:
            self.stats.sessions_closed += 1

    async def abandon_drop(self, rng: random.Random) -> None:
        """HTTP only: initialize by hand, start a slow call, then drop the TCP connection.
        No DELETE: the server keeps the session until its idle timeout."""
        assert self.port is not None
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "soak-dropper", "version": "1"},
            },
        }
        head, _ = await raw_post(self.port, init, None, until=b'"result"')
        match = re.search(rb"(?im)^mcp-session-id:\s*(\S+)", head)
        if match is None:
            raise RuntimeError(f"no Mcp-Session-Id in {head[:200]!r}")
        sid = match.group(1).decode()
        self.stats.sessions_opened += 1
        await raw_post(
            self.port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid, until=None
        )
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": rng.uniform(0.2, 3.0)}},
        }
        await raw_post(self.port, call, sid, until=None)  # headers only, then drop
        self.stats.sessions_abandoned += 1


async def raw_post(
    port: int, body: dict[str, Any], session_id: str | None, *, until: bytes | None
) -> tuple[bytes, bytes]:
    """POST one message over a fresh TCP connection; read the response head (and the body up
    to ``until``), then close the socket whatever the server is still sending."""
    payload = json.dumps(body).encode()
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {len(payload)}",
    ]
    if session_id is not None:
        lines += [f"Mcp-Session-Id: {session_id}", "MCP-Protocol-Version: 2025-11-25"]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode() + payload
    data = b""
    with anyio.fail_after(CLIENT_TIMEOUT):
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(request)
            while b"\r\n\r\n" not in data or (until is not None and until not in data):
                data += await stream.receive()
    head, _, rest = data.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0]
    if b" 200 " not in status + b" " and b" 202 " not in status + b" ":
        raise RuntimeError(f"unexpected answer {status!r}")
    return head, rest


# ---------------------------------------------------------------------------- the run


@dataclass
class Config:
    minutes: float
    transport: str
    out: Path
    workers: int
    interval: float
    seed: int
    idle_timeout: float | None


KINDS_HTTP = {
    "short_session": 30,
    "burst": 10,
    "cancel_midflight": 15,
    "failing": 15,
    "progress": 10,
    "abandon_cancel": 10,
    "abandon_drop": 10,
}
# Over stdio a new session is a new process (~0.3 s of CPU): less churn.
KINDS_STDIO = {
    "short_session": 3,
    "burst": 20,
    "cancel_midflight": 25,
    "failing": 25,
    "progress": 25,
    "abandon_cancel": 2,
}


class Soak:
    def __init__(self, cfg: Config, workdir: Path) -> None:
        self.cfg = cfg
        self.workdir = workdir
        self.server_file = workdir / "soak_server.py"
        self.server_file.write_text(SERVER_SOURCE)
        self.stderr_path = workdir / "server.stderr"
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid = 0
        self.port: int | None = None
        self.server_cmd: list[str] = []
        self.samples: list[Sample] = []
        self.crash: str | None = None
        self.t0 = 0.0
        url = None
        if cfg.transport == "http":
            self.port = free_port()
            url = f"http://127.0.0.1:{self.port}/mcp"
        self.traffic = Traffic(cfg.transport, self.server_file, url, self.port)
        self.monitor: Client | None = None

    # -- server

    def start_http_server(self) -> None:
        assert self.port is not None
        if self.cfg.idle_timeout is None:
            cmd = [str(VENV_BIN / "mcpkit"), "run", str(self.server_file)]
            cmd += ["--transport", "http", "--port", str(self.port)]
        else:
            cmd = [
                sys.executable,
                str(self.server_file),
                str(self.port),
                str(self.cfg.idle_timeout),
            ]
        self.server_cmd = cmd
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        self.pid = self.proc.pid

    async def wait_http_ready(self) -> None:
        assert self.port is not None and self.proc is not None
        with anyio.fail_after(30):
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"server exited with {self.proc.returncode}: {self.tail()}")
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", self.port)
                except OSError:
                    await anyio.sleep(0.05)
                    continue
                await stream.aclose()
                return

    def stop_server(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def tail(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def server_alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        return alive(self.pid)

    # -- sampling

    async def sample(self) -> None:
        if not self.server_alive():
            self.crash = f"server (pid {self.pid}) died; stderr tail:\n{self.tail()}"
            return
        try:
            rss, fds, threads = proc_sample(self.pid)
        except OSError as e:
            self.crash = f"server (pid {self.pid}) vanished: {e}"
            return
        sessions = gc_objects = None
        assert self.monitor is not None
        with anyio.fail_after(OP_BOUND):
            result = await self.monitor.call_tool("stats", {})
        info = result.structured_content or {}
        info = info.get("result", info)
        sessions = info.get("sessions")
        gc_objects = info.get("gc_objects")
        st = self.traffic.stats
        self.samples.append(
            Sample(
                t=round(time.monotonic() - self.t0, 2),
                rss_kib=rss,
                fds=fds,
                threads=threads,
                calls=st.calls,
                sessions_opened=st.sessions_opened,
                sessions_closed=st.sessions_closed,
                sessions_abandoned=st.sessions_abandoned,
                server_sessions=sessions,
                gc_objects=gc_objects,
            )
        )

    async def sampler(self, deadline: float, done: anyio.Event) -> None:
        while True:
            await self.sample()
            if self.crash is not None:
                done.set()
                return
            now = time.monotonic()
            if now >= deadline:
                return
            await anyio.sleep(min(self.cfg.interval, deadline - now))

    # -- workers

    async def worker(self, index: int, deadline: float, done: anyio.Event) -> None:
        rng = random.Random(self.cfg.seed * 1000 + index)
        kinds = KINDS_HTTP if self.cfg.transport == "http" else KINDS_STDIO
        names, weights = list(kinds), list(kinds.values())
        st = self.traffic.stats
        while time.monotonic() < deadline and not done.is_set():
            kind = rng.choices(names, weights)[0]
            op: Callable[[random.Random], Awaitable[None]] = getattr(self.traffic, kind)
            with anyio.CancelScope(deadline=anyio.current_time() + OP_BOUND) as bound:
                try:
                    await op(rng)
                    st.ops[kind] += 1
                except Exception as e:
                    key = f"{kind}: {type(e).__name__}"
                    st.op_errors[key] += 1
                    st.error_examples.setdefault(key, str(e)[:300])
            if bound.cancelled_caught:
                st.hangs.append(f"{kind} (worker {index}) at t={time.monotonic() - self.t0:.1f}s")
                done.set()
                return

    async def run(self) -> None:
        cfg = self.cfg
        if cfg.transport == "http":
            self.start_http_server()
            await self.wait_http_ready()
        async with contextlib.AsyncExitStack() as stack:
            self.monitor = self.traffic._new_client()
            # bounded by the client's init_timeout (a fail_after here would wrap the client's
            # task groups, which must exit in the scope they were entered in)
            await stack.enter_async_context(self.monitor)
            if cfg.transport == "stdio":
                self.traffic.shared = self.monitor
                pids = children_running(str(self.server_file))
                if len(pids) != 1:
                    raise RuntimeError(f"cannot find the stdio server among children: {pids}")
                self.pid = pids[0]
            self.t0 = time.monotonic()
            deadline = self.t0 + cfg.minutes * 60
            done = anyio.Event()
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.sampler, deadline, done)
                for i in range(cfg.workers):
                    tg.start_soon(self.worker, i, deadline, done)
            if self.crash is None:
                # quiet moment: in-flight work is over; one last sample
                await anyio.sleep(1.0)
                await self.sample()

    # -- report

    def verdict(self) -> dict[str, Any]:
        total = self.cfg.minutes * 60
        after = [s for s in self.samples if s.t >= total * WARMUP_FRACTION]
        if len(after) < 3:
            return {"enough_samples": False}
        third = len(after) // 3
        middle, last = after[third : 2 * third], after[2 * third :]
        rss_mid = median(s.rss_kib for s in middle)
        rss_last = median(s.rss_kib for s in last)
        fds_mid = median(s.fds for s in middle)
        fds_last = median(s.fds for s in last)
        growth = (rss_last - rss_mid) / rss_mid
        t_a = median(s.t for s in middle)
        t_b = median(s.t for s in last)
        slope = (rss_last - rss_mid) / 1024 / max((t_b - t_a) / 60, 1e-9)
        out: dict[str, Any] = {
            "enough_samples": True,
            "warmup_end_s": round(total * WARMUP_FRACTION, 1),
            "at_warmup_end": self._point(after[0]),
            "at_end": self._point(self.samples[-1]),
            "rss_mid_third_mib": round(rss_mid / 1024, 2),
            "rss_last_third_mib": round(rss_last / 1024, 2),
            "rss_growth": round(growth, 4),
            "rss_slope_mib_per_min": round(slope, 3),
            "rss_flat": growth < RSS_FLAT,
            "fds_mid_third": fds_mid,
            "fds_last_third": fds_last,
            "fds_flat": fds_last - fds_mid <= max(FDS_SLACK, fds_mid * RSS_FLAT),
        }
        first, end = after[0], self.samples[-1]
        if first.server_sessions is not None and end.server_sessions is not None:
            grown = end.server_sessions - first.server_sessions
            out["server_sessions_grown"] = grown
            if grown > 0:
                # What each session still held by the server costs, if they explain the growth
                out["rss_per_held_session_kib"] = round((end.rss_kib - first.rss_kib) / grown, 1)
        return out

    @staticmethod
    def _point(s: Sample) -> dict[str, Any]:
        return {
            "t": s.t,
            "rss_mib": round(s.rss_kib / 1024, 2),
            "fds": s.fds,
            "threads": s.threads,
            "calls": s.calls,
            "sessions_opened": s.sessions_opened,
            "server_sessions": s.server_sessions,
        }

    def report(self, elapsed: float) -> dict[str, Any]:
        st = self.traffic.stats
        return {
            "config": {
                "minutes": self.cfg.minutes,
                "transport": self.cfg.transport,
                "workers": self.cfg.workers,
                "interval_s": self.cfg.interval,
                "seed": self.cfg.seed,
                "session_idle_timeout_s": self.cfg.idle_timeout,
                "op_bound_s": OP_BOUND,
                "server_cmd": self.server_cmd or ["(spawned by the long-lived stdio client)"],
                "mix": KINDS_HTTP if self.cfg.transport == "http" else KINDS_STDIO,
            },
            "env": {
                "python": platform.python_version(),
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "git": git_rev(),
                "src_uncommitted_changes": src_dirty(),
                "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            },
            "elapsed_s": round(elapsed, 1),
            "totals": {
                "ops": dict(st.ops),
                "op_errors": dict(st.op_errors),
                "error_examples": st.error_examples,
                "calls": st.calls,
                "calls_cancelled": st.calls_cancelled,
                "tool_errors": st.tool_errors,
                "sessions_opened": st.sessions_opened,
                "sessions_closed": st.sessions_closed,
                "sessions_abandoned": st.sessions_abandoned,
                "connects_cancelled": st.connects_cancelled,
                "progress_notifications": st.progress,
                "log_notifications": st.logs,
                "hangs": st.hangs,
                "server_stderr_bytes": self.stderr_path.stat().st_size
                if self.stderr_path.exists()
                else None,
            },
            "crash": self.crash,
            "verdict": self.verdict(),
            "samples": [s.__dict__ for s in self.samples],
        }


def git_rev() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def src_dirty() -> bool | None:
    """Whether src/ differs from HEAD (the run measured the working tree)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(out.stdout.strip())


def print_report(rep: dict[str, Any]) -> None:
    samples = rep["samples"]
    step = max(1, len(samples) // 15)
    shown = samples[::step]
    if samples and shown[-1] is not samples[-1]:
        shown.append(samples[-1])
    print(
        f"{'t s':>7} {'RSS MiB':>8} {'fds':>5} {'thr':>4} {'calls':>8} {'sessions':>9} "
        f"{'srv sess':>8} {'gc objs':>8}"
    )
    for s in shown:
        print(
            f"{s['t']:>7.1f} {s['rss_kib'] / 1024:>8.2f} {s['fds']:>5} {s['threads']:>4} "
            f"{s['calls']:>8} {s['sessions_opened']:>9} {s['server_sessions']!s:>8} "
            f"{s['gc_objects']!s:>8}"
        )
    tot = rep["totals"]
    print(
        f"\n{tot['calls']} calls answered ({tot['tool_errors']} tool errors as expected, "
        f"{tot['calls_cancelled']} calls cancelled mid-flight), {tot['sessions_opened']} sessions "
        f"({tot['sessions_closed']} closed properly, {tot['sessions_abandoned']} abandoned, "
        f"{tot['connects_cancelled']} more cancelled while connecting), "
        f"{tot['progress_notifications']} progress and {tot['log_notifications']} log "
        f"notifications in {rep['elapsed_s']} s"
    )
    print("ops:", ", ".join(f"{k} {v}" for k, v in sorted(tot["ops"].items())))
    if tot["op_errors"]:
        print("unexpected errors:")
        for k, v in sorted(tot["op_errors"].items()):
            print(f"  {v:>5} x {k}: {tot['error_examples'][k]}")
    v = rep["verdict"]
    if not v.get("enough_samples"):
        print("verdict: too few samples after the warm-up")
    else:
        w, e = v["at_warmup_end"], v["at_end"]
        print(
            f"\nafter warm-up (t={w['t']}s): RSS {w['rss_mib']} MiB, {w['fds']} fds, "
            f"{w['threads']} threads, server sessions {w['server_sessions']}"
        )
        print(
            f"at the end    (t={e['t']}s): RSS {e['rss_mib']} MiB, {e['fds']} fds, "
            f"{e['threads']} threads, server sessions {e['server_sessions']}"
        )
        print(
            f"RSS median middle third {v['rss_mid_third_mib']} MiB -> last third "
            f"{v['rss_last_third_mib']} MiB: {v['rss_growth'] * 100:+.1f}% "
            f"({v['rss_slope_mib_per_min']:+.2f} MiB/min): "
            f"{'FLAT' if v['rss_flat'] else 'GROWING'}"
        )
        if v.get("server_sessions_grown", 0) > 0:
            print(
                f"live server sessions grew by {v['server_sessions_grown']} after the warm-up "
                "(dropped without DELETE: held until the session idle timeout); RSS growth per "
                f"held session {v['rss_per_held_session_kib']} KiB"
            )
        print(
            f"fds median middle third {v['fds_mid_third']} -> last third {v['fds_last_third']}: "
            f"{'FLAT' if v['fds_flat'] else 'GROWING'}"
        )
    if tot["hangs"]:
        print("HUNG past the bound:", "; ".join(tot["hangs"]))
    if rep["crash"]:
        print("CRASH:", rep["crash"])


def parse_args(argv: list[str] | None) -> Config:
    p = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=3.0, help="length of the run (default 3)")
    p.add_argument("--transport", choices=("http", "stdio"), default="http")
    p.add_argument("--out", type=Path, default=None, help="JSON output file")
    p.add_argument("--workers", type=int, default=8, help="concurrent traffic workers (8)")
    p.add_argument("--interval", type=float, default=None, help="seconds between samples")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        help="HTTP: serve with this session_idle_timeout (runs the server file with "
        "server.run() instead of `mcpkit run`, whose default is 1800 s)",
    )
    a = p.parse_args(argv)
    out = a.out or ROOT / "bench" / "results" / f"soak-{time.strftime('%Y%m%d-%H%M%S')}.json"
    interval = a.interval or max(1.0, a.minutes * 60 / 60)
    return Config(a.minutes, a.transport, out, a.workers, interval, a.seed, a.idle_timeout)


def main(argv: list[str] | None = None) -> int:
    cfg = parse_args(argv)
    if cfg.transport == "stdio" and cfg.idle_timeout is not None:
        print("--idle-timeout applies to HTTP only", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mcpkit-soak-") as tmp:
        soak = Soak(cfg, Path(tmp))
        print(
            f"soak: {cfg.minutes} min over {cfg.transport}, {cfg.workers} workers, "
            f"sample every {cfg.interval:.0f} s, seed {cfg.seed}",
            flush=True,
        )
        start = time.monotonic()
        try:
            anyio.run(soak.run)
        except Exception as e:  # the run itself broke (server did not start, monitor lost...)
            soak.crash = soak.crash or f"{type(e).__name__}: {e}\n{soak.tail()}"
        finally:
            soak.stop_server()
        rep = soak.report(time.monotonic() - start)
    cfg.out.parent.mkdir(parents=True, exist_ok=True)
    cfg.out.write_text(json.dumps(rep, indent=1) + "\n")
    print_report(rep)
    print(f"\nsamples: {cfg.out}")
    return 1 if rep["crash"] or rep["totals"]["hangs"] else 0


if __name__ == "__main__":
    sys.exit(main())
