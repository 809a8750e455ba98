"""The conformance suite's 2026-07-28 client scenarios, run against ``examples/conformance_client.py``.

The harness (npm ``@modelcontextprotocol/conformance``, pinned to a release that has the
2026-07-28 scenarios) needs node >= 22; both are taken from ``$CONFORMANCE_HOME`` when
the shared conformance runner (``run.sh``) installed them there already, else installed once into
``~/.cache/mcpkit-tests`` (outside the repository). The test is skipped only when the npm
registry cannot be reached, and says so loudly.

Each scenario runs at the revision the harness gives it: the ones introduced by 2026-07-28
at that revision (the client is stateless), and the scenarios carried over from earlier
revisions again with ``--spec-version 2026-07-28`` (the harness's mock server is then
stateless too).
"""

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

HARNESS_VERSION = "0.2.0-alpha.12"
REV = "2026-07-28"
CACHE = Path(os.environ.get("MCPKIT_TEST_CACHE", Path.home() / ".cache" / "mcpkit-tests"))
#: Where the repository's conformance runner keeps node and the harness versions.
CONFORMANCE_HOME = Path(
    os.environ.get("CONFORMANCE_HOME", Path.home() / ".cache" / "mcp-conformance")
)
ROOT = Path(__file__).resolve().parents[2]
CLIENT = f"{sys.executable} {ROOT / 'examples' / 'conformance_client.py'}"

#: Scenarios introduced by 2026-07-28 (the harness runs them at that revision).
NEW_SCENARIOS = [
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
]
#: Earlier scenarios that still apply, run at 2026-07-28 (stateless lifecycle).
CARRIED_SCENARIOS = ["tools_call", "json-schema-2020-12-preservation"]


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
            f"and the 2026-07-28 conformance scenarios did NOT run ({probe.stderr.strip()[-300:]})"
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


def _harness_entry() -> str:
    for prefix in (
        CONFORMANCE_HOME / f"conformance-{HARNESS_VERSION}",
        CACHE / f"conformance-{HARNESS_VERSION}",
    ):
        pkg = prefix / "node_modules" / "@modelcontextprotocol" / "conformance"
        installed = pkg / "package.json"
        if (
            installed.exists()
            and json.loads(installed.read_text()).get("version") == HARNESS_VERSION
        ):
            return str(pkg / "dist" / "index.js")
    prefix = CACHE / f"conformance-{HARNESS_VERSION}"
    _npm_install(prefix, f"@modelcontextprotocol/conformance@{HARNESS_VERSION}")
    return str(
        prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    )


@pytest.fixture(scope="module")
def harness() -> tuple[str, str]:
    return _node(), _harness_entry()


def _run(
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


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scenario", NEW_SCENARIOS)
def test_a_2026_scenario(harness: tuple[str, str], scenario: str, tmp_path: Path) -> None:
    checks, stderr = _run(harness, scenario, tmp_path)
    if scenario == "http-invalid-tool-headers":
        # The client says which tools it left out, and why (streamable-http.mdx: SHOULD).
        assert "rejected tool 'invalid_empty_header'" in stderr, stderr
        assert "rejected tool 'valid_tool'" not in stderr
    if scenario == "http-custom-headers":
        mirrored = {c["name"] for c in checks if c["status"] == "SUCCESS"}
        assert {"ClientCustomHeader_NonAscii", "ClientCustomHeaderOmitNull"} <= mirrored


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scenario", CARRIED_SCENARIOS)
def test_an_earlier_scenario_at_2026(
    harness: tuple[str, str], scenario: str, tmp_path: Path
) -> None:
    _run(harness, scenario, tmp_path, "--spec-version", REV)
