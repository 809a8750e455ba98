"""mcpkit against the official SDK, FastMCP and the TypeScript SDK, side by side, in one command.

    python -m bench                         # everything, 3 interleaved repetitions (~25 min)
    python -m bench --reps 1 --only 'stdio|tools'       # a subset (regex on case names)
    python -m bench --quick --impls mcpkit  # tiny counts, mcpkit only (seconds; the smoke test)
    python -m bench --list                  # the case names

The peers run from the shared benchmark harness (``$MCP_BENCH_HARNESS``, default
``../shared/bench`` next to the repository): its neutral driver ``driver/mcpdrive.py`` (asyncio
+ orjson, no SDK) measures every server, and its peer servers and SDK clients are the other
columns. They are installed outside the repository, into ``$ANCHORS`` (default
``~/.cache/mcp-anchors``), by the harness's ``setup.sh`` the first time (``--no-setup`` to
skip). mcpkit runs from this interpreter: ``bench/servers/mcpkit_server.py`` (the same tools
and command line as the peers) and ``bench/clients/mcpkit_client.py`` (our client).

Each repetition runs every case once; within a group of cases the implementations take turns
in an order that rotates with the repetition, so drift on a shared machine hits all alike.
Results: ``bench/results/run-<time>/`` with ``rep<k>.jsonl`` (one JSON object per case),
``summary.json`` (medians, same-repetition ratios, the issue's targets), ``summary.md`` (the
tables printed at the end), ``errors.log``, ``servers.log`` and ``chart.png`` when matplotlib
can be had in the driver's environment.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import socket
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HARNESS = Path(os.environ.get("MCP_BENCH_HARNESS", REPO.parent / "shared" / "bench")).resolve()
ANCHORS = Path(os.environ.get("ANCHORS", Path.home() / ".cache" / "mcp-anchors"))
IMPLS = ("mcpkit", "official", "fastmcp", "ts", "floor")
#: The implementations whose servers speak 2026-07-28 (the `http/<impl>-modern` cases).
MODERN_IMPLS = ("mcpkit", "official", "fastmcp")
# Port of each implementation's HTTP server with --port-base: base plus this offset.
PORT_OFFSET = {
    "official": 1,
    "fastmcp": 2,
    "ts": 3,
    "floor": 10,
    "floor-httptools": 11,
    "mcpkit": 20,
    "mcpkit-async": 21,
}

# (what, case, metric, against case, comparison, factor): the issues' targets, each named
# by its issue. Issue 42's are checked twice: with the harness's plain `def` tools (each
# call hops to a worker thread, as issue 42 asks) and with `async def` ones (`--async-tools`,
# the `mcpkit-async` cases), against the floors and the TypeScript SDK in the same run.
ISSUE_42: list[tuple[str, str, str, str, str, float]] = [
    (f"issue 42: {what}{tools}", case.format(v=v), metric, other, op, factor)
    for v, tools in (("", ", `def` tools"), ("-async", ", `async def` tools"))
    for what, case, metric, other, op, factor in (
        (
            "HTTP JSON sequential",
            "http/mcpkit{v}-json",
            "seq_calls_s",
            "http/official-json",
            ">=",
            2.5,
        ),
        (
            "HTTP JSON 32 sessions",
            "http/mcpkit{v}-json",
            "sess32_calls_s",
            "http/official-json",
            ">=",
            3.5,
        ),
        (
            "HTTP JSON sequential",
            "http/mcpkit{v}-json",
            "seq_calls_s",
            "http/floor-httptools",
            ">=",
            0.7,
        ),
        ("stdio sequential", "stdio/mcpkit{v}", "seq_calls_s", "stdio/floor", ">=", 0.75),
        ("stdio sequential", "stdio/mcpkit{v}", "seq_calls_s", "stdio/ts", ">=", 1.8),
        ("stdio 64 in flight", "stdio/mcpkit{v}", "conc64_calls_s", "stdio/floor", ">=", 0.62),
        ("stdio 64 in flight", "stdio/mcpkit{v}", "conc64_calls_s", "stdio/ts", ">=", 2.6),
    )
] + [
    # The 2026-07-28 path no slower than the session path on one server (issue 14 asked it
    # of the sequential calls first; the benchmark server's tools are `def` ones there).
    (
        f"issue 42: HTTP 2026-07-28 {level}",
        "http/mcpkit-modern",
        metric,
        "http/mcpkit-json",
        ">=",
        1,
    )
    for level, metric in (("sequential", "seq_calls_s"), ("32 connections", "sess32_calls_s"))
]

TARGETS: list[tuple[str, str, str, str, str, float]] = [
    ("stdio sequential tools/call", "stdio/mcpkit", "seq_calls_s", "stdio/official", ">=", 15),
    ("stdio sequential tools/call", "stdio/mcpkit", "seq_calls_s", "stdio/ts", ">=", 2),
    ("stdio 64 in flight", "stdio/mcpkit", "conc64_calls_s", "stdio/official", ">=", 40),
    ("stdio 64 in flight", "stdio/mcpkit", "conc64_calls_s", "stdio/ts", ">=", 1),
    ("HTTP JSON sequential", "http/mcpkit-json", "seq_calls_s", "http/official-json", ">=", 5),
    ("HTTP SSE 32 sessions", "http/mcpkit-sse", "sess32_calls_s", "http/official-sse", ">=", 8),
    ("HTTP SSE 32 sessions", "http/mcpkit-sse", "sess32_calls_s", "http/ts-sse", ">=", 1.6),
    # Issue 14: a 2026-07-28 (stateless) tools/call builds no throwaway session, so it is at
    # least as fast as our 2025 stateful path, and at least 5x the official SDK serving 2026.
    (
        "HTTP 2026-07-28 sequential",
        "http/mcpkit-modern",
        "seq_calls_s",
        "http/official-modern",
        ">=",
        5,
    ),
    (
        "HTTP 2026-07-28 32 connections",
        "http/mcpkit-modern",
        "sess32_calls_s",
        "http/official-modern",
        ">=",
        5,
    ),
    ("1 MiB result over stdio", "stdio/mcpkit", "big_out_calls_s", "stdio/official", ">=", 3),
    (
        "1000 tools: tools/list p50",
        "tools/mcpkit-1000",
        "list_p50_ms",
        "tools/official-1000",
        "<=",
        0.1,
    ),
    (
        "cold start to first tools/list",
        "stdio/mcpkit",
        "cold_start_ms",
        "stdio/official",
        "<=",
        0.25,
    ),
    ("cold start to first tools/list", "stdio/mcpkit", "cold_start_ms", "stdio/ts", "<", 1),
    ("idle RSS", "stdio/mcpkit", "rss_idle_mb", "stdio/official", "<=", 0.5),
    (
        "our client vs official client, stdio seq",
        "sdk/mcpkit-stdio",
        "seq_calls_s",
        "sdk/official-legacy-stdio",
        ">=",
        10,
    ),
    (
        "our client vs official client, stdio seq",
        "sdk/mcpkit-stdio",
        "seq_calls_s",
        "sdk/official-auto-stdio",
        ">=",
        10,
    ),
    (
        "our client vs official client, HTTP seq",
        "sdk/mcpkit-http",
        "seq_calls_s",
        "sdk/official-legacy-http",
        ">=",
        5,
    ),
    (
        "our client vs official client, HTTP seq",
        "sdk/mcpkit-http",
        "seq_calls_s",
        "sdk/official-auto-http",
        ">=",
        5,
    ),
    *ISSUE_42,
]

# (row title, case template ({i} = implementation), metric or (metric, metric)).
HEADLINE: list[tuple[str, str, str | tuple[str, str]]] = [
    ("stdio seq calls/s", "stdio/{i}", "seq_calls_s"),
    ("stdio seq p50 / p99 ms", "stdio/{i}", ("seq_p50_ms", "seq_p99_ms")),
    ("stdio 8 in flight calls/s", "stdio/{i}", "conc8_calls_s"),
    ("stdio 64 in flight calls/s", "stdio/{i}", "conc64_calls_s"),
    ("stdio 64 in flight p99 ms", "stdio/{i}", "conc64_p99_ms"),
    ("stdio cold start ms (spawn to first tools/list)", "stdio/{i}", "cold_start_ms"),
    ("stdio server RSS idle / peak MiB", "stdio/{i}", ("rss_idle_mb", "rss_peak_mb")),
    ("stdio 1 MiB result calls/s", "stdio/{i}", "big_out_calls_s"),
    ("stdio 1 MiB argument calls/s", "stdio/{i}", "big_in_calls_s"),
    ("HTTP JSON seq calls/s", "http/{i}-json", "seq_calls_s"),
    ("HTTP JSON 32 sessions calls/s", "http/{i}-json", "sess32_calls_s"),
    ("HTTP SSE seq calls/s", "http/{i}-sse", "seq_calls_s"),
    ("HTTP SSE 32 sessions calls/s", "http/{i}-sse", "sess32_calls_s"),
    ("HTTP JSON stateless seq calls/s", "http/{i}-stateless", "seq_calls_s"),
    ("HTTP JSON stateless 32 sessions calls/s", "http/{i}-stateless", "sess32_calls_s"),
    ("HTTP 2026-07-28 seq calls/s", "http/{i}-modern", "seq_calls_s"),
    ("HTTP 2026-07-28 32 connections calls/s", "http/{i}-modern", "sess32_calls_s"),
    (
        "HTTP JSON 1 MiB result / argument calls/s",
        "http/{i}-json",
        ("big_out_calls_s", "big_in_calls_s"),
    ),
    ("HTTP cold start ms (spawn to first tools/list)", "http/{i}-json", "cold_start_ms"),
    ("HTTP JSON server RSS idle / peak MiB", "http/{i}-json", ("rss_idle_mb", "rss_peak_mb")),
    ("1000 tools: tools/list p50 ms", "tools/{i}-1000", "list_p50_ms"),
    ("1000 tools: tools/list KiB", "tools/{i}-1000", "list_kb"),
    ("1000 tools: RSS MiB / cold start ms", "tools/{i}-1000", ("rss_mb", "cold_start_ms")),
    ("own client, stdio seq calls/s", "sdk/{i}-stdio", "seq_calls_s"),
    ("own client, stdio 64 in flight calls/s", "sdk/{i}-stdio", "conc64_calls_s"),
    ("own client, stdio connect + list ms", "sdk/{i}-stdio", "connect_list_ms"),
    ("own client, HTTP (SSE, stateful) seq calls/s", "sdk/{i}-http", "seq_calls_s"),
    ("own client, HTTP 32 sessions calls/s", "sdk/{i}-http", "sess32_calls_s"),
]


def _paths() -> dict[str, str]:
    return {
        "floor_py": str(ANCHORS / "venv-floor" / "bin" / "python"),
        "mcp_py": str(ANCHORS / "venv-mcp" / "bin" / "python"),
        "fastmcp_py": str(ANCHORS / "venv-fastmcp" / "bin" / "python"),
        "ts_sdk": str(ANCHORS / "ts-bench" / "node_modules" / "@modelcontextprotocol" / "sdk"),
    }


def _needs_setup(impls: list[str]) -> list[str]:
    p = _paths()
    need = {
        "official": p["mcp_py"],
        "fastmcp": p["fastmcp_py"],
        "floor": p["floor_py"],
        "ts": p["ts_sdk"] + "/package.json",
    }
    return [i for i in impls if i in need and not os.path.exists(need[i])]


def setup(impls: list[str]) -> None:
    """Install the peers into $ANCHORS with the harness's setup.sh (idempotent), plus matplotlib."""
    missing = _needs_setup(impls)
    if missing:
        print(f"installing peers {missing} into {ANCHORS} (harness setup.sh)", file=sys.stderr)
        env = {**os.environ, "ANCHORS": str(ANCHORS)}
        subprocess.run(["bash", str(HARNESS / "setup.sh")], cwd=HARNESS, env=env, check=True)
    floor_py = _paths()["floor_py"]
    if os.path.exists(floor_py) and not _has_module(floor_py, "matplotlib"):
        # Only for the chart: failing to get it is fine.
        subprocess.run([floor_py, "-m", "pip", "install", "-q", "matplotlib"], check=False)


def _has_module(python: str, module: str) -> bool:
    r = subprocess.run([python, "-c", f"import {module}"], capture_output=True, check=False)
    return r.returncode == 0


def _free_port() -> int:
    # Others may run benchmarks on this machine too: the fixed ports of the shared harness can be
    # taken, so by default each implementation gets a port that is free now.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def build_cases(a: argparse.Namespace) -> list[tuple[str, str, list[str]]]:
    """(case name, group, argv) for one repetition, before interleaving."""
    p = _paths()
    h = HARNESS
    me = sys.executable
    driver_py = p["floor_py"] if os.path.exists(p["floor_py"]) else me
    drive = [driver_py, str(REPO / "bench" / "drive.py"), str(h / "driver" / "mcpdrive.py")]
    modern_drive = [*drive[:2], "--modern", *drive[2:]]
    log = ["--log", str(a.out / "servers.log")]
    if a.port_base:
        port = {i: a.port_base + off for i, off in PORT_OFFSET.items()}
    else:
        port = {i: _free_port() for i in PORT_OFFSET}
    url = {i: f"http://127.0.0.1:{port[i]}/mcp" for i in port}
    server = {
        "mcpkit": f"{me} {REPO / 'bench' / 'servers' / 'mcpkit_server.py'}",
        "mcpkit-async": f"{me} {REPO / 'bench' / 'servers' / 'mcpkit_server.py'} --async-tools",
        "official": f"{p['mcp_py']} {h / 'peers' / 'official_server.py'}",
        "fastmcp": f"{p['fastmcp_py']} {h / 'peers' / 'fastmcp_server.py'}",
        "ts": f"node {h / 'ts' / 'server.mjs'}",
    }
    floor_stdio = f"{p['floor_py']} {h / 'floor' / 'stdio_server.py'}"
    floor_asgi = f"{p['floor_py']} {h / 'floor' / 'asgi_server.py'}"
    floor_http = f"{floor_asgi} --port {port['floor']}"  # uvicorn's h11, as the peers get
    if a.quick:
        d_opts = [
            "--n",
            "30",
            "--warmup",
            "3",
            "--conc-total",
            "30",
            "--sessions",
            "2",
            "--payload-n",
            "1",
            "--cold",
            "1",
        ]
        t_opts = ["--n", "3", "--warmup", "3"]
        c_opts = ["--n", "20", "--warmup", "2", "--conc-total", "20", "--sessions", "2"]
    else:
        d_opts, t_opts, c_opts = [], ["--n", "50"], []
    impls = a.impls
    # Our server with `async def` tools too, in the stdio and HTTP JSON cases (issue 42's rows).
    stdio_impls = [*impls, "mcpkit-async"] if "mcpkit" in impls else impls
    cases: list[tuple[str, str, list[str]]] = []
    for i in stdio_impls:  # stdio, neutral driver
        cmd = floor_stdio if i == "floor" else server[i]
        cases.append(
            (f"stdio/{i}", "stdio", [*drive, "stdio", *log, *d_opts, "--label", i, "--cmd", cmd])
        )
    http_impls = [*stdio_impls, "floor-httptools"] if "floor" in impls else stdio_impls
    for i in http_impls:  # Streamable HTTP, neutral driver: SSE and JSON responses, stateless
        if i == "floor":
            variants = {"json": floor_http, "sse": f"{floor_http} --sse"}
        elif i == "floor-httptools":  # the bare ASGI app on uvicorn with httptools
            variants = {"": f"{floor_asgi} --port {port[i]} --http httptools"}
        elif i == "mcpkit-async":
            variants = {"json": f"{server[i]} --http {port[i]} --json"}
        else:
            base = f"{server[i]} --http {port[i]}"
            variants = {
                "sse": base,
                "json": f"{base} --json",
                "stateless": f"{base} --json --stateless",
            }
        if i in MODERN_IMPLS:
            # Revision 2026-07-28 on the same endpoint: no session, every request stateless.
            variants["modern"] = f"{server[i]} --http {port[i]} --json"
        for v, cmd in variants.items():
            cases.append(
                (
                    f"http/{i}-{v}" if v else f"http/{i}",
                    "http",
                    [
                        *(modern_drive if v == "modern" else drive),
                        "http",
                        *log,
                        *d_opts,
                        "--label",
                        f"{i}/{v}" if v else i,
                        "--url",
                        url[i],
                        "--server-cmd",
                        cmd,
                    ],
                )
            )
    for t in (0, 1000):  # many tools, stdio
        for i in impls:
            cmd = floor_stdio if i == "floor" else server[i]
            cases.append(
                (
                    f"tools/{i}-{t}",
                    "tools",
                    [
                        *drive,
                        "tools",
                        *log,
                        *t_opts,
                        "--label",
                        f"{i}/{t}",
                        "--cmd",
                        f"{cmd} --tools {t}",
                    ],
                )
            )
    clients: dict[str, list[tuple[str, list[str]]]] = {
        "mcpkit": [("", [me, str(REPO / "bench" / "clients" / "mcpkit_client.py")])],
        "official": [
            (f"-{m}", [p["mcp_py"], str(h / "peers" / "official_client.py"), "--mode", m])
            for m in ("legacy", "auto")
        ],
        "fastmcp": [("", [p["fastmcp_py"], str(h / "peers" / "fastmcp_client.py")])],
        "ts": [("", ["node", str(h / "ts" / "client.mjs")])],
    }
    for transport in ("stdio", "http"):  # each SDK's own client against its own server
        for i in impls:
            for suffix, client in clients.get(i, []):
                name = f"sdk/{i}{suffix}-{transport}"
                label = ["--label", i]
                if transport == "stdio":
                    argv = [*client, *label, *c_opts, "--stdio-cmd", server[i]]
                else:
                    argv = [
                        *drive,
                        "wrap",
                        *log,
                        "--url",
                        url[i],
                        "--server-cmd",
                        f"{server[i]} --http {port[i]}",
                        "--",
                        *client,
                        *label,
                        *c_opts,
                        "--url",
                        url[i],
                    ]
                cases.append((name, "sdk", argv))
    return [c for c in cases if re.search(a.only, c[0])]


def interleave(cases: list[tuple[str, str, list[str]]], rep: int) -> list[tuple[str, list[str]]]:
    """Keep the groups in order; rotate the order of the cases inside each group by `rep`."""
    groups: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
    for name, group, argv in cases:
        groups[group].append((name, argv))
    out: list[tuple[str, list[str]]] = []
    for members in groups.values():
        k = rep % len(members)
        out.extend(members[k:] + members[:k])
    return out


def run_case(name: str, argv: list[str], rep: int, a: argparse.Namespace) -> dict[str, Any] | None:
    env = {**os.environ, "ANCHORS": str(ANCHORS), "PYTHONUNBUFFERED": "1"}
    t0 = time.perf_counter()
    print(f"[rep {rep}] {name:<34}", end="", file=sys.stderr, flush=True)
    try:
        proc = subprocess.run(
            argv,
            cwd=HARNESS,
            env=env,
            capture_output=True,
            text=True,
            timeout=a.case_timeout,
            check=False,
        )
        out, err, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = f"timed out after {a.case_timeout} s", -1
    record: dict[str, Any] | None = None
    for line in out.splitlines():
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
    dt = time.perf_counter() - t0
    if rc != 0 or record is None:
        print(f" FAILED ({dt:.0f} s)", file=sys.stderr)
        with open(a.out / "errors.log", "a") as f:
            f.write(
                f"=== {name} rep {rep} rc={rc}\n{shlex.join(argv)}\n{out[-2000:]}\n{err[-4000:]}\n"
            )
        return None
    print(f" ok ({dt:.0f} s)", file=sys.stderr)
    record.update(case=name, rep=rep)
    with open(a.out / f"rep{rep}.jsonl", "a") as f:
        f.write(json.dumps(record) + "\n")
    return record


# ----------------------------------------------------------------------------- summary
def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians per case and metric, and the targets as same-repetition ratios (median)."""
    by_case: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    per_rep: dict[tuple[str, int], dict[str, Any]] = {}
    for r in records:
        per_rep[(r["case"], r["rep"])] = r["metrics"]
        for k, v in r["metrics"].items():
            by_case[r["case"]][k].append(v)
    medians: dict[str, dict[str, Any]] = {}
    for case, metrics in by_case.items():
        medians[case] = {}
        for k, vs in metrics.items():
            nums = [v for v in vs if _num(v)]
            medians[case][k] = round(statistics.median(nums), 3) if nums else vs[-1]
        medians[case]["reps"] = len(next(iter(metrics.values()), []))
    reps = sorted({r["rep"] for r in records})
    targets = []
    for what, case, metric, other, op, factor in TARGETS:
        ratios = []
        for rep in reps:
            x = per_rep.get((case, rep), {}).get(metric)
            y = per_rep.get((other, rep), {}).get(metric)
            if _num(x) and _num(y) and y:
                ratios.append(x / y)
        ratio = round(statistics.median(ratios), 3) if ratios else None
        met = None
        if ratio is not None:
            met = {">=": ratio >= factor, "<=": ratio <= factor, "<": ratio < factor}[op]
        targets.append(
            {
                "what": what,
                "case": case,
                "metric": metric,
                "against": other,
                "target": f"{op} {factor}x",
                "ratio": ratio,
                "met": met,
                "value": medians.get(case, {}).get(metric),
                "against_value": medians.get(other, {}).get(metric),
            }
        )
    return {"medians": medians, "targets": targets, "reps": reps}


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if not _num(v):
        return str(v)
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"


def tables(summary: dict[str, Any], impls: list[str]) -> str:
    med = summary["medians"]
    ours = ["mcpkit", "mcpkit-async"] if "mcpkit" in impls else []
    cols = ours + [i for i in ("official", "fastmcp", "ts", "floor") if i in impls]
    lines = ["| metric | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]

    def case_of(template: str, impl: str) -> str:
        case = template.format(i=impl)
        if case not in med and impl == "official" and case.startswith("sdk/"):
            case = case.replace("sdk/official", "sdk/official-legacy")
        return case

    for title, template, metric in HEADLINE:
        cells = []
        for impl in cols:
            m = med.get(case_of(template, impl))
            if m is None:
                cells.append("")
                continue
            if isinstance(metric, tuple):
                cells.append(" / ".join(_fmt(m.get(k)) for k in metric))
                continue
            cell = _fmt(m.get(metric))
            ref = med.get(case_of(template, "official"), {}).get(metric)
            if impl != "official" and cell and _num(ref) and ref:
                cell += f" [{m[metric] / ref:.2f}x]"
            cells.append(cell)
        if any(cells):
            lines.append(f"| {title} | " + " | ".join(cells) + " |")
    out = [
        "## Headline (medians; [x official] = ratio of the medians; own client: official = "
        "legacy handshake)",
        "",
        *lines,
        "",
        "## Targets (issues 7, 14 and 42; median of same-repetition ratios)",
        "",
        "| target | case / metric | mcpkit | peer | ratio | target | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in summary["targets"]:
        met = {True: "yes", False: "**no**", None: "n/a"}[t["met"]]
        out.append(
            f"| {t['what']} | {t['case']} {t['metric']} vs {t['against']} | "
            f"{_fmt(t['value'])} | {_fmt(t['against_value'])} | {_fmt(t['ratio'])} | "
            f"{t['target']} | {met} |"
        )
    out += ["", "## Every case (medians)", ""]
    for case in sorted(med):
        m = med[case]
        body = ", ".join(f"{k}={_fmt(v)}" for k, v in m.items())
        out.append(f"- `{case}`: {body}")
    return "\n".join(out) + "\n"


def chart(out: Path, summary: dict[str, Any], impls: list[str]) -> None:
    """A bar chart of the headline throughputs relative to the official SDK (optional)."""
    py = _paths()["floor_py"]
    if not os.path.exists(py) or not _has_module(py, "matplotlib"):
        return
    rows = [
        ("stdio seq", "stdio/{i}", "seq_calls_s"),
        ("stdio 64 in flight", "stdio/{i}", "conc64_calls_s"),
        ("stdio 1 MiB result", "stdio/{i}", "big_out_calls_s"),
        ("HTTP JSON seq", "http/{i}-json", "seq_calls_s"),
        ("HTTP SSE 32 sessions", "http/{i}-sse", "sess32_calls_s"),
        ("own client stdio seq", "sdk/{i}-stdio", "seq_calls_s"),
    ]
    med = summary["medians"]
    data: dict[str, list[float]] = {}
    for impl in [i for i in ("mcpkit", "official", "fastmcp", "ts") if i in impls]:
        vals = []
        for _, template, metric in rows:
            case = template.format(i=impl)
            ref_case = template.format(i="official")
            if case.startswith("sdk/official"):
                case = ref_case = "sdk/official-legacy-stdio"
            if ref_case.startswith("sdk/official"):
                ref_case = "sdk/official-legacy-stdio"
            v, ref = med.get(case, {}).get(metric), med.get(ref_case, {}).get(metric)
            vals.append(v / ref if _num(v) and _num(ref) and ref else 0.0)
        data[impl] = vals
    spec = {"labels": [r[0] for r in rows], "data": data, "path": str(out / "chart.png")}
    script = (
        "import json,sys\nimport matplotlib\nmatplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\ns=json.loads(sys.argv[1])\n"
        "fig,ax=plt.subplots(figsize=(9,4.5))\nn=len(s['data'])\nw=0.8/max(n,1)\n"
        "for k,(impl,vals) in enumerate(s['data'].items()):\n"
        "    ax.bar([x+k*w for x in range(len(vals))],vals,w,label=impl)\n"
        "ax.set_xticks([x+w*(n-1)/2 for x in range(len(s['labels']))])\n"
        "ax.set_xticklabels(s['labels'],rotation=15)\nax.set_yscale('log')\n"
        "ax.set_ylabel('throughput / official SDK (log)')\nax.axhline(1,color='grey',lw=0.8)\n"
        "ax.legend()\nfig.tight_layout()\nfig.savefig(s['path'],dpi=110)\n"
    )
    subprocess.run([py, "-c", script, json.dumps(spec)], check=False, capture_output=True)


def versions(impls: list[str]) -> dict[str, str]:
    p = _paths()
    v: dict[str, str] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": str(os.cpu_count()),
    }
    try:
        v["mcpkit"] = subprocess.run(
            ["git", "-C", str(REPO), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        pass
    probes = {"official": (p["mcp_py"], "mcp"), "fastmcp": (p["fastmcp_py"], "fastmcp")}
    for impl, (py, dist) in probes.items():
        if impl in impls and os.path.exists(py):
            code = f"import importlib.metadata as m; print(m.version({dist!r}))"
            r = subprocess.run([py, "-c", code], capture_output=True, text=True, check=False)
            v[dist] = r.stdout.strip()
    if "ts" in impls:
        try:
            v["ts_sdk"] = json.loads(Path(p["ts_sdk"], "package.json").read_text())["version"]
            v["node"] = subprocess.run(
                ["node", "--version"], capture_output=True, text=True, check=False
            ).stdout.strip()
        except (OSError, ValueError, KeyError):
            pass
    return v


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--reps", type=int, default=int(os.environ.get("REPS", "3")))
    p.add_argument(
        "--first-rep", type=int, default=1, help="number of the first repetition (add to --out)"
    )
    p.add_argument("--only", default=".", help="regex on case names (see --list)")
    p.add_argument("--impls", default=",".join(IMPLS), help="comma-separated: " + ",".join(IMPLS))
    p.add_argument("--quick", action="store_true", help="tiny counts (a smoke run, not a measure)")
    p.add_argument("--no-setup", action="store_true", help="do not install missing peers")
    p.add_argument("--no-engine", action="store_true", help="skip the engine micro-benchmark")
    p.add_argument("--list", action="store_true", help="print the case names and exit")
    p.add_argument("--out", type=Path, default=None, help="results directory")
    p.add_argument(
        "--port-base",
        type=int,
        default=0,
        help="HTTP ports: base + offset per implementation (default: free ports)",
    )
    p.add_argument("--case-timeout", type=float, default=None)
    a = p.parse_args(argv)
    a.impls = [i for i in a.impls.split(",") if i]
    unknown = set(a.impls) - set(IMPLS)
    if unknown:
        p.error(f"unknown implementations: {sorted(unknown)}")
    if a.case_timeout is None:
        a.case_timeout = 120.0 if a.quick else 900.0
    if a.out is None:
        a.out = REPO / "bench" / "results" / f"run-{time.strftime('%Y%m%d-%H%M%S')}"
    if not (HARNESS / "driver" / "mcpdrive.py").exists():
        print(f"the shared harness is not at {HARNESS} (set MCP_BENCH_HARNESS)", file=sys.stderr)
        return 2
    if a.list:
        a.out = Path(os.devnull)
        for name, _, _ in build_cases(a):
            print(name)
        return 0
    a.out = a.out.resolve()
    a.out.mkdir(parents=True, exist_ok=True)
    if not a.no_setup:
        setup(a.impls)
    missing = _needs_setup(a.impls)
    if missing:
        print(f"peers not installed: {missing} (run without --no-setup)", file=sys.stderr)
        return 2
    cases = build_cases(a)
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "reps": a.first_rep + a.reps - 1,
        "quick": a.quick,
        "impls": a.impls,
        "only": a.only,
        "versions": versions(a.impls),
    }
    (a.out / "meta.json").write_text(json.dumps(meta, indent=1))
    records: list[dict[str, Any]] = []
    failed = 0
    for rep in range(a.first_rep, a.first_rep + a.reps):
        for name, case_argv in interleave(cases, rep - 1):
            r = run_case(name, case_argv, rep, a)
            if r is None:
                failed += 1
            else:
                records.append(r)
    engine = None
    if not a.no_engine and "mcpkit" in a.impls:
        engine_json = a.out / "engine.json"
        cmd = [sys.executable, "-m", "bench.engine", "--json", str(engine_json)]
        if a.quick:
            cmd += ["--quick", "--n", "20", "--warmup", "2", "--limit", "30"]
        print("engine micro-benchmark:", shlex.join(cmd[1:]), file=sys.stderr)
        ep = subprocess.run(
            cmd, cwd=REPO, capture_output=True, text=True, check=False, timeout=a.case_timeout
        )
        if ep.returncode == 0 and engine_json.exists():
            engine = json.loads(engine_json.read_text())
        else:
            failed += 1
            with open(a.out / "errors.log", "a") as f:
                f.write(
                    f"=== engine rc={ep.returncode}\n{ep.stdout[-2000:]}\n{ep.stderr[-4000:]}\n"
                )
    # Every repetition in the directory counts, so that --first-rep can add repetitions later.
    records = [
        json.loads(line)
        for path in sorted(a.out.glob("rep*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    summary = summarize(records)
    summary.update(meta=meta, failed=failed)
    if engine is not None:
        summary["engine"] = {"rows": engine.get("rows"), "ratios": engine.get("ratios")}
    (a.out / "summary.json").write_text(json.dumps(summary, indent=1))
    text = tables(summary, a.impls)
    head = (
        f"# mcpkit benchmark, {meta['date']}, {len(summary['reps'])} repetition(s)"
        f"{' (quick: tiny counts, not a measurement)' if a.quick else ''}\n\nversions: "
        + ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
        + "\n\n"
    )
    if engine is not None:
        text += "\n## Engine micro-benchmark (bench/engine.py)\n\n"
        for row in engine.get("rows", []):
            text += (
                f"- `{row.get('case')}`: seq {_fmt(row.get('seq_calls_s'))}/s, "
                f"64 in flight {_fmt(row.get('conc64_calls_s'))}/s\n"
            )
        for k, v in (engine.get("ratios") or {}).items():
            text += f"- {k}: {_fmt(v)}\n"
    (a.out / "summary.md").write_text(head + text)
    chart(a.out, summary, a.impls)
    print(head + text)
    print(f"results in {a.out}" + (f"; {failed} case(s) FAILED, see errors.log" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
