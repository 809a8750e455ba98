"""The README's main job runs: a real client and server talking over stdio."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_demo_client_drives_the_everything_server() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo_client.py")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "ok: server and client talked over stdio" in out
    assert "progress notifications       [0, 50, 100]" in out
    assert "(model) you asked: What is MCP?" in out
    assert "Traceback" not in done.stderr
