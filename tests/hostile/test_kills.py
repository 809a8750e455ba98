"""Fault injection: a server or a client process killed (SIGKILL) in the middle of a call.

The survivor must report a clear error within its timeout, and go on serving the others; a
server whose client died must not be left running (no orphans). Real processes, real stdio
pipes and real uvicorn; the kill lands at a point the test chose by watching the call
(a tool reports its process id and steps as progress).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests._served import Served, wait_gone

from mcpkit import Client, MCPError

pytestmark = pytest.mark.anyio
MCPKIT = str(Path(sys.executable).with_name("mcpkit"))

SERVER = """
import os
import anyio
from mcpkit import Context, Server

server = Server("victim")


@server.tool()
async def steps(ctx: Context) -> str:
    '''Reports its pid, then one step every 10 ms, forever.'''
    n = 0
    while True:
        n += 1
        await ctx.report_progress(n, message=str(os.getpid()))
        await anyio.sleep(0.01)


@server.tool()
def echo(text: str) -> str:
    '''Echo.'''
    return text
"""


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "victim.py"
    path.write_text(SERVER)
    return path


async def _kill_at_step(client: Client, kill_step: int, kill: Any) -> BaseException:
    """Call ``steps``; at progress ``kill_step`` call ``kill(pid)``; return what the call raised."""
    done = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if progress == kill_step:
            kill(int(message or 0))
            done.set()

    try:
        with anyio.fail_after(30):
            await client.call_tool("steps", {}, progress_handler=on_progress)
    except MCPError as e:
        assert done.is_set()
        return e
    raise AssertionError("the call succeeded though its server was killed")


def _sigkill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("step", [1, 25])
async def test_stdio_server_killed_mid_call(server_file: Path, step: int) -> None:
    async with Client([MCPKIT, "run", str(server_file)]) as client:
        error = await _kill_at_step(client, step, _sigkill)
    assert "exited" in str(error) or "closed" in str(error), str(error)
    # A new connection works: nothing of the dead one is left in the way.
    async with Client([MCPKIT, "run", str(server_file)]) as client:
        assert (await client.call_tool("echo", {"text": "again"})).content[0].text == "again"


@contextmanager
def _http_server(server_file: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    proc = subprocess.Popen(
        [MCPKIT, "run", str(server_file), "--transport", "http", "--port", "0"],
        stderr=subprocess.PIPE,
    )
    served = Served(proc)
    try:
        yield proc, served.url()  # announced once it listens, with the port it got
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        served.close()


@pytest.mark.slow
@pytest.mark.parametrize("step", [1, 25])
async def test_http_server_killed_mid_call(server_file: Path, step: int) -> None:
    with _http_server(server_file) as (proc, url):
        async with Client(url) as client:
            error = await _kill_at_step(client, step, lambda pid: proc.kill())
        assert proc.wait(timeout=10) == -signal.SIGKILL
    assert str(error), "the error says nothing"


CLIENT = """
import sys
import anyio
from mcpkit import Client


async def main() -> None:
    async def on_progress(progress, total, message):
        if progress == 3:
            print(message, flush=True)  # the server's pid: the call is under way

    target = sys.argv[1] if sys.argv[1].startswith("http") else sys.argv[1:]
    async with Client(target) as client:
        await client.call_tool("steps", {{}}, progress_handler=on_progress)


anyio.run(main)
"""


def _client_process(tmp_path: Path, target: list[str]) -> subprocess.Popen[str]:
    script = tmp_path / "doomed_client.py"
    script.write_text(textwrap.dedent(CLIENT.replace("{{}}", "{}")))
    return subprocess.Popen(
        [sys.executable, str(script), *target], stdout=subprocess.PIPE, text=True
    )


def _read_line(proc: subprocess.Popen[str], timeout: float = 30) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the client never reported its call under way"
    return proc.stdout.readline().strip()


def test_stdio_client_killed_mid_call_leaves_no_server_behind(
    server_file: Path, tmp_path: Path
) -> None:
    client = _client_process(tmp_path, [MCPKIT, "run", str(server_file)])
    try:
        server_pid = int(_read_line(client))
        client.kill()
        client.wait(timeout=10)
        # Its stdin closed with the client: the server drains, cancels the call, exits.
        assert wait_gone(server_pid, timeout=15), "the orphaned server is still running"
    finally:
        if client.poll() is None:
            client.kill()
        client.wait(timeout=10)
        if client.stdout is not None:
            client.stdout.close()


async def test_http_client_killed_mid_call_server_serves_the_others(
    server_file: Path, tmp_path: Path
) -> None:
    with _http_server(server_file) as (proc, url):
        doomed = _client_process(tmp_path, [url])
        try:
            assert int(_read_line(doomed)) == proc.pid
            doomed.kill()
            doomed.wait(timeout=10)
        finally:
            if doomed.stdout is not None:
                doomed.stdout.close()
        for n in range(3):
            with anyio.fail_after(15):
                async with Client(url) as client:
                    result = await client.call_tool("echo", {"text": f"still here {n}"})
            assert result.content[0].text == f"still here {n}"
        assert proc.poll() is None
