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
from pathlib import Path

import pytest
from tests.scaleout._cluster import RedisServer

ROOT = Path(__file__).resolve().parents[2]
RUN_SH = Path(
    os.environ.get("MCPKIT_CONFORMANCE_RUN_SH", ROOT.parent / "shared" / "conformance" / "run.sh")
)
CLUSTER = Path(__file__).with_name("_cluster.py")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(
        os.environ.get("MCPKIT_CONFORMANCE") == "0"
        or not (os.environ.get("CI") or os.environ.get("MCPKIT_CONFORMANCE") == "1"),
        reason="slow: runs in CI, or set MCPKIT_CONFORMANCE=1",
    ),
]


def test_three_workers_behind_round_robin_pass_every_server_scenario(
    redis: RedisServer, tmp_path: Path
) -> None:
    if not RUN_SH.exists():
        pytest.fail(f"conformance runner not found at {RUN_SH}")
    command = " ".join(
        shlex.quote(a)
        for a in (sys.executable, str(CLUSTER), "--redis", redis.url, "--logdir", str(tmp_path))
    )
    out = tmp_path / "results"
    proc = subprocess.run(
        [
            "bash",
            str(RUN_SH),
            "--server",
            command + " --port {port}",
            "--skip",
            "^auth/",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        env={**os.environ, "CONFORMANCE_VERSION": "0.2.0-alpha.12"},
        capture_output=True,
        text=True,
        timeout=1100,
        check=False,
    )
    results = out / "results.json"
    assert results.exists(), f"no results (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    rows = json.loads(results.read_text())["rows"]
    assert len(rows) >= 65, [r["scenario"] for r in rows]
    failing = [(r["scenario"], r["failed_checks"][:3]) for r in rows if r["result"] != "PASS"]
    logs = "\n".join(p.read_text()[-2000:] for p in sorted(tmp_path.glob("worker*.log")))
    assert failing == [], f"{failing}\nworker logs:\n{logs}"
