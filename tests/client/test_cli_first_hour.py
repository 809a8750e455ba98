"""The traps of a first hour with the CLI, run as a user runs it (the console script, in a
subprocess): no arguments, a server file that does not load, a server printing to stdout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))

BROKEN = {
    "syntax": ("def f(:\n", "broken.py:1", "SyntaxError: invalid syntax"),
    "import": ("import no_such_module_here\n", "broken.py:1", "ModuleNotFoundError"),
    "raises": (
        "from mcpkit import Server\nserver = Server('x')\n\n\ndef f():\n    raise ValueError('boom')\n\n\nf()\n",
        "broken.py:6",
        "ValueError: boom",
    ),
}


def _mcpkit(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MCPKIT, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def test_no_arguments_is_a_usage_error(tmp_path: Path) -> None:
    done = _mcpkit(cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("usage: mcpkit <command>") and not done.stdout
    assert _mcpkit("--help", cwd=tmp_path).returncode == 0  # asked for: not an error


@pytest.mark.parametrize("command", ["run", "list"])
@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_server_file_that_does_not_load_is_one_line(
    tmp_path: Path, command: str, kind: str
) -> None:
    source, where, what = BROKEN[kind]
    (tmp_path / "broken.py").write_text(source)
    done = _mcpkit(command, "broken.py", cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert where in lines[0] and what in lines[0], lines[0]
    assert "Traceback" not in done.stderr


def test_a_stdio_server_printing_to_stdout_is_named_as_the_cause(tmp_path: Path) -> None:
    (tmp_path / "chatty.py").write_text("print('Server starting...')\n")
    done = _mcpkit("list", f"{sys.executable} chatty.py", cwd=tmp_path)
    assert done.returncode == 1
    assert "not JSON-RPC: 'Server starting...'" in done.stderr, done.stderr
    assert "stderr" in done.stderr  # what to do instead
