# ruff: noqa: ASYNC220  (the server process is started from a test coroutine)
"""``mcpkit run FILE --transport http --reload``: a change to the server's code restarts it,
and a client connecting afterwards meets the new code. Run as a user runs it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from tests._served import Served

from mcpkit import Client
from mcpkit._server._reload import changed, snapshot

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
SERVER = """
from mcpkit import Server

server = Server("reloading")


@server.tool()
def version() -> str:
    '''Which code is running.'''
    return "{version}"
"""


async def _version(url: str) -> str:
    with anyio.fail_after(20):
        async with Client(url) as client:
            result = await client.call_tool("version", {})
    return str(result.content[0].text)  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_change_restarts_the_server(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(SERVER.format(version="one"))
    argv = [MCPKIT, "run", str(server), "--transport", "http", "--port", "0", "--reload"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    served = Served(proc)
    try:
        url = await anyio.to_thread.run_sync(served.url)
        assert await _version(url) == "one"
        server.write_text(SERVER.format(version="two"))
        # A later mtime even on a coarse clock: the watcher compares modification times.
        later = os.stat(server).st_mtime + 2
        os.utime(server, (later, later))
        url = await anyio.to_thread.run_sync(served.url)  # the new child's announcement
        assert await _version(url) == "two"
        assert any("server.py changed; restarting" in line for line in served.lines)
    finally:
        # What systemd, docker and kill send (SIGINT may be ignored since start: a
        # background job of a non-interactive shell, as CI may run us).
        proc.send_signal(signal.SIGTERM)
        await anyio.to_thread.run_sync(proc.wait, 20)
        served.close()
    assert proc.returncode == 128 + signal.SIGTERM, proc.returncode
    # The serving child went with the watcher: nothing listens on its port any more.
    port = int(url.split(":")[2].split("/")[0])
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_stdio_cannot_reload(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(SERVER.format(version="one"))
    done = subprocess.run(
        [MCPKIT, "run", str(server), "--reload"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "needs an HTTP transport" in done.stderr


def test_snapshots_see_edits_additions_and_removals(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "ignored.py").write_text("")
    before = snapshot(tmp_path)
    assert list(before) == [str(tmp_path / "a.py")]
    (tmp_path / "b.py").write_text("")
    os.utime(tmp_path / "a.py", (1, 1))
    after = snapshot(tmp_path)
    assert changed(before, after) == [str(tmp_path / "a.py"), str(tmp_path / "b.py")]
