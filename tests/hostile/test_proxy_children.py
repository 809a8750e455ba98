"""``mcpkit proxy "<command>" -t http``: unauthenticated ``initialize`` floods cannot fork the
host to death. Child processes are bounded apart from sessions (``--max-children``; 503 with
``Retry-After`` past it) and a client idle for ``--child-idle-timeout`` ends with its child.

Before: every ``initialize`` spawned one more upstream process (40 POSTs, 40 processes),
bounded only by ``max_sessions`` (10,000) and the sessions' 30 min idle timeout. A real
``mcpkit proxy`` process; its children are counted in /proc.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import orjson
import pytest
from tests._served import Served
from tests.http._http_helpers import HEADERS, INIT_PARAMS

pytestmark = pytest.mark.anyio
MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
UPSTREAM = """
from mcpkit import Server

server = Server("upstream")

@server.tool()
def hello() -> str:
    \"\"\"Says hello.\"\"\"
    return "hello"
"""
INIT = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})


def _children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (from /proc: the 4th field of stat is the ppid)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


def _proxy(tmp_path: Path, *flags: str) -> subprocess.Popen[bytes]:
    (tmp_path / "up.py").write_text(UPSTREAM)
    command = f"{sys.executable} -m mcpkit run {tmp_path / 'up.py'}"
    return subprocess.Popen(
        [MCPKIT, "proxy", command, "-t", "http", "--port", "0", *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_exit(pid: int, timeout: float) -> bool:
    """Wait (no polling: a pidfd turns readable when the process ends) for ``pid`` to end."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        return bool(ready)
    finally:
        os.close(fd)


async def test_forty_initializes_make_at_most_max_children_processes(tmp_path: Path) -> None:
    with _proxy(tmp_path, "--max-children", "4") as proc:
        served = Served(proc)
        try:
            url = await anyio.to_thread.run_sync(served.url, 30)
            statuses: list[httpx2.Response] = []
            async with httpx2.AsyncClient(timeout=60) as http:

                async def initialize() -> None:
                    statuses.append(await http.post(url, headers=HEADERS, content=INIT))

                with anyio.fail_after(90):
                    async with anyio.create_task_group() as tg:
                        for _ in range(40):
                            tg.start_soon(initialize)
            ok = [r for r in statuses if r.status_code == 200]
            refused = [r for r in statuses if r.status_code == 503]
            assert len(statuses) == 40 and len(ok) + len(refused) == 40
            assert 1 <= len(ok) <= 4, [r.status_code for r in statuses]
            for r in refused:
                assert int(r.headers["retry-after"]) > 0
                assert "upstream server processes are in use" in r.json()["error"]["message"]
            # One child per session, and no more than the bound.
            assert len(_children(proc.pid)) == len(ok) <= 4
        finally:
            proc.terminate()
            await anyio.to_thread.run_sync(proc.wait, 30)


async def test_an_idle_client_ends_and_frees_its_child(tmp_path: Path) -> None:
    with _proxy(tmp_path, "--max-children", "1", "--child-idle-timeout", "0.5") as proc:
        served = Served(proc)
        try:
            url = await anyio.to_thread.run_sync(served.url, 30)
            async with httpx2.AsyncClient(timeout=60) as http:
                with anyio.fail_after(60):
                    first = await http.post(url, headers=HEADERS, content=INIT)
                    assert first.status_code == 200
                    (child,) = _children(proc.pid)
                    busy = await http.post(url, headers=HEADERS, content=INIT)
                    assert busy.status_code == 503 and "retry-after" in busy.headers
                    # Idle past the timeout: the session ends, the child with it.
                    assert await anyio.to_thread.run_sync(_wait_exit, child, 30)
                    gone = {**HEADERS, "mcp-session-id": first.headers["mcp-session-id"]}
                    ping = orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})
                    # The session ends with its child (a moment apart): bounded retries.
                    for _ in range(50):
                        stale = await http.post(url, headers=gone, content=ping)
                        if stale.status_code == 404:
                            break
                    assert stale.status_code == 404
                    for _ in range(50):  # its place is free once the session is gone
                        again = await http.post(url, headers=HEADERS, content=INIT)
                        if again.status_code != 503:
                            break
                    assert again.status_code == 200, again.text
        finally:
            proc.terminate()
            await anyio.to_thread.run_sync(proc.wait, 30)
