"""docs/deploy.md's "From nothing: nginx, three workers, Redis", run block by block as written.

The section's ``server.py`` and ``nginx.conf`` are saved from the page into an empty
directory, and each of its ``bash`` blocks runs there in turn (``bash -euo pipefail``) with
the real ``redis-server``, ``nginx`` (Debian's; ``.ci/run`` installs both), ``curl`` and the
``mcpkit`` of this environment first on ``PATH``: the deployer's commands, nothing swapped.
Whatever the blocks leave running is stopped at the end, whether they pass or not.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from tests._served import wait_gone

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

DEPLOY = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"
TITLE = "## From nothing: nginx, three workers, Redis"
PORTS = (16379, 18001, 18002, 18003, 18080)


def section_blocks() -> list[tuple[str, str]]:
    """``(language, text)`` of each fenced block of the walkthrough, in page order."""
    text = DEPLOY.read_text(encoding="utf-8").split(TITLE, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```(\w+)\n(.*?)^```$", text, flags=re.M | re.S)


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


def _stop_leftovers(where: Path) -> None:
    for pidfile in where.glob("*.pid"):
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)


def test_the_section_has_the_files_and_the_commands() -> None:
    langs = [lang for lang, _ in section_blocks()]
    assert langs == ["python", "nginx", "bash", "bash", "bash", "bash"], langs


def test_a_deployer_follows_the_walkthrough(tmp_path: Path) -> None:
    for tool in ("redis-server", "redis-cli", "nginx", "curl"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            pytest.fail(f"{tool} is not installed (apt-get install redis-server nginx curl)")
    busy = [p for p in PORTS if _listening(p)]
    assert not busy, f"the walkthrough's ports are taken: {busy}"
    blocks = section_blocks()
    (tmp_path / "server.py").write_text(blocks[0][1], encoding="utf-8")
    (tmp_path / "nginx.conf").write_text(blocks[1][1], encoding="utf-8")
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bindir}:/usr/sbin:{os.environ.get('PATH', '')}"}
    env.pop("MCPKIT_REDIS_URL", None)
    outputs: list[str] = []
    pids: list[int] = []
    try:
        for i, (_, script) in enumerate(blocks[2:]):
            if i == 3:  # the stop block: what it stops is waited for below
                pids = [int(p.read_text()) for p in sorted(tmp_path.glob("*.pid"))]
            proc = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", script],
                cwd=tmp_path,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            logs = "\n".join(p.read_text()[-1500:] for p in sorted(tmp_path.glob("*.log")))
            assert proc.returncode == 0, f"{script}\n{proc.stdout}\n{proc.stderr}\n{logs}"
            outputs.append(proc.stdout)
    finally:
        _stop_leftovers(tmp_path)
    _, checked, survived, _ = outputs
    assert "stock" in checked, checked
    # len("A-113") * 7 and len("B-7") * 7, computed by the workers behind nginx.
    assert checked.split()[-1] == "35", checked
    assert survived.split() == ["35", "21"], survived
    for port in (18001, 18003):
        assert (
            "sessions in Redis 127.0.0.1:16379/0" in (tmp_path / f"worker-{port}.log").read_text()
        )
    for pid in pids:
        assert wait_gone(pid, 30), f"process {pid} still runs 30 s after the stop block"
    assert not [p for p in PORTS if _listening(p)], "the stop block left something listening"
