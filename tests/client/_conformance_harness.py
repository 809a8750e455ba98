"""Running the conformance suite's client scenarios against ``examples/conformance_client.py``
from the tests: node >= 22 and the pinned harness, taken from ``$CONFORMANCE_HOME`` when the
shared runner (``run.sh``) installed them there already, else installed once into
``~/.cache/mcpkit-tests`` (outside the repository). Skipped only when the npm registry cannot
be reached, and then loudly."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

CACHE = Path(os.environ.get("MCPKIT_TEST_CACHE", Path.home() / ".cache" / "mcpkit-tests"))
#: Where the repository's conformance runner keeps node and the harness versions.
CONFORMANCE_HOME = Path(
    os.environ.get("CONFORMANCE_HOME", Path.home() / ".cache" / "mcp-conformance")
)
ROOT = Path(__file__).resolve().parents[2]
CLIENT = f"{sys.executable} {ROOT / 'examples' / 'conformance_client.py'}"


def harness_for(version: str) -> tuple[str, str]:
    """``(node, harness entry point)`` for harness ``version``, installed if need be."""
    return _node(), _harness_entry(version)


def _node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout
        return int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


def _npm_install(prefix: Path, package: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is needed for the conformance test")
    prefix.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), package],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if p.returncode == 0:
        return
    probe = subprocess.run(
        [npm, "view", package, "version"], capture_output=True, text=True, timeout=60
    )
    if probe.returncode != 0:
        pytest.skip(
            f"SKIPPED LOUDLY: the npm registry is unreachable, so {package} could not be installed "
            f"and the conformance scenarios did NOT run ({probe.stderr.strip()[-300:]})"
        )
    pytest.fail(f"npm install {package} failed:\n{p.stderr[-2000:]}")


def _node() -> str:
    arch = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine())
    candidates = [shutil.which("node") or ""]
    if arch is not None:
        candidates.extend(
            str(base / "node22" / "node_modules" / f"node-linux-{arch}" / "bin" / "node")
            for base in (CONFORMANCE_HOME, CACHE)
        )
    for node in candidates:
        if node and _node_major(node) >= 22:
            return node
    if arch is None or sys.platform != "linux":
        pytest.skip("the conformance harness needs node >= 22 (none found, and no npm build here)")
    _npm_install(CACHE / "node22", f"node-linux-{arch}@22")
    return candidates[-1]


def _harness_entry(version: str) -> str:
    for prefix in (
        CONFORMANCE_HOME / f"conformance-{version}",
        CACHE / f"conformance-{version}",
    ):
        pkg = prefix / "node_modules" / "@modelcontextprotocol" / "conformance"
        installed = pkg / "package.json"
        if installed.exists() and json.loads(installed.read_text()).get("version") == version:
            return str(pkg / "dist" / "index.js")
    prefix = CACHE / f"conformance-{version}"
    _npm_install(prefix, f"@modelcontextprotocol/conformance@{version}")
    return str(
        prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    )


def run_scenario(
    harness: tuple[str, str], scenario: str, out: Path, *extra: str
) -> tuple[list[dict[str, Any]], str]:
    """Run one client scenario; its checks, and what the client wrote to stderr."""
    return check_scenario(_run_harness(harness, scenario, out, *extra), out)


def _run_harness(
    harness: tuple[str, str], scenario: str, out: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    node, entry = harness
    return subprocess.run(
        [
            *(node, entry, "client", "--command", CLIENT, "--scenario", scenario),
            *("--timeout", "30000", "-o", str(out), *extra),
        ],
        capture_output=True,
        text=True,
        timeout=100,
        start_new_session=True,
    )


def check_scenario(
    p: subprocess.CompletedProcess[str], out: Path
) -> tuple[list[dict[str, Any]], str]:
    """What a scenario's run must show: its checks, and what the client wrote to stderr."""
    results = list(out.rglob("checks.json"))
    assert results, f"no results (exit {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
    checks = json.loads(results[0].read_text())
    bad = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    assert not bad, json.dumps(bad, indent=2)[:3000]
    assert any(c["status"] == "SUCCESS" for c in checks)
    assert p.returncode == 0, p.stderr[-2000:]
    stderr = results[0].parent / "stderr.txt"
    return checks, stderr.read_text() if stderr.exists() else ""


class ScenarioPool:
    """The scenarios a module's selected tests run, started together, two at a time (a
    harness and a client process each: two at once use the 2 cores better, 40.6 s -> 26.3 s
    for the 48 auth scenarios) in the tests' order; each test checks its own with
    :meth:`result`, as :func:`run_scenario` would. Leaving the pool drops what has not
    started."""

    def __init__(
        self, harness: tuple[str, str], runs: dict[str, tuple[str, Path, tuple[str, ...]]]
    ) -> None:
        self._pool = ThreadPoolExecutor(max_workers=2)
        self._outs = {key: out for key, (_, out, _) in runs.items()}
        self._runs = {
            key: self._pool.submit(_run_harness, harness, scenario, out, *extra)
            for key, (scenario, out, extra) in runs.items()
        }

    def result(self, key: str) -> tuple[list[dict[str, Any]], str]:
        return check_scenario(self._runs[key].result(timeout=100), self._outs[key])

    def __enter__(self) -> ScenarioPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
