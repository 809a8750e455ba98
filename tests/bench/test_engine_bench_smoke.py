"""The engine micro-benchmark (``bench/engine.py``) runs end to end with tiny counts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.engine import CASES

ROOT = Path(__file__).resolve().parents[2]


def test_engine_bench_quick(tmp_path: Path) -> None:
    out = tmp_path / "engine.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.engine",
            "--quick",
            "--n",
            "20",
            "--warmup",
            "2",
            "--limit",
            "30",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
    )
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
