"""The side-by-side harness (``python -m bench``) runs end to end with tiny counts, mcpkit only.

Timings are not tests: this only checks that every case still runs against our server and
client and that the summary has the shape the docs rely on. It needs the shared benchmark
harness (the neutral driver), not the peers.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import run  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (run.HARNESS / "driver" / "mcpdrive.py").exists(),
    reason=f"shared benchmark harness not found at {run.HARNESS}",
)


@pytest.mark.slow
def test_harness_quick_mcpkit_only(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--quick",
            "--impls",
            "mcpkit",
            "--no-setup",
            "--no-engine",
            "--reps",
            "1",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=150,
        env={**os.environ, "PYTHONWARNINGS": ""},
    )
    errors = (out / "errors.log").read_text() if (out / "errors.log").exists() else ""
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:] + errors[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    med = summary["medians"]
    expected = {
        "stdio/mcpkit",
        "stdio/mcpkit-async",  # the same server with `async def` tools (issue 42's rows)
        "http/mcpkit-async-json",
        "http/mcpkit-sse",
        "http/mcpkit-json",
        "http/mcpkit-stateless",
        "http/mcpkit-modern",
        "tools/mcpkit-0",
        "tools/mcpkit-1000",
        "sdk/mcpkit-stdio",
        "sdk/mcpkit-http",
    }
    assert set(med) == expected
    assert med["stdio/mcpkit"]["seq_calls_s"] > 0
    assert med["stdio/mcpkit"]["conc64_calls_s"] > 0
    assert med["stdio/mcpkit"]["big_out_resp_kb"] >= 1024  # the 1 MiB result arrived whole
    assert med["stdio/mcpkit-async"]["conc64_calls_s"] > 0
    assert med["http/mcpkit-async-json"]["response_mode"] == "json"
    assert med["http/mcpkit-sse"]["response_mode"] == "sse"
    assert med["http/mcpkit-json"]["response_mode"] == "json"
    # Revision 2026-07-28: the driver probed server/discover and sent stateless requests.
    assert med["http/mcpkit-modern"]["seq_calls_s"] > 0
    assert med["http/mcpkit-modern"]["response_mode"] == "json"
    assert med["tools/mcpkit-1000"]["tools"] == 1003
    assert med["sdk/mcpkit-http"]["sess2_calls_s"] > 0
    assert med["sdk/mcpkit-stdio"]["protocol"]
    # Every target is listed; without peers only those against mcpkit itself can be judged
    # (and of those not the 32-session ones: --quick opens 2 sessions, sess2_*).
    assert len(summary["targets"]) == len(run.TARGETS)
    own = [
        t
        for t in run.TARGETS
        if t[3].startswith(("http/mcpkit", "stdio/mcpkit")) and not t[2].startswith("sess32")
    ]
    assert [t["met"] is None for t in summary["targets"]] == [t not in own for t in run.TARGETS]
    assert "| stdio seq calls/s |" in proc.stdout
    assert (out / "rep1.jsonl").read_text().count("\n") == len(expected)


def test_case_list_covers_the_issue() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--list"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    names = set(proc.stdout.split())
    for impl in ("mcpkit", "official", "fastmcp", "ts"):
        assert {
            f"stdio/{impl}",
            f"http/{impl}-sse",
            f"http/{impl}-json",
            f"http/{impl}-stateless",
            f"tools/{impl}-1000",
        } <= names
    assert {
        "sdk/mcpkit-stdio",
        "sdk/mcpkit-http",
        "sdk/official-legacy-stdio",
        "sdk/ts-http",
        "stdio/mcpkit-async",
        "http/mcpkit-async-json",
        "http/floor-httptools",  # issue 42's HTTP floor
    } <= names
    # Every target refers to cases the harness runs.
    for _, case, _, other, _, _ in run.TARGETS:
        assert case in names and other in names


def test_the_issue_42_command_of_the_docs_runs_the_cases_of_its_targets() -> None:
    """docs/performance.md's command for issue 42's rows, its ``--only`` as written, picks
    exactly the cases issue 42's targets compare (``--list`` prints what it would run)."""
    line = next(
        ln
        for ln in (ROOT / "docs" / "performance.md").read_text().splitlines()
        if ln.endswith("# issue 42's rows")
    )
    argv = shlex.split(line.partition("#")[0])
    assert argv[:3] == [".venv/bin/python", "-m", "bench"], argv
    only = argv[argv.index("--only") + 1]
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--list", "--only", only],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    compared = {case for _, case, _, other, _, _ in run.ISSUE_42 for case in (case, other)}
    assert set(proc.stdout.split()) == compared
