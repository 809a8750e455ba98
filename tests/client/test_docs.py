"""Every example of docs/client.md runs (from the repository root) and exits cleanly."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "client.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", GUIDE.read_text(), flags=re.S)


PYTHON = blocks("python")
COMMANDS = [
    line[2:]
    for block in blocks("console")
    for line in block.splitlines()
    if line.startswith("$ mcpkit ")
]


def test_the_guide_has_examples() -> None:
    assert len(PYTHON) >= 8 and len(COMMANDS) >= 4


@pytest.mark.parametrize("code", PYTHON, ids=[f"python-{i}" for i in range(len(PYTHON))])
def test_python_example_runs(code: str) -> None:
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr[-3000:]


@pytest.mark.parametrize("command", COMMANDS)
def test_cli_example_runs(command: str) -> None:
    argv = shlex.split(command)
    exe = Path(sys.executable).parent / argv[0]
    p = subprocess.run([str(exe), *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip()
