"""The public conformance suite against three workers sharing one Redis, behind the strict
round-robin proxy: every server scenario (both eras, the extensions; authorization has
its own tests) must pass as it does for one process. Workers name Redis both documented
ways: ``--redis URL`` and ``MCPKIT_REDIS_URL``."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from tests import _early
from tests.conftest import BACKEND
from tests.scaleout._cluster import redis_server

ROOT = Path(__file__).resolve().parents[2]
RUN_SH = Path(
    os.environ.get("MCPKIT_CONFORMANCE_RUN_SH", ROOT.parent / "shared" / "conformance" / "run.sh")
)
CLUSTER = Path(__file__).with_name("_cluster.py")

ENABLED = os.environ.get("MCPKIT_CONFORMANCE") != "0" and bool(
    os.environ.get("CI") or os.environ.get("MCPKIT_CONFORMANCE") == "1"
)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(not ENABLED, reason="slow: runs in CI, or set MCPKIT_CONFORMANCE=1"),
]


def start_early(item: pytest.Item) -> None:
    """The run starts with the session, in the background (tests/_early.py), with a Redis
    of its own; the scaleout tests run in the asyncio pass only (tests/scaleout/conftest.py)."""
    if ENABLED and RUN_SH.exists() and BACKEND == "asyncio":
        tmp = item.config._tmp_path_factory.mktemp("cluster-conformance")  # type: ignore[attr-defined]
        _early.start(item.nodeid, partial(_three_workers, tmp))


def _three_workers(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """run.sh against three workers on a Redis of their own: the process, the worker logs."""
    (tmp_path / "redis").mkdir(exist_ok=True)
    with redis_server(tmp_path / "redis") as redis, _early.owning(redis.proc.pid):
        command = " ".join(
            shlex.quote(a)
            for a in (sys.executable, str(CLUSTER), "--redis", redis.url, "--logdir", str(tmp_path))
        )
        proc = _early.run_process(
            [
                "bash",
                str(RUN_SH),
                "--server",
                command + " --port {port}",
                "--skip",
                "^auth/",
                "--out",
                str(tmp_path / "results"),
            ],
            cwd=ROOT,
            env={**os.environ, "CONFORMANCE_VERSION": "0.2.0-alpha.12"},
            timeout=1100,
        )
        redis.stop()  # while it still counts as the job's
    return proc, tmp_path


def test_three_workers_behind_round_robin_pass_every_server_scenario(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if not RUN_SH.exists():
        pytest.fail(f"conformance runner not found at {RUN_SH}")
    proc, where = _early.result(request.node.nodeid, partial(_three_workers, tmp_path))
    results = where / "results" / "results.json"
    assert results.exists(), f"no results (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    rows = json.loads(results.read_text())["rows"]
    assert len(rows) >= 65, [r["scenario"] for r in rows]
    failing = [(r["scenario"], r["failed_checks"][:3]) for r in rows if r["result"] != "PASS"]
    logs = "\n".join(p.read_text()[-2000:] for p in sorted(where.glob("worker*.log")))
    assert failing == [], f"{failing}\nworker logs:\n{logs}"
