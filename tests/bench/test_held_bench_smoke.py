"""``python -m bench held N`` as docs/performance-notes.md runs it (a small N here): it holds N
calls, answers them all, and prints the memory and speed rows the page quotes."""

from __future__ import annotations

from tests.bench._bench import bench


def test_the_held_bench_prints_its_rows() -> None:
    out = bench("held", "50")
    assert "50 calls each waiting for its answer" in out
    held = next(line for line in out.splitlines() if line.startswith("held (default)"))
    # Held calls keep their suspended functions: far more bytes per call than none held.
    assert int(held.split()[2].replace(",", "")) > 1000
    for row in ("client declaring elicitation: held", "client declaring nothing"):
        assert row in out and "us/call" in out
