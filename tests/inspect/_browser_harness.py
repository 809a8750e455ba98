"""Starting ``mcpkit inspect`` as a user does, and Debian's Chromium driven by Playwright.

The inspector prints its URL (token included) as the first line on stdout; we wait for it,
bounded. Chromium is the system one (``/usr/bin/chromium``, installed by ``.ci/run``); the
page may fetch nothing but the inspector itself, which each test checks.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tests._served import Served

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
#: Where screenshots of the panels are kept (CI may collect the folder).
ARTIFACTS = Path(os.environ.get("MCPKIT_ARTIFACTS", ROOT / "test-artifacts")) / "inspector"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def mcpkit_command() -> list[str]:
    """The ``mcpkit`` console script of this environment (as a user runs it)."""
    script = Path(sys.executable).parent / "mcpkit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcpkit"]


class Inspected:
    """A running ``mcpkit inspect`` (or ``dev``) process and the URL it printed.

    The browser is not opened unless ``open_browser`` (then ``env`` may name a ``BROWSER``).
    """

    def __init__(
        self,
        args: list[str],
        cwd: Path = ROOT,
        *,
        open_browser: bool = False,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.proc = subprocess.Popen(
            [*mcpkit_command(), *args, *([] if open_browser else ["--no-open"])],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.stderr: list[str] = []
        self._first: queue.Queue[str | None] = queue.Queue()
        self._err: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self._first.put(raw.decode().strip())
        self._first.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.stderr.append(line)
            self._err.put(line)
        self._err.put(None)

    def stderr_line(self, prefix: str, timeout: float = 30) -> str:
        """The next line on stderr starting with ``prefix``, waited for (bounded)."""
        while True:
            try:
                line = self._err.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(
                    f"no {prefix!r} within {timeout} s: {self.stderr[-20:]}"
                ) from None
            assert line is not None, f"the inspector exited: {self.stderr[-20:]}"
            if line.startswith(prefix):
                return line

    def url(self, timeout: float = 30) -> str:
        try:
            line = self._first.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no URL within {timeout} s: {self.stderr[-20:]}") from None
        assert line, f"the inspector exited: {self.stderr[-20:]}"
        return line

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


@contextlib.contextmanager
def inspected(
    args: list[str],
    cwd: Path = ROOT,
    *,
    open_browser: bool = False,
    env: Mapping[str, str] | None = None,
) -> Iterator[Inspected]:
    running = Inspected(args, cwd, open_browser=open_browser, env=env)
    try:
        yield running
    finally:
        running.stop()


#: How long a page may take for anything it is asked to do (ms).
BROWSER_WAIT_MS = 60_000


@contextlib.contextmanager
def browser_page(url: str) -> Iterator[tuple[Any, list[str]]]:
    """A Chromium page at ``url`` and the list of every URL it requested."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "install Debian's chromium (.ci/run does)"
    requested: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            # Generous: under pytest-xdist the browser shares 2 cores with three other
            # workers' tests; a page that never gets there still fails, only later.
            page.set_default_timeout(BROWSER_WAIT_MS)
            page.on("request", lambda request: requested.append(request.url))
            page.goto(url)
            yield page, requested
        finally:
            browser.close()


def shot(page: Any, name: str) -> Path:
    """A screenshot of the page, kept as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def tab(page: Any, name: str) -> None:
    """Open a panel of the inspector's page by its tab."""
    page.click(f'nav button[data-tab="{name}"]')


@contextlib.contextmanager
def static_site(pages: Mapping[str, tuple[str, bytes]]) -> Iterator[int]:
    """A static server on 127.0.0.1 serving ``pages`` (path -> type, body): its port. Where
    a test's page comes from, an origin other than the MCP server's."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            kind, body = pages.get(self.path, ("text/plain", b"not found"))
            self.send_response(200 if self.path in pages else 404)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield site.server_address[1]
    finally:
        site.shutdown()
        site.server_close()
        thread.join(10)


@contextlib.contextmanager
def mcpkit_run_http(source: Path, origin: str, cwd: Path) -> Iterator[str]:
    """``mcpkit run SOURCE -t http --port 0 --allowed-origin ORIGIN`` as a user runs it: its
    URL; ended by SIGTERM (killed if it does not end)."""
    argv = [*mcpkit_command(), "run", str(source), "-t", "http", "--port", "0"]
    served = Served.start([*argv, "--allowed-origin", origin], cwd=str(cwd))
    try:
        yield served.url(timeout=60)
    finally:
        served.proc.send_signal(signal.SIGTERM)
        try:
            served.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            served.proc.kill()
            served.proc.wait(timeout=15)
        served.close()
