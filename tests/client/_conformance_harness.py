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
    node, entry = harness
    p = subprocess.run(
        [
            *(node, entry, "client", "--command", CLIENT, "--scenario", scenario),
            *("--timeout", "30000", "-o", str(out), *extra),
        ],
        capture_output=True,
        text=True,
        timeout=100,
        start_new_session=True,
    )
    results = list(out.rglob("checks.json"))
    assert results, f"no results (exit {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
    checks = json.loads(results[0].read_text())
    bad = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    assert not bad, json.dumps(bad, indent=2)[:3000]
    assert any(c["status"] == "SUCCESS" for c in checks)
    assert p.returncode == 0, p.stderr[-2000:]
    stderr = results[0].parent / "stderr.txt"
    return checks, stderr.read_text() if stderr.exists() else ""
