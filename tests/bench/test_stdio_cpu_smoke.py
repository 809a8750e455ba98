"""The stdio CPU harness (``python -m bench.stdio_cpu``, issue 35) runs end to end with tiny
counts. Timings are not tests: this checks that both servers are driven, answer every call,
and are measured (their CPU per call read from ``/proc``), not how fast."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import stdio_cpu  # noqa: E402

pytestmark = pytest.mark.skipif(
    not Path(stdio_cpu.SERVERS["floor"][-1]).exists(),
    reason=f"shared benchmark harness not found at {stdio_cpu.HARNESS}",
)


@pytest.mark.parametrize("pin", [[], ["--no-pin"]], ids=["pinned", "no-pin"])
def test_stdio_cpu_quick(pin: list[str]) -> None:
    args = ["--n", "200", "--warmup", "20", "--rounds", "1", *pin]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.stdio_cpu", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for name in ("mcpkit", "floor"):
        line = re.search(
            rf"round 1 {name} +server CPU +([\d.]+) µs per call, +(\d+) calls/s", proc.stdout
        )
        assert line is not None, proc.stdout
        assert float(line.group(2)) > 0
    assert re.search(r"mcpkit / floor, calls/s \(median of 1 rounds\): [\d.]+x", proc.stdout)
