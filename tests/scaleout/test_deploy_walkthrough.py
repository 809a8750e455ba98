"""docs/deploy.md's "From nothing: nginx, three workers, Redis", and its sequel "Then OAuth",
run block by block as written.

The first section's ``server.py`` and ``nginx.conf`` are saved from the page into an empty
directory, and each ``bash`` block of a section runs there in turn (``bash -euo pipefail``)
with the real ``redis-server``, ``nginx`` (Debian's; ``.ci/run`` installs both) and
``curl``: the deployer's commands, nothing swapped. The first block installs mcpkit with the
extras the section names into a fresh virtual environment, from a wheel built from this
checkout (``PACKAGE``, as the page says); the blocks after it run with that
environment activated (its ``bin`` first on ``PATH``, as the page's ``. .venv/bin/activate``
leaves the deployer's shell), so an extra the page leaves out fails here as it would there.
A ``text`` block right after a ``bash`` block is what that block prints. Whatever the blocks
leave running is stopped at the end, whether they pass or not.
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
    # Each walkthrough installs mcpkit and its extras into a fresh environment first.
    pytest.mark.timeout(420),
    pytest.mark.xdist_group("deploy-walkthrough"),
]

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "docs" / "deploy.md"
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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mcpkit's wheel, built from this checkout: what ``PACKAGE`` names."""
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        timeout=180,
        check=True,
    )
    (built,) = dist.glob("mcpkit-*.whl")
    return built


def _stop_leftovers(where: Path) -> None:
    """Kill what the blocks left running, and wait (bounded) until it is gone: the next
    walkthrough takes the same ports."""
    killed: list[int] = []
    for pidfile in where.glob("*.pid"):
        with contextlib.suppress(ValueError, OSError):
            pid = int(pidfile.read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    for pid in killed:
        assert wait_gone(pid, 10), f"process {pid} still runs 10 s after SIGKILL"


def _deployment_directory(where: Path, ports: tuple[int, ...], wheel: Path) -> dict[str, str]:
    """``where`` with the first section's ``server.py`` and ``nginx.conf``; the environment
    its blocks run in: ``PACKAGE`` the wheel, ``where/.venv/bin`` first on ``PATH``
    (the page's install block makes it) and this test environment's own ``bin`` left out,
    so no ``mcpkit`` but the one the page installs can run."""
    for tool in ("redis-server", "redis-cli", "nginx", "curl"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            pytest.fail(f"{tool} is not installed (apt-get install redis-server nginx curl)")
    busy = [p for p in ports if _listening(p)]
    assert not busy, f"the walkthrough's ports are taken: {busy}"
    files = dict(section_blocks())
    (where / "server.py").write_text(files["python"], encoding="utf-8")
    (where / "nginx.conf").write_text(files["nginx"], encoding="utf-8")
    ours = {str(Path(sys.executable).parent), os.environ.get("VIRTUAL_ENV", "") + "/bin"}
    path = [d for d in os.environ.get("PATH", "").split(":") if d and d not in ours]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPKIT_AUTH")}
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)  # a deployer's shell has none pointing into the checkout
    env["PATH"] = ":".join([str(where / ".venv" / "bin"), "/usr/sbin", *path])
    env["PACKAGE"] = str(wheel)
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
                timeout=240 if i == 0 else 120,  # the first block installs mcpkit
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


def _installed(where: Path, *, auth: bool) -> None:
    """The page's install block made ``where/.venv``, with PyJWT (``[auth]``) or without."""
    py = where / ".venv" / "bin" / "python"
    assert (where / ".venv" / "bin" / "mcpkit").exists()
    found = subprocess.run(
        [py, "-c", "import importlib.util as u; print(u.find_spec('jwt') is not None)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert found == str(auth), f"PyJWT installed: {found}"


def test_the_section_has_the_files_and_the_commands() -> None:
    langs = [lang for lang, _ in section_blocks()]
    assert langs == ["bash", "python", "nginx", "bash", "bash", "bash", "bash"], langs
    install = section_blocks()[0][1]
    assert '"${PACKAGE:-mcpkit}[http,redis]"' in install, install


def test_a_deployer_follows_the_walkthrough(tmp_path: Path, wheel: Path) -> None:
    env = _deployment_directory(tmp_path, PORTS, wheel)
    scripts = [text for lang, text in section_blocks() if lang == "bash"]
    outputs, pids = run_blocks(tmp_path, scripts, env)
    _installed(tmp_path, auth=False)
    _, _, checked, survived, _ = outputs
    assert "stock" in checked, checked
    # len("A-113") * 7 and len("B-7") * 7, computed by the workers behind nginx.
    assert checked.split()[-1] == "35", checked
    assert survived.split() == ["35", "21"], survived
    for port in (18001, 18003):
        assert (
            "sessions in Redis 127.0.0.1:16379/0" in (tmp_path / f"worker-{port}.log").read_text()
        )
    _all_stopped(pids, PORTS)


def test_without_the_http_extra_the_start_block_fails_at_once(tmp_path: Path, wheel: Path) -> None:
    """The install of the page before issue 45 (``[redis]`` alone): its start block stops
    with the worker's own line instead of waiting on a dead worker (it waited ~150 s)."""
    env = _deployment_directory(tmp_path, PORTS, wheel)
    install, start = [text for lang, text in section_blocks() if lang == "bash"][:2]
    without_http = install.replace("[http,redis]", "[redis]")
    assert without_http != install
    try:
        run_blocks(tmp_path, [without_http], env)
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", start],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,  # the start block's loop gives up when the worker is gone
            check=False,
        )
    finally:
        _stop_leftovers(tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "needs uvicorn" in proc.stdout, (proc.stdout, proc.stderr)
    assert not (tmp_path / "nginx.pid").exists(), "nginx started in front of no worker"


def test_the_oauth_section_has_its_commands_and_what_they_print() -> None:
    langs = [lang for lang, _ in section_blocks(OAUTH_TITLE)]
    assert langs == ["bash", "bash", "bash", "text", "bash", "bash", "text", "bash"], langs
    install = section_blocks(OAUTH_TITLE)[0][1]
    assert '"${PACKAGE:-mcpkit}[http,redis,auth]"' in install, install


def test_a_deployer_then_requires_oauth(tmp_path: Path, wheel: Path) -> None:
    """The sequel, in a directory holding the first section's files (its blocks ran there
    and stopped everything): the same workers restarted with ``--auth-issuer``, refusing a
    request without a token and one for another audience, serving one with a token."""
    ports = (*PORTS, ISSUER_PORT)
    env = _deployment_directory(tmp_path, ports, wheel)
    blocks = section_blocks(OAUTH_TITLE)
    scripts = [text for lang, text in blocks if lang == "bash"]
    printed = [text for lang, text in blocks if lang == "text"]
    outputs, pids = run_blocks(tmp_path, scripts, env)
    _installed(tmp_path, auth=True)
    _, _, refused, served, other_audience, _ = outputs
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
