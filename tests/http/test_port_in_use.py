"""A port that is taken: ``mcpkit run -t http --port P`` says so in one line naming the
option that changes it, exit 1 (not uvicorn's raw ``[Errno 98]`` and exit 3), and
``Server.run("http", port=P)`` raises an ``OSError`` saying the same (issue 33)."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = 'from mcpkit import Server\n\nserver = Server("busy")\n'


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something listens on for the test's length."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_the_cli_names_the_port_and_the_option(
    tmp_path: Path, busy_port: int, transport: str
) -> None:
    (tmp_path / "app.py").write_text(SERVER)
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", "app.py", "-t", transport],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "MCPKIT_PORT": str(busy_port)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done
    assert done.stderr == (
        f"mcpkit run: port {busy_port} on 127.0.0.1 is already in use: "
        "pick another with --port (or MCPKIT_PORT)\n"
    )
    # The same with the option itself.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpkit",
            "run",
            "app.py",
            "-t",
            transport,
            "--port",
            str(busy_port),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done
    assert f"port {busy_port}" in done.stderr and "--port" in done.stderr, done


def test_server_run_raises_a_clear_oserror(busy_port: int) -> None:
    # In a child process: were the check missing, uvicorn would serve (or exit) instead.
    code = (
        "import errno\n"
        "from mcpkit import Server\n"
        "try:\n"
        f"    Server('busy').run('http', port={busy_port})\n"
        "except OSError as e:\n"
        "    assert e.errno == errno.EADDRINUSE, e\n"
        "    print(e.strerror)\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done
    assert done.stdout.startswith(f"port {busy_port} on 127.0.0.1 is already in use"), done
    assert "port=" in done.stdout and "Errno" not in done.stderr, done


def test_a_free_port_is_not_refused() -> None:
    from mcpkit._server._port import check_port

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: free once closed
    check_port({"port": port})
    check_port({"port": 0})  # any free port: nothing to probe
