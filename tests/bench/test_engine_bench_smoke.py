"""The engine micro-benchmark (``bench/engine.py``) runs end to end with tiny counts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.engine import CASES

ROOT = Path(__file__).resolve().parents[2]


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    quick = ("--quick", "--n", "20", "--warmup", "2", "--limit", "30")
    return subprocess.run(
        [sys.executable, "-m", "bench.engine", *quick, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_engine_bench_quick(tmp_path: Path) -> None:
    out = tmp_path / "engine.json"
    proc = run_bench("--json", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    rows = {r["case"]: r for r in result["rows"]}
    assert set(rows) == set(CASES)
    for name, row in rows.items():
        assert "error" not in row, (name, row)
        assert row["n"] == 20
        assert row["seq_calls_s"] > 0 and row["conc64_calls_s"] > 0
        assert 0 < row["seq_p50_ms"] <= row["seq_p99_ms"]
    assert "session/stdio / official/stdio" in result["ratios"]
    assert "session/stdio" in proc.stdout


def test_engine_bench_profile(tmp_path: Path) -> None:
    prof = tmp_path / "prof"
    proc = run_bench(
        "--cases", "^session/stdio$", "--profile", str(prof), "--json", str(tmp_path / "o.json")
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (prof / "session-stdio-client.prof").is_file()
    assert (prof / "session-stdio-server.prof").is_file()
    assert "session/stdio server:" in proc.stdout
    assert "us busy +" in proc.stdout and "us/call" in proc.stdout
