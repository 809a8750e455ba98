"""``python -m bench threads N`` as docs/dependencies.md runs it (a small N here): one row per
hop (mcpkit's pool and the maintained ways), sequential and 64 in flight, in µs per call."""

from __future__ import annotations

from tests.bench._bench import bench


def test_the_threads_bench_prints_a_row_per_hop() -> None:
    lines = bench("threads", "640").splitlines()
    assert lines[0].startswith("a sync function's hop to a worker thread and back, 640 calls")
    rows = {line[:28].strip(): line[28:].split() for line in lines[2:] if line.strip()}
    assert {"mcpkit's pool", "anyio.to_thread.run_sync", "loop.run_in_executor"} <= set(rows)
    for cells in rows.values():
        assert len(cells) == 2 and all(float(c) > 0 for c in cells), cells
