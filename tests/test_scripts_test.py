"""``scripts/test`` as the README documents it: ``MCPKIT_TEST_WORKERS=N`` runs each pass in N
pytest-xdist workers, ``0`` in the pytest process itself (a tiny selection, both passes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GROUPED_RUN = ["-p", "no:randomly", "-p", "no:cacheprovider", "test_grouped.py"]
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


def test_xdist_groups_hold_with_the_installed_pytest(tmp_path: Path) -> None:
    # The suite sends tests that share a run (the doc blocks, the auth scenarios) or a port
    # (the deploy walkthrough) to one worker with xdist_group; a pytest/xdist pair that
    # ignores the mark (pytest-xdist issue 1386) would run those shared runs once per worker.
    (tmp_path / "test_grouped.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.xdist_group('shared')\n"
        "@pytest.mark.parametrize('i', range(8))\n"
        "def test_grouped(i):\n    pass\n\n"
        "@pytest.mark.parametrize('i', range(8))\n"
        "def test_free(i):\n    pass\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-n", "2", "--dist", "loadgroup", *GROUPED_RUN],
        cwd=tmp_path,
        env=_env("2"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = [line.split() for line in done.stdout.splitlines() if line.startswith("[gw")]
    grouped = [words[0] for words in ran if "PASSED" in words and "test_grouped[" in words[-1]]
    assert len(grouped) == 8 and len(set(grouped)) == 1, done.stdout[-3000:]
