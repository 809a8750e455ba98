"""The HTTP front ends side by side: mcpkit on uvicorn (h11, httptools) and on granian (RSGI),
with the official SDK and the bare floors (ASGI on uvicorn, RSGI on granian:
``bench/servers/rsgi_floor.py``) in the same run.

    python -m bench.frontends [--rounds 3] [--n 2000] [--async-tools] [--quick]

Every server is measured by the shared harness's neutral driver (``bench/drive.py`` over
``$MCP_BENCH_HARNESS/driver/mcpdrive.py``): ``tools/call`` of ``echo`` with JSON answers,
sequential and over 32 sessions (one call in flight each); mcpkit's servers also in revision
2026-07-28 (``--modern``: no session, the same calls). The cases alternate within each round,
and the table gives the median of the rounds and their range, with each row's ratio to the
official SDK and to the floor on uvicorn + httptools taken round by round (the machine's
load moves single figures; ratios within a round move less). Results go to
``bench/results/frontends-<time>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HARNESS = Path(os.environ.get("MCP_BENCH_HARNESS", REPO.parent / "shared" / "bench"))
ANCHORS = Path(os.environ.get("ANCHORS", Path.home() / ".cache" / "mcp-anchors"))
SESSIONS = 32


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def cases(async_tools: bool) -> dict[str, tuple[str, bool]]:
    """Case name -> (the server's command with ``{port}``, whether the driver speaks 2026)."""
    me = sys.executable
    ours = f"{me} {REPO / 'bench' / 'servers' / 'mcpkit_server.py'} --http {{port}} --json"
    if async_tools:
        ours += " --async-tools"
    floor_py = ANCHORS / "venv-floor" / "bin" / "python"
    floor = f"{floor_py} {HARNESS / 'floor' / 'asgi_server.py'} --port {{port}}"
    official = (
        f"{ANCHORS / 'venv-mcp' / 'bin' / 'python'} {HARNESS / 'peers' / 'official_server.py'}"
    )
    out: dict[str, tuple[str, bool]] = {}
    for front, flags in (
        ("uvicorn-h11", "--parser h11"),
        ("uvicorn-httptools", "--parser httptools"),
        ("granian", "--server granian"),
    ):
        out[f"mcpkit/{front}/2025"] = (f"{ours} {flags}", False)
        out[f"mcpkit/{front}/2026"] = (f"{ours} {flags}", True)
    out["official/uvicorn-h11/2025"] = (f"{official} --http {{port}} --json", False)
    out["floor/uvicorn-h11"] = (f"{floor} --http h11", False)
    out["floor/uvicorn-httptools"] = (f"{floor} --http httptools", False)
    rsgi_floor = REPO / "bench" / "servers" / "rsgi_floor.py"
    out["floor/granian"] = (f"{me} {rsgi_floor} --port {{port}}", False)
    return out


def run_case(cmd: str, modern: bool, n: int, log: Path) -> dict[str, float]:
    """One case through the neutral driver: its sequential and 32-session calls/s."""
    port = _free_port()
    floor_py = ANCHORS / "venv-floor" / "bin" / "python"
    driver_py = str(floor_py) if floor_py.exists() else sys.executable
    argv = [driver_py, str(REPO / "bench" / "drive.py")]
    if modern:
        argv.append("--modern")
    argv += [str(HARNESS / "driver" / "mcpdrive.py"), "http", "--log", str(log)]
    argv += ["--n", str(n), "--warmup", str(max(n // 10, 3)), "--conc-total", str(n)]
    argv += ["--sessions", str(SESSIONS), "--payload-n", "0"]
    argv += ["--url", f"http://127.0.0.1:{port}/mcp", "--server-cmd", cmd.format(port=port)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{cmd}: the driver failed:\n{done.stderr[-2000:]}")
    metrics = json.loads(done.stdout.strip().splitlines()[-1])["metrics"]
    return {"seq": metrics["seq_calls_s"], "conc": metrics[f"sess{SESSIONS}_calls_s"]}


def _fmt(values: list[float]) -> str:
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:,.0f}"
    return f"{med:,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def _ratio(rounds: list[dict[str, dict[str, float]]], name: str, peer: str, key: str) -> str:
    ratios = [r[name][key] / r[peer][key] for r in rounds if name in r and peer in r]
    return f"{statistics.median(ratios):.2f}x" if ratios else ""


def table(rounds: list[dict[str, dict[str, float]]]) -> str:
    """The markdown table of ``rounds`` (medians, ranges, same-round ratios)."""
    rows = [
        "| server | sequential calls/s | 32 sessions calls/s | vs official, seq / 32 "
        "| vs floor (httptools), seq / 32 |",
        "|---|---|---|---|---|",
    ]
    for name in rounds[0]:
        seq = [r[name]["seq"] for r in rounds]
        conc = [r[name]["conc"] for r in rounds]
        official, floor = "official/uvicorn-h11/2025", "floor/uvicorn-httptools"
        vs_off = (
            f"{_ratio(rounds, name, official, 'seq')} / {_ratio(rounds, name, official, 'conc')}"
        )
        vs_floor = f"{_ratio(rounds, name, floor, 'seq')} / {_ratio(rounds, name, floor, 'conc')}"
        rows.append(f"| {name} | {_fmt(seq)} | {_fmt(conc)} | {vs_off} | {vs_floor} |")
    return "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--n", type=int, default=2000, help="calls per measurement")
    p.add_argument("--async-tools", action="store_true", help="mcpkit's tools as `async def`")
    p.add_argument("--quick", action="store_true", help="tiny counts, one round (a smoke run)")
    a = p.parse_args()
    if a.quick:
        a.rounds, a.n = 1, 30
    out_dir = REPO / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    log = out_dir / f"frontends-{stamp}.log"
    all_cases = cases(a.async_tools)
    rounds: list[dict[str, dict[str, float]]] = []
    for i in range(a.rounds):
        # Alternate the order round by round, so no case always runs first or last.
        order = list(all_cases) if i % 2 == 0 else list(reversed(all_cases))
        got: dict[str, dict[str, float]] = {}
        for name in order:
            got[name] = run_case(*all_cases[name], a.n, log)
            print(f"round {i + 1}: {name}: {got[name]}", file=sys.stderr, flush=True)
        rounds.append({name: got[name] for name in all_cases})
    result = {"rounds": rounds, "n": a.n, "async_tools": a.async_tools, "time": stamp}
    (out_dir / f"frontends-{stamp}.json").write_text(json.dumps(result, indent=1))
    print(table(rounds))


if __name__ == "__main__":
    main()
