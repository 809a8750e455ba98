"""``tools/call`` over Streamable HTTP in both eras, on one mcpkit server, in one run (issue 29).

    python -m bench eras                  # 5 interleaved repetitions, 2 HTTP stacks (~2 min)
    python -m bench eras --quick          # tiny counts, one repetition (the smoke test runs it)
    python -m bench eras --http h11 --reps 3 --json out.json
    python -m bench.eras ...              # the same

The eras, both served by one app (``bench/eras_server.py``: ``serve_http(...,
json_response=True)``, uvicorn on 127.0.0.1; its tools ``def`` functions, as in the neutral
benchmark, or with ``--tools async`` ``async def`` ones):

* **2025-11-25 session, JSON responses**: each connection initializes once and sends its
  ``tools/call`` POSTs with the ``Mcp-Session-Id`` it got;
* **2026-07-28 stateless**: no session; each POST carries ``_meta`` (protocol version,
  client capabilities) and the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name``
  headers.

Throughput: for each of uvicorn's HTTP protocols (``httptools``, what ``serve_http`` runs
by default where it is installed, and ``h11``; until issue 42 there was a third, mcpkit's
own, which took a 2026-07-28 POST straight to the kernel) one server process; against it, ``bench/eras_load.py`` (a separate process: raw keep-alive sockets in
one epoll loop, stdlib only) runs ``tools/call echo`` sequentially on one connection per era,
then on ``--conns`` (32) connections per era, one call in flight on each. Within each run
the two eras alternate in ``--chunks`` slices (each era's rate is its calls over the sum of
its slices), so the ratio 2026/2025 of a run compares the eras under the same conditions;
each repetition runs every (parser, level) once, the era going first alternating with the
repetition, and the median of the repetitions' ratios is reported (single figures move by
±30% on a shared 2-core machine). The server's CPU time per call of each era (from
``/proc``) and the load generator's own are reported beside the rates.

Python work: the same server built in this process (``anyio.run``: the standard asyncio
loop), its app called as ASGI as uvicorn calls it (no socket), warm ``tools/call``
requests of each era one at a time under ``cProfile`` (5, the median kept; the counts do
not vary): every function call the thread makes while the app serves the request (the app's
tasks and the event loop's own Python code included; this module's stand-in ``receive`` and
``send`` and the calls they make left out), the Python functions among them, those in
mcpkit, and the distinct modules they come from. Also the in-process time per request
without the profiler (µs, median of 10 batches per era, alternating).

Prints Markdown tables and writes JSON to ``bench/results/eras-<time>.json`` (or ``--json``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib.util
import json
import os
import platform
import pstats
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
ERAS = ("2025", "2026")
ERA_LABEL = {
    "2025": "2025-11-25 session, JSON responses",
    "2026": "2026-07-28 stateless",
}
MODERN = "2026-07-28"
SESSION = "2025-11-25"
#: Issue 42: a 2026 tools/call no slower than one on the 2025 session JSON path (issue 29's
#: 1.2x, which measured the SDK against itself, was retired by it).
TARGET = 1.0

Message = MutableMapping[str, Any]


# --------------------------------------------------------------------------- throughput


class ServerProcess:
    """``bench/eras_server.py`` on a free port, its stderr kept for error reports."""

    def __init__(self, http: str, tools: str) -> None:
        self.http = http
        argv = [str(HERE / "eras_server.py"), "--http", http, "--tools", tools, "--port", "0"]
        self.proc = subprocess.Popen(
            [sys.executable, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        started = threading.Event()
        self.port = 0

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.lines.append(line)
                found = re.search(r"mcpkit: serving .* at http://127\.0\.0\.1:(\d+)/", line)
                if found and not started.is_set():
                    self.port = int(found.group(1))
                    started.set()
            started.set()

        threading.Thread(target=read, daemon=True).start()
        if not started.wait(60) or not self.port:
            self.stop()
            raise RuntimeError(f"the {http} server did not start:\n{''.join(self.lines)[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def load(server: ServerProcess, order: tuple[str, ...], conns: int, calls: int, a: Any) -> Any:
    """One run of ``bench/eras_load.py`` (a process of its own) against ``server``: both
    eras in alternating slices; its JSON (per era: calls/s, client and server CPU per call)."""
    argv = [sys.executable, str(HERE / "eras_load.py"), "--port", str(server.port)]
    argv += ["--eras", ",".join(order), "--conns", str(conns), "--calls", str(calls)]
    argv += ["--chunks", str(a.chunks), "--warmup", str(a.warmup)]
    argv += ["--server-pid", str(server.proc.pid)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"load x{conns} failed:\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def throughput(a: argparse.Namespace, https: list[str]) -> list[dict[str, Any]]:
    """Every (repetition, parser, level, era) run, interleaved (see the module docstring)."""
    levels = [(1, a.seq_calls), (a.conns, a.conc_calls)]
    servers = {h: ServerProcess(h, a.tools) for h in https}
    runs: list[dict[str, Any]] = []
    try:
        for rep in range(a.reps):
            parsers = https[rep % len(https) :] + https[: rep % len(https)]
            for http in parsers:
                for level, (conns, calls) in enumerate(levels):
                    order = ERAS if (rep + level) % 2 == 0 else ERAS[::-1]
                    got = load(servers[http], order, conns, calls, a)
                    for era in ERAS:
                        e = got[era]
                        runs.append({"rep": rep, "http": http, "conns": conns, "era": era, **e})
                        print(
                            f"  rep {rep + 1}/{a.reps} {http:9} x{conns:<3} {era}: "
                            f"{e['calls_s']:6.0f} calls/s, server {e['server_cpu_us']:4.0f} µs "
                            f"CPU/call, load generator {e['client_cpu_us']:3.0f}",
                            file=sys.stderr,
                            flush=True,
                        )
    finally:
        for server in servers.values():
            server.stop()
    return runs


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per parser and level: median calls/s of each era, and the median of the ratios
    2026/2025 taken within each repetition (with their min and max)."""
    cells: list[dict[str, Any]] = []
    keys = list(dict.fromkeys((r["http"], r["conns"]) for r in runs))
    for http, conns in keys:
        mine = [r for r in runs if r["http"] == http and r["conns"] == conns]
        by_rep: dict[int, dict[str, float]] = {}
        for r in mine:
            by_rep.setdefault(r["rep"], {})[r["era"]] = r["calls_s"]
        ratios = [v["2026"] / v["2025"] for v in by_rep.values() if len(v) == 2]
        cpu: dict[int, dict[str, float]] = {}
        for r in mine:
            if r["server_cpu_us"]:
                cpu.setdefault(r["rep"], {})[r["era"]] = r["server_cpu_us"]
        cpu_ratios = [v["2025"] / v["2026"] for v in cpu.values() if len(v) == 2]
        cell: dict[str, Any] = {"http": http, "conns": conns, "reps": len(by_rep)}
        for era in ERAS:
            of = [r for r in mine if r["era"] == era]
            cell[f"calls_s_{era}"] = statistics.median(r["calls_s"] for r in of)
            cell[f"server_cpu_us_{era}"] = statistics.median(r["server_cpu_us"] for r in of)
            cell[f"client_cpu_us_{era}"] = statistics.median(r["client_cpu_us"] for r in of)
        cell["ratio"] = statistics.median(ratios)
        cell["ratio_min"], cell["ratio_max"] = min(ratios), max(ratios)
        cell["ratios"] = ratios
        cell["cpu_ratio"] = statistics.median(cpu_ratios) if cpu_ratios else None
        cell["met"] = cell["ratio"] >= TARGET
        cells.append(cell)
    return cells


# --------------------------------------------------------------------------- Python work


def _module_of(filename: str) -> str:
    """A dotted module name for a code file (its path under the longest sys.path entry)."""
    path = os.path.abspath(filename)
    for entry in sorted((os.path.abspath(p) for p in sys.path if p), key=len, reverse=True):
        if path.startswith(entry + os.sep):
            rel = path[len(entry) + 1 :]
            rel = rel[:-3] if rel.endswith(".py") else rel
            rel = rel[: -len("/__init__")] if rel.endswith("/__init__") else rel
            return rel.replace(os.sep, ".")
    return os.path.basename(filename)


def count_calls(prof: cProfile.Profile) -> dict[str, Any]:
    """Function calls in a profile, without this module's own frames and the calls they
    made directly (the stand-in ASGI server's ``receive`` and ``send``)."""
    stats: dict[Any, Any] = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    here = os.path.abspath(__file__)
    total = python = ours = 0
    modules: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    builtins: Counter[str] = Counter()
    for (filename, _line, name), (_cc, nc, _tt, _ct, callers) in stats.items():
        if os.path.abspath(filename) == here:
            continue
        nc -= sum(c[1] for k, c in callers.items() if os.path.abspath(k[0]) == here)
        if nc <= 0:
            continue
        total += nc
        if filename == "~":  # a builtin (C) function or method
            packages["(builtins)"] += nc
            builtins[name] += nc
            continue
        python += nc
        module = _module_of(filename)
        modules[module] += nc
        packages[module.split(".")[0]] += nc
        if module == "mcpkit" or module.startswith("mcpkit."):
            ours += nc
    return {
        "calls": total,
        "python_calls": python,
        "mcpkit_calls": ours,
        "modules": len(modules),
        "by_package": dict(packages.most_common()),
        "by_module": dict(modules.most_common()),
        "by_builtin": dict(builtins.most_common()),
    }


def _scope(headers: dict[str, str], body: bytes) -> dict[str, Any]:
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    raw += [(b"host", b"127.0.0.1:8000"), (b"content-length", str(len(body)).encode())]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": raw,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def serve_one(
    app: Callable[..., Awaitable[None]],
    headers: dict[str, str],
    body: bytes,
    prof: cProfile.Profile | None = None,
) -> tuple[int, dict[bytes, bytes], bytes]:
    """One POST through ``app`` as an ASGI server would hand it over: the whole body at the
    first ``receive``, later ones wait for a disconnect that does not come. Returns the
    status, the response headers (names lower-cased) and the body."""
    scope = _scope(headers, body)
    sent: list[Message] = []
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    if prof is not None:
        prof.enable()
    await app(scope, receive, send)  # as uvicorn calls it, in the request's task
    if prof is not None:
        prof.disable()
    start = next(m for m in sent if m["type"] == "http.response.start")
    out = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.lower(): v for k, v in start.get("headers", [])}, out


def call_body(era: str, rid: int) -> bytes:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": "hello"}}
    if era == "2026":
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    msg = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    return json.dumps(msg, separators=(",", ":")).encode()


async def python_work(samples: int, warmup: int, timed: int, tools: str) -> dict[str, Any]:
    """Per era: function calls of ``samples`` profiled warm requests (the median), and the
    median in-process µs per request over ``timed`` unprofiled ones (eras alternating)."""
    from bench.eras_load import initialize_body
    from bench.eras_server import build
    from mcpkit import create_http_app
    from mcpkit.lowlevel import ASGIClient

    app = create_http_app(build(tools), json_response=True)
    base = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    async with ASGIClient(app):  # the app's lifespan
        status, got, out = await serve_one(app, base, initialize_body("eras-profile"))
        if status != 200 or b"mcp-session-id" not in got:
            raise RuntimeError(f"initialize: HTTP {status} {out[:300]!r}")
        session = got[b"mcp-session-id"].decode("latin-1")
        session_headers = {**base, "mcp-session-id": session, "mcp-protocol-version": SESSION}
        note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        status, _, out = await serve_one(app, session_headers, note)
        if status != 202:
            raise RuntimeError(f"notifications/initialized: HTTP {status} {out[:300]!r}")
        headers = {
            "2025": session_headers,
            "2026": {
                **base,
                "mcp-protocol-version": MODERN,
                "mcp-method": "tools/call",
                "mcp-name": "echo",
            },
        }
        rid = 1

        async def call(era: str, prof: cProfile.Profile | None = None) -> None:
            nonlocal rid
            rid += 1
            status, _, out = await serve_one(app, headers[era], call_body(era, rid), prof)
            if status != 200 or b'"result"' not in out:
                raise RuntimeError(f"tools/call {era}: HTTP {status} {out[:300]!r}")

        for _ in range(warmup):
            for era in ERAS:
                await call(era)
        result: dict[str, Any] = {}
        counts: dict[str, list[dict[str, Any]]] = {era: [] for era in ERAS}
        for k in range(samples):
            for era in ERAS if k % 2 == 0 else ERAS[::-1]:
                prof = cProfile.Profile()
                await call(era, prof)
                counts[era].append(count_calls(prof))
        micros: dict[str, list[float]] = {era: [] for era in ERAS}
        batch = max(1, timed // 10)
        for k in range(10):
            for era in ERAS if k % 2 == 0 else ERAS[::-1]:
                start = time.perf_counter()
                for _ in range(batch):
                    await call(era)
                micros[era].append((time.perf_counter() - start) / batch * 1e6)
        for era in ERAS:
            samples_of = sorted(counts[era], key=lambda c: c["calls"])
            median = samples_of[len(samples_of) // 2]
            result[era] = {
                **median,
                "calls_samples": [c["calls"] for c in counts[era]],
                "us_per_request": statistics.median(micros[era]),
            }
    return result


# --------------------------------------------------------------------------- report


def _n(v: float) -> str:
    return f"{v:.0f}" if v >= 100 else f"{v:.3g}"


def _stack(http: str) -> str:
    return f"uvicorn {http}" + (" (serve_http's default)" if http == "httptools" else "")


def tables(result: dict[str, Any]) -> str:
    cells = result["throughput"]
    reps = result["config"]["reps"]
    conns = result["config"]["conns"]
    out: list[str] = []
    if cells:
        cols = [(c["http"], c["conns"]) for c in cells]
        names = [f"{h} {'seq' if n == 1 else f'{n} conns'}" for h, n in cols]
        out.append(
            f"### tools/call calls/s, medians of {reps} interleaved repetition(s), "
            f"sequential and {conns} connections\n"
        )
        out.append("| era | " + " | ".join(names) + " |")
        out.append("|---" * (len(cols) + 1) + "|")
        for era in ERAS:
            row = [_n(c[f"calls_s_{era}"]) for c in cells]
            out.append(f"| {ERA_LABEL[era]} | " + " | ".join(row) + " |")
        row = [f"{c['ratio']:.2f}x ({c['ratio_min']:.2f}-{c['ratio_max']:.2f})" for c in cells]
        out.append(
            "| 2026 / 2025 (median of same-repetition ratios; min-max) | " + " | ".join(row) + " |"
        )
        for era in ERAS:
            row = [f"{c[f'server_cpu_us_{era}']:.0f}" for c in cells]
            out.append(f"| server CPU µs per call, {era} | " + " | ".join(row) + " |")
        row = [f"{c['cpu_ratio']:.2f}x" if c["cpu_ratio"] else "-" for c in cells]
        out.append(
            "| server CPU per call 2025 / 2026 (median of same-run ratios) | "
            + " | ".join(row)
            + " |"
        )
        for era in ERAS:
            row = [f"{c[f'client_cpu_us_{era}']:.0f}" for c in cells]
            out.append(f"| load generator CPU µs per call, {era} | " + " | ".join(row) + " |")
        out.append("")
    work = result.get("python_work")
    if work:
        out.append(
            "### Server-side work for one warm tools/call (cProfile, in process, ASGI app)\n"
        )
        out.append(
            "| era | function calls | Python functions | in mcpkit | distinct modules "
            "| µs/request in process |"
        )
        out.append("|---|---|---|---|---|---|")
        for era in ERAS:
            w = work[era]
            out.append(
                f"| {ERA_LABEL[era]} | {w['calls']} | {w['python_calls']} | {w['mcpkit_calls']} "
                f"| {w['modules']} | {w['us_per_request']:.0f} |"
            )
        a, b = work["2025"], work["2026"]
        out.append(
            f"| 2026 / 2025 | {b['calls'] / a['calls']:.2f}x | "
            f"{b['python_calls'] / a['python_calls']:.2f}x | "
            f"{b['mcpkit_calls'] / max(1, a['mcpkit_calls']):.2f}x | "
            f"{b['modules'] - a['modules']:+d} | {b['us_per_request'] / a['us_per_request']:.2f}x |"
        )
        out.append("")
        out.append("Calls by package (2025 / 2026):\n")
        packages = list(dict.fromkeys([*a["by_package"], *b["by_package"]]))
        out.append("| package | " + " | ".join(packages) + " |")
        out.append("|---" * (len(packages) + 1) + "|")
        out.append(
            "| calls | "
            + " | ".join(
                f"{a['by_package'].get(p, 0)} / {b['by_package'].get(p, 0)}" for p in packages
            )
            + " |"
        )
        out.append("")
    out.append(
        f"### Targets (issue 42): 2026 >= {TARGET}x the 2025 session JSON path, fewer calls\n"
    )
    out.append("| target | result | met |")
    out.append("|---|---|---|")
    for c in cells:
        level = "sequential" if c["conns"] == 1 else f"{c['conns']} connections"
        met = "yes" if c["met"] else "**no**"
        out.append(
            f"| 2026 tools/call >= {TARGET}x 2025, {level}, {_stack(c['http'])} "
            f"| {c['ratio']:.2f}x | {met} |"
        )
    if work:
        a, b = work["2025"], work["2026"]
        # The issue counts Python calls (its 104 and 135 were this column); the builtins
        # (dict.get, str.strip, isinstance, ...) are reported beside, as a second row.
        met = "yes" if b["python_calls"] < a["python_calls"] else "**no**"
        out.append(
            f"| fewer server-side Python function calls per tools/call "
            f"| {b['python_calls']} vs {a['python_calls']} | {met} |"
        )
        met = "yes" if b["calls"] < a["calls"] else "no"
        out.append(
            f"| (all function calls, builtins included) | {b['calls']} vs {a['calls']} | {met} |"
        )
    return "\n".join(out) + "\n"


def _versions(https: list[str]) -> dict[str, Any]:
    import mcpkit
    from mcpkit._transports._loop import uvloop_wanted

    v: dict[str, Any] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "mcpkit_from": os.path.dirname(mcpkit.__file__),
        "server_loop": "uvloop" if uvloop_wanted() else "asyncio",
        "uvicorn_http": https,
    }
    if Path(v["mcpkit_from"]) == REPO / "src" / "mcpkit":
        # GIT_OPTIONAL_LOCKS=0: read only, not even an opportunistic index refresh.
        env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}

        def git(*args: str) -> str:
            return subprocess.run(
                ["git", "-C", str(REPO), *args],
                capture_output=True,
                text=True,
                check=False,
                env=env,
            ).stdout.strip()

        v["commit"] = git("rev-parse", "--short", "HEAD")
        v["src_modified"] = git("diff", "--name-only", "HEAD", "--", "src").split()
    else:  # another tree (PYTHONPATH): its origin is for --label to say
        v["commit"] = None
    for dist in ("uvicorn", "h11", "httptools", "uvloop", "anyio"):
        v[dist] = _version_of(dist)
    return v


def _version_of(dist: str) -> str | None:
    import importlib.metadata

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench eras",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--reps", type=int, default=5, help="interleaved repetitions (default 5)")
    p.add_argument("--seq-calls", type=int, default=4000, help="timed calls per era, 1 connection")
    p.add_argument("--conc-calls", type=int, default=12000, help="timed calls per era, --conns")
    p.add_argument("--conns", type=int, default=32)
    p.add_argument("--warmup", type=int, default=300, help="untimed calls per era and run")
    p.add_argument("--chunks", type=int, default=10, help="slices the eras alternate in, per run")
    p.add_argument(
        "--http",
        default="httptools,h11",
        help="uvicorn's HTTP protocols: httptools (serve_http's default where installed) "
        "and h11 (those installed are run)",
    )
    p.add_argument(
        "--tools",
        default="sync",
        choices=("sync", "async"),
        help="the server's tools: def functions (the default, as in the neutral benchmark) "
        "or async def ones",
    )
    p.add_argument("--no-throughput", action="store_true", help="only the in-process profile")
    p.add_argument("--no-profile", action="store_true", help="only the throughput runs")
    p.add_argument("--quick", action="store_true", help="tiny counts, 1 repetition (a smoke run)")
    p.add_argument("--json", type=Path, default=None, help="where to write the JSON results")
    p.add_argument("--label", default="", help="what is measured (stored with the results)")
    a = p.parse_args(argv)
    samples, warm, timed = 5, 200, 2000
    if a.quick:
        a.reps, a.seq_calls, a.conc_calls, a.warmup, a.chunks = 1, 100, 4 * a.conns, 20, 2
        samples, warm, timed = 1, 5, 20
    https = [h for h in a.http.split(",") if h == "h11" or importlib.util.find_spec(h)]
    result: dict[str, Any] = {
        "config": {
            "reps": a.reps,
            "seq_calls": a.seq_calls,
            "conc_calls": a.conc_calls,
            "conns": a.conns,
            "warmup": a.warmup,
            "chunks": a.chunks,
            "quick": a.quick,
            "tools": a.tools,
        },
        "label": a.label,
        "versions": _versions(https),
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "loadavg_start": os.getloadavg(),
    }
    print(f"bench eras: {json.dumps(result['versions'])}", file=sys.stderr, flush=True)
    runs = [] if a.no_throughput else throughput(a, https)
    result["runs"] = runs
    result["throughput"] = summarize(runs) if runs else []
    if not a.no_profile:
        import anyio

        result["python_work"] = anyio.run(python_work, samples, warm, timed, a.tools)
    result["loadavg_end"] = os.getloadavg()
    text = tables(result)
    print(text)
    out = a.json or RESULTS / f"eras-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
