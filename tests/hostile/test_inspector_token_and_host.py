"""``mcpkit inspect`` against a local attacker and a rebinding page, as real processes.

Before: the browser was started with the token-bearing URL as an argument, readable by every
local user in ``/proc/PID/cmdline``; ``Host: localhost:PORT@evil`` and
``Host: 127.0.0.1:PORT<TAB>x`` passed the loopback check (the part after the last colon was
dropped), and an ``Origin`` was compared without its scheme (``evil://127.0.0.1:PORT``).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from tests.conftest import BACKEND
from tests.inspect._browser_harness import browser_page, inspected, mcpkit_command

pytestmark = [
    pytest.mark.skipif(
        BACKEND != "asyncio",
        reason="the inspector and the browser are processes: one pass (asyncio) is enough",
    ),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]

SERVER = """
from mcpkit import Server

server = Server("inspected")


@server.tool()
def hello() -> str:
    '''Say hello.'''
    return "hello"
"""

#: Stands in for the user's browser (``BROWSER``, as Python's webbrowser reads it): reports
#: the command line any local user could read, then exits as a launcher does.
FAKE_BROWSER = """#!{python}
import json, sys
with open("/proc/self/cmdline", "rb") as f:
    cmdline = [a.decode() for a in f.read().split(b"\\0") if a]
print("FAKE-BROWSER " + json.dumps(cmdline), file=sys.stderr, flush=True)
"""


class Opened:
    """``mcpkit inspect FILE`` with the browser opened (``BROWSER`` set): its printed URL and
    the fake browser's command line, each waited for (bounded) as the lines arrive."""

    def __init__(self, tmp_path: Path) -> None:
        server = tmp_path / "server.py"
        server.write_text(SERVER)
        browser = tmp_path / "fake-browser"
        browser.write_text(FAKE_BROWSER.format(python=sys.executable))
        browser.chmod(0o755)
        env = {**os.environ, "BROWSER": str(browser)}
        self.proc = subprocess.Popen(
            [*mcpkit_command(), "inspect", str(server)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        self.out: queue.Queue[str | None] = queue.Queue()
        self.err: queue.Queue[str | None] = queue.Queue()
        for stream, q in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._pump, args=(stream, q), daemon=True).start()

    @staticmethod
    def _pump(stream: object, q: queue.Queue[str | None]) -> None:
        for raw in stream:  # type: ignore[attr-defined]
            q.put(raw.decode(errors="replace").rstrip("\n"))
        q.put(None)

    def url(self) -> str:
        line = self.out.get(timeout=30)
        assert line, "the inspector exited before printing its URL"
        return line

    def browser_cmdline(self) -> list[str]:
        seen: list[str] = []
        while True:
            line = self.err.get(timeout=30)
            assert line is not None, f"the browser was never started: {seen}"
            if line.startswith("FAKE-BROWSER "):
                return list(json.loads(line.split(" ", 1)[1]))
            seen.append(line)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[Opened]:
    running = Opened(tmp_path)
    try:
        yield running
    finally:
        running.stop()


def test_the_token_never_reaches_the_browsers_command_line(opened: Opened) -> None:
    token = opened.url().split("token=")[1]
    cmdline = opened.browser_cmdline()
    assert not any(token in arg for arg in cmdline), cmdline
    # What the browser is given: a launch file only the user can read, in a directory only
    # the user can enter; it takes the browser to the inspector, and is gone once it has.
    launch = cmdline[-1]
    assert launch.startswith("file://"), cmdline
    path = Path(unquote(urlsplit(launch).path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.stat().st_uid == os.getuid() == path.parent.stat().st_uid
    with browser_page(launch) as (page, _):
        page.wait_for_selector('[data-testid="server-name"]')
        assert page.inner_text('[data-testid="server-name"]').startswith("inspected")
        assert "token=" not in page.url
    assert not path.exists() and not path.parent.exists()


def _raw(port: int, request: str) -> int:
    """The status of one raw HTTP/1.1 request (headers exactly as given)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request.encode("latin-1"))
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    status_line = answer.split(b"\r\n", 1)[0].decode("latin-1")
    assert status_line.startswith("HTTP/1.1 "), answer[:200]
    return int(status_line.split()[1])


def test_hostile_host_and_origin_values_are_refused(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(SERVER)
    with inspected(["inspect", str(server)]) as running:
        url = running.url()
        port = int(urlsplit(url).port or 0)
        token = url.split("token=")[1]
        page = f"GET /?token={token} HTTP/1.1\r\nHost: {{host}}\r\nConnection: close\r\n\r\n"
        api = (
            f"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {{origin}}\r\n"
            f"X-Inspector-Token: {token}\r\nConnection: close\r\n\r\n"
        )
        assert _raw(port, page.format(host=f"127.0.0.1:{port}")) == 200
        assert _raw(port, api.format(origin=f"http://127.0.0.1:{port}")) == 200
        for host in (
            f"localhost:{port}@evil.example",
            f"127.0.0.1:{port}\tx",
            f"127.0.0.1:{port} evil.example",
            f"localhost:{port}/evil",
            "evil.example",
        ):
            assert _raw(port, page.format(host=host)) in (400, 403), host
        for origin in (
            f"evil://127.0.0.1:{port}",
            f"https://127.0.0.1:{port}",
            f"file://127.0.0.1:{port}",
            f"http://127.0.0.1:{port}@evil.example",
            "null",
        ):
            assert _raw(port, api.format(origin=origin)) == 403, origin
