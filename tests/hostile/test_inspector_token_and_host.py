"""``mcpkit inspect`` against a local attacker and a rebinding page, as real processes.

Before: the browser was started with the token-bearing URL as an argument, readable by every
local user in ``/proc/PID/cmdline``; ``Host: localhost:PORT@evil`` and
``Host: 127.0.0.1:PORT<TAB>x`` passed the loopback check (the part after the last colon was
dropped), and an ``Origin`` was compared without its scheme (``evil://127.0.0.1:PORT``).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from tests.conftest import BACKEND
from tests.inspect._browser_harness import Inspected, browser_page, inspected

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


def _opened(tmp_path: Path) -> contextlib.AbstractContextManager[Inspected]:
    """``mcpkit inspect FILE`` with the browser opened: the fake one, as ``BROWSER``."""
    server = tmp_path / "server.py"
    server.write_text(SERVER)
    browser = tmp_path / "fake-browser"
    browser.write_text(FAKE_BROWSER.format(python=sys.executable))
    browser.chmod(0o755)
    env = {**os.environ, "BROWSER": str(browser)}
    return inspected(["inspect", str(server)], open_browser=True, env=env)


def _browser_cmdline(running: Inspected) -> list[str]:
    """The command line the browser was started with (the fake one reports it)."""
    return list(json.loads(running.stderr_line("FAKE-BROWSER ").split(" ", 1)[1]))


def _launch_file(cmdline: list[str]) -> Path:
    launch = cmdline[-1]
    assert launch.startswith("file://"), cmdline
    return Path(unquote(urlsplit(launch).path))


def test_the_token_never_reaches_the_browsers_command_line(tmp_path: Path) -> None:
    with _opened(tmp_path) as running:
        token = running.url().split("token=")[1]
        cmdline = _browser_cmdline(running)
        assert not any(token in arg for arg in cmdline), cmdline
        # What the browser is given: a launch file only the user can read, in a directory
        # only the user can enter; it takes the browser to the inspector, and is gone once
        # it has.
        path = _launch_file(cmdline)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert path.stat().st_uid == os.getuid() == path.parent.stat().st_uid
        with browser_page(cmdline[-1]) as (page, _):
            page.wait_for_selector('[data-testid="server-name"]')
            assert page.inner_text('[data-testid="server-name"]').startswith("inspected")
            assert "token=" not in page.url
        assert not path.exists() and not path.parent.exists()


def test_a_launch_file_never_opened_is_gone_at_exit(tmp_path: Path) -> None:
    with _opened(tmp_path) as running:
        running.url()
        path = _launch_file(_browser_cmdline(running))
        assert path.exists()
        running.stop()  # SIGTERM, as Ctrl-C or a service manager ends it
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
            f"127.0.0.1:{port + 1}",
            "evil.example",
        ):
            assert _raw(port, page.format(host=host)) in (400, 403), host
        for origin in (
            f"evil://127.0.0.1:{port}",
            f"https://127.0.0.1:{port}",
            f"file://127.0.0.1:{port}",
            f"http://127.0.0.1:{port}@evil.example",
            f"http://127.0.0.1:{port + 1}",
            f"http://localhost:{port}",
            "null",
        ):
            assert _raw(port, api.format(origin=origin)) == 403, origin
