"""Fixtures shared by the client tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

EVERYTHING_PACKAGE = "@modelcontextprotocol/server-everything"
EVERYTHING_VERSION = "2026.8.31"
NPM_PREFIX = Path(
    os.environ.get("MCPKIT_TEST_NPM", Path.home() / ".cache" / "mcpkit-tests" / "npm")
)


def _npm_registry_reachable(npm: str) -> tuple[bool, str]:
    try:
        p = subprocess.run(
            [npm, "view", EVERYTHING_PACKAGE, "version"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    return p.returncode == 0, (p.stderr or p.stdout).strip()[-500:]


@pytest.fixture(scope="session")
def everything_js() -> str:
    entry = NPM_PREFIX / "node_modules" / EVERYTHING_PACKAGE / "dist" / "index.js"
    installed = NPM_PREFIX / "node_modules" / EVERYTHING_PACKAGE / "package.json"
    if installed.exists() and f'"version": "{EVERYTHING_VERSION}"' in installed.read_text():
        return str(entry)
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        pytest.fail("node and npm are needed for the server-everything interop test")
    NPM_PREFIX.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(
        [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(NPM_PREFIX),
            f"{EVERYTHING_PACKAGE}@{EVERYTHING_VERSION}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if p.returncode != 0:
        reachable, why = _npm_registry_reachable(npm)
        if not reachable:
            pytest.skip(
                f"SKIPPED LOUDLY: the npm registry is unreachable, so {EVERYTHING_PACKAGE} could not be "
                f"installed and our client was NOT tested against the reference TypeScript server ({why})"
            )
        pytest.fail(f"npm install {EVERYTHING_PACKAGE} failed:\n{p.stderr[-2000:]}")
    assert entry.exists(), entry
    return str(entry)


def _children() -> set[int]:
    """Live (non-zombie) processes whose parent is this test process, but for those of the
    runs started early in the background (tests/_early.py)."""
    from tests import _early

    me = str(os.getpid())
    theirs = _early.pids()
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z" and int(entry) not in theirs:
            found.add(int(entry))
    return found


@pytest.fixture(autouse=True)
def no_leaked_processes() -> Any:
    """Every server a test starts must be gone when the test ends (bounded wait)."""
    if not os.path.isdir("/proc"):
        yield
        return
    before = _children()
    yield
    deadline = time.monotonic() + 3
    while (left := _children() - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"processes left running by the test: {sorted(left)}"
