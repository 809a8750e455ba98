"""The eras benchmark (``python -m bench eras``, issue 29) runs end to end with tiny counts.

Timings are not tests: this checks that both eras are served by the one server and measured
(the 2025-11-25 session row and the 2026-07-28 stateless row, in the throughput table and in
the in-process profile), not how fast.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ROWS = ("| 2025-11-25 session, JSON responses |", "| 2026-07-28 stateless |")


def _quick(tmp_path: Path, *options: str) -> tuple[str, Any]:
    """``python -m bench eras --quick OPTIONS``: what it printed and the JSON it wrote."""
    out = tmp_path / "eras.json"
    argv = [sys.executable, "-m", "bench", "eras", "--quick", *options, "--json", str(out)]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout, json.loads(out.read_text())


def test_eras_bench_quick(tmp_path: Path) -> None:
    stdout, result = _quick(tmp_path)
    for row in ROWS:
        # Once in the calls/s table, once in the Python-work table.
        assert stdout.count(row) == 2, (row, stdout)
    assert "| 2026 / 2025 (median of same-repetition ratios" in stdout
    # Issue 29's calls target counts Python function calls; all calls are the row beside.
    py = result_row = None
    for line in stdout.splitlines():
        if line.startswith("| fewer server-side Python function calls per tools/call |"):
            py = line
        elif line.startswith("| (all function calls, builtins included) |"):
            result_row = line
    assert py is not None and result_row is not None, stdout
    cells = result["throughput"]
    # The default stacks: uvicorn's two protocols, httptools being serve_http's default.
    stacks = {(c["http"], c["conns"]) for c in cells}
    assert stacks >= {(h, n) for h in ("h11", "httptools") for n in (1, 32)}
    assert "| 2026 tools/call >= 1.0x 2025, sequential, uvicorn httptools (serve_http's" in stdout
    for cell in cells:
        assert cell["calls_s_2025"] > 0 and cell["calls_s_2026"] > 0
        assert cell["reps"] == 1 and len(cell["ratios"]) == 1
    work = result["python_work"]
    for era in ("2025", "2026"):
        assert work[era]["calls"] >= work[era]["python_calls"] >= work[era]["mcpkit_calls"] > 0
        assert work[era]["modules"] > 0
    # The target rows report the counts the JSON holds.
    assert f"| {work['2026']['python_calls']} vs {work['2025']['python_calls']} |" in py
    assert f"| {work['2026']['calls']} vs {work['2025']['calls']} |" in result_row
    # The benchmark's tools are def functions by default: a sync runner calls them.
    assert result["config"]["tools"] == "sync"
    assert "mcpkit._server._threads" in work["2026"]["by_module"]
    # The two profiled requests took different paths through the server.
    assert set(work["2026"]["by_module"]) != set(work["2025"]["by_module"])


def test_eras_bench_with_async_tools(tmp_path: Path) -> None:
    """``--tools async`` (the shape before the benchmark's tools became ``def`` functions),
    as performance-notes.md names it: the server registers ``async def`` tools, and says so."""
    _, result = _quick(tmp_path, "--tools", "async", "--http", "httptools")
    assert result["config"]["tools"] == "async"
    stacks = {(c["http"], c["conns"]) for c in result["throughput"]}
    assert stacks == {("httptools", 1), ("httptools", 32)}
    # The tool is a coroutine function, awaited by the tool's definition itself: nothing of
    # the thread module is on its path (the default's def tools go through a sync runner).
    assert "mcpkit._server._threads" not in result["python_work"]["2026"]["by_module"]
