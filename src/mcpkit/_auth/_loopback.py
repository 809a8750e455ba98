"""The redirect handler of command-line clients: the browser, and a loopback callback.

RFC 8252 (OAuth for native apps): the client listens on 127.0.0.1 on a port of its own,
registers ``http://127.0.0.1:PORT/callback`` as its redirect URI, opens the authorization
URL in the user's browser, and takes the one request the browser makes back. The listener
accepts only that path, answers with a page telling the user to go back to the terminal,
and gives up after ``timeout`` seconds.
"""

from __future__ import annotations

import socket
import sys
import time
import webbrowser
from collections.abc import Callable
from typing import TextIO
from urllib.parse import urlsplit

import anyio

#: Seconds the user has to finish in the browser.
LOGIN_TIMEOUT = 300.0
_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>mcpkit</title>"
    b"<p>Authorization received. You can close this tab and return to the terminal.</p>"
)


class LoopbackRedirect:
    """Open the browser at the authorization URL and wait for its redirect on 127.0.0.1.

    Args:
        port: the port to listen on (default 0: one the system picks, fixed for this
            object's life so the registered ``redirect_uri`` stays right).
        path: the callback path.
        open_browser: how the URL is opened (default :func:`webbrowser.open`); the URL is
            also printed to ``out`` for a terminal without a browser.
        timeout: seconds to wait for the browser.

    Example::

        auth = OAuth(redirect_handler=LoopbackRedirect(), store=FileTokenStore())
    """

    def __init__(
        self,
        port: int = 0,
        *,
        path: str = "/callback",
        open_browser: Callable[[str], object] | None = webbrowser.open,
        timeout: float = LOGIN_TIMEOUT,
        out: TextIO | None = None,
    ) -> None:
        # The socket is bound now: the redirect URI must be known before registration.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", port))
        self._sock.listen(4)
        self.path = path
        self.redirect_uri = f"http://127.0.0.1:{self._sock.getsockname()[1]}{path}"
        self._open = open_browser
        self.timeout = timeout
        self._out = out

    def __repr__(self) -> str:
        return f"LoopbackRedirect({self.redirect_uri!r})"

    def close(self) -> None:
        """Stop listening."""
        self._sock.close()

    async def __call__(self, authorization_url: str) -> str:
        out = self._out or sys.stderr
        print(
            f"Opening the browser to authorize; if it does not open, visit:\n  {authorization_url}",
            file=out,
        )
        if self._open is not None:
            try:
                self._open(authorization_url)
            except Exception:  # no browser here: the printed URL is the way
                pass
        # A blocking accept in a worker thread (bounded by the timeout): one request at a
        # time, from the browser, in the rare moment of a login.
        target = await anyio.to_thread.run_sync(self._wait, self.timeout, abandon_on_cancel=True)
        if target is None:
            raise TimeoutError(f"no authorization came back within {self.timeout:g} s")
        return "http://127.0.0.1" + target

    def _wait(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            self._sock.settimeout(min(left, 1.0))
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                if self._sock.fileno() < 0:
                    return None  # closed
                continue
            target = self._serve(conn)
            if target is not None:
                return target
        return None

    def _serve(self, conn: socket.socket) -> str | None:
        """Answer one connection; its request target when it is our callback."""
        try:
            conn.settimeout(10)
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 16384:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            ok = len(line) == 3 and line[0] == "GET" and urlsplit(line[1]).path == self.path
            body = _PAGE if ok else b"not found"
            status = b"200 OK" if ok else b"404 Not Found"
            conn.sendall(
                b"HTTP/1.1 " + status + b"\r\ncontent-type: text/html; charset=utf-8\r\n"
                b"content-length: "
                + str(len(body)).encode()
                + b"\r\nconnection: close\r\n\r\n"
                + body
            )
            return line[1] if ok else None
        except OSError:
            return None
        finally:
            conn.close()
