"""docs/deploy.md's "From nothing: nginx, three workers, Redis", and its sequel "Then OAuth",
run block by block as written.

The first section's ``server.py`` and ``nginx.conf`` are saved from the page into an empty
directory, and each ``bash`` block of a section runs there in turn (``bash -euo pipefail``)
with the real ``redis-server``, ``nginx`` (Debian's; ``.ci/run`` installs both), ``curl``
and the ``mcpkit`` of this environment first on ``PATH``: the deployer's commands, nothing
swapped. A ``text`` block right after a ``bash`` block is what that block prints. Whatever the
blocks leave running is stopped at the end, whether they pass or not.
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

# Both walkthroughs use the same fixed ports: one xdist worker runs them, one after the other.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.xdist_group("deploy-walkthrough"),
]

DEPLOY = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"
TITLE = "## From nothing: nginx, three workers, Redis"
OAUTH_TITLE = "## Then OAuth: the same workers, tokens from the development issuer"
PORTS = (16379, 18001, 18002, 18003, 18080)
ISSUER_PORT = 18400
WORKERS = ("127.0.0.1:18001", "127.0.0.1:18002", "127.0.0.1:18003")
ENDPOINT = "http://127.0.0.1:18080/mcp"
METADATA = "http://127.0.0.1:18080/.well-known/oauth-protected-resource/mcp"


def section_blocks(title: str = TITLE) -> list[tuple[str, str]]:
    """``(language, text)`` of each fenced block of the section ``title``, in page order."""
    text = DEPLOY.read_text(encoding="utf-8").split(title, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```(\w+)\n(.*?)^```$", text, flags=re.M | re.S)


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


def _stop_leftovers(where: Path) -> None:
    for pidfile in where.glob("*.pid"):
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)


def _deployment_directory(where: Path, ports: tuple[int, ...]) -> dict[str, str]:
    """``where`` with the first section's ``server.py`` and ``nginx.conf``; the environment
    its blocks run in (this environment's ``mcpkit`` first on ``PATH``)."""
    for tool in ("redis-server", "redis-cli", "nginx", "curl"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            pytest.fail(f"{tool} is not installed (apt-get install redis-server nginx curl)")
    busy = [p for p in ports if _listening(p)]
    assert not busy, f"the walkthrough's ports are taken: {busy}"
    blocks = section_blocks()
    (where / "server.py").write_text(blocks[0][1], encoding="utf-8")
    (where / "nginx.conf").write_text(blocks[1][1], encoding="utf-8")
    bindir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPKIT_AUTH")}
    env["PATH"] = f"{bindir}:/usr/sbin:{os.environ.get('PATH', '')}"
    env["MCPKIT_AUTH_FILE"] = str(where / "auth.json")  # not the developer's logins
    env.pop("MCPKIT_REDIS_URL", None)
    return env


def run_blocks(where: Path, scripts: list[str], env: dict[str, str]) -> tuple[list[str], list[int]]:
    """Run each script in ``where``, in turn, as the deployer would: their outputs, and the
    processes the last one (the stop block) was to stop, read from the pid files before it."""
    outputs: list[str] = []
    pids: list[int] = []
    try:
        for i, script in enumerate(scripts):
            if i == len(scripts) - 1:  # the stop block: what it stops is waited for after
                pids = [int(p.read_text()) for p in sorted(where.glob("*.pid"))]
            proc = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", script],
                cwd=where,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            logs = "\n".join(p.read_text()[-1500:] for p in sorted(where.glob("*.log")))
            assert proc.returncode == 0, f"{script}\n{proc.stdout}\n{proc.stderr}\n{logs}"
            outputs.append(proc.stdout)
    finally:
        _stop_leftovers(where)
    return outputs, pids


def _all_stopped(pids: list[int], ports: tuple[int, ...]) -> None:
    for pid in pids:
        assert wait_gone(pid, 30), f"process {pid} still runs 30 s after the stop block"
    assert not [p for p in ports if _listening(p)], "the stop block left something listening"


def test_the_section_has_the_files_and_the_commands() -> None:
    langs = [lang for lang, _ in section_blocks()]
    assert langs == ["python", "nginx", "bash", "bash", "bash", "bash"], langs


def test_a_deployer_follows_the_walkthrough(tmp_path: Path) -> None:
    env = _deployment_directory(tmp_path, PORTS)
    scripts = [text for lang, text in section_blocks()[2:]]
    outputs, pids = run_blocks(tmp_path, scripts, env)
    _, checked, survived, _ = outputs
    assert "stock" in checked, checked
    # len("A-113") * 7 and len("B-7") * 7, computed by the workers behind nginx.
    assert checked.split()[-1] == "35", checked
    assert survived.split() == ["35", "21"], survived
    for port in (18001, 18003):
        assert (
            "sessions in Redis 127.0.0.1:16379/0" in (tmp_path / f"worker-{port}.log").read_text()
        )
    _all_stopped(pids, PORTS)


def test_the_oauth_section_has_its_commands_and_what_they_print() -> None:
    langs = [lang for lang, _ in section_blocks(OAUTH_TITLE)]
    assert langs == ["bash", "bash", "text", "bash", "bash", "text", "bash"], langs


def test_a_deployer_then_requires_oauth(tmp_path: Path) -> None:
    """The sequel, in a directory holding the first section's files (its blocks ran there
    and stopped everything): the same workers restarted with ``--auth-issuer``, refusing a
    request without a token and one for another audience, serving one with a token."""
    ports = (*PORTS, ISSUER_PORT)
    env = _deployment_directory(tmp_path, ports)
    blocks = section_blocks(OAUTH_TITLE)
    scripts = [text for lang, text in blocks if lang == "bash"]
    printed = [text for lang, text in blocks if lang == "text"]
    outputs, pids = run_blocks(tmp_path, scripts, env)
    _, refused, served, other_audience, _ = outputs
    # What the page says they print, they print.
    assert refused == printed[0], refused
    assert other_audience == printed[1], other_audience
    # Without a token: 401, the challenge naming the metadata, which names the issuer.
    assert refused.splitlines()[0] == f'401 Bearer resource_metadata="{METADATA}"'
    assert f'"authorization_servers":["http://127.0.0.1:{ISSUER_PORT}"]' in refused
    assert f'"resource":"{ENDPOINT}"' in refused
    # With one: the tool's results (len(sku) * 7), every worker answering some requests.
    lines = served.splitlines()
    assert lines[:3] == ["35", "21", "42"], served
    answered = {worker: int(n) for n, worker in (line.split() for line in lines[3:])}
    assert sorted(answered) == list(WORKERS), served
    assert all(n > 0 for n in answered.values()), served
    # A token of the same issuer for another audience: refused.
    assert other_audience.startswith("401 ") and 'error="invalid_token"' in other_audience
    assert "not issued for this server" in other_audience
    for port in (18001, 18002, 18003):
        log = (tmp_path / f"worker-{port}.log").read_text()
        assert "sessions in Redis 127.0.0.1:16379/0" in log, log
    assert (tmp_path / "issuer.log").read_text().startswith(f"http://127.0.0.1:{ISSUER_PORT}\n")
    _all_stopped(pids, ports)
