"""``scripts/test`` as the README documents it: ``MCPKIT_TEST_WORKERS=N`` runs each pass in N
pytest-xdist workers, ``0`` in the pytest process itself (a tiny selection, both passes)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PICK = ["tests/test_backend.py", "-k", "waiter_past", "-p", "no:randomly"]


def _env(workers: str) -> dict[str, str]:
    # Nothing of the outer run leaks in (its pass, its xdist worker, its conformance switch).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MCPKIT_TEST", "MCPKIT_CONFORMANCE", "PYTEST_"))
    }
    env["MCPKIT_TEST_WORKERS"] = workers
    return env


@pytest.mark.parametrize("workers", ["0", "2"])
def test_mcpkit_test_workers_sets_the_workers_of_each_pass(workers: str) -> None:
    done = subprocess.run(
        ["scripts/test", *PICK],
        cwd=ROOT,
        env=_env(workers),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert out.count("== pytest (") == 2  # asyncio, then trio
    if workers == "0":
        assert "workers" not in out and "bringing up nodes" not in out
    else:
        assert out.count("created: 2/2 workers") == 2
