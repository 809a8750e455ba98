"""Whether the port an HTTP server is about to serve on is free, said in one line.

uvicorn reports a busy port as a logged ``[Errno 98]`` and ``SystemExit(3)``: neither names
the setting that fixes it. Binding a probe socket the way uvicorn binds (``SO_REUSEADDR``,
so a port still in TIME_WAIT counts as free, as it is for uvicorn) finds it first. A server
that takes the port between the probe and uvicorn's bind still gets uvicorn's own error.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping
from typing import Any


class PortInUse(OSError):
    """The port is taken (``errno.EADDRINUSE``): ``host`` and ``port`` say which."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(
            errno.EADDRINUSE,
            f"port {port} on {host} is already in use: serve on another one "
            "(port=..., or port=0 for any free port) or stop the process holding it",
        )
        self.host = host
        self.port = port


def check_port(options: Mapping[str, Any]) -> None:
    """Raise :class:`PortInUse` when ``options`` (those of ``Server.run`` over HTTP) name a
    port another socket listens on. Port 0, and sockets uvicorn is handed (``fd``, ``uds``),
    are not probed."""
    extra = options.get("uvicorn_options") or {}
    if extra.get("fd") is not None or extra.get("uds"):
        return
    host = str(options.get("host", "127.0.0.1"))
    port = int(options.get("port", 8000))
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET  # as uvicorn picks it
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise PortInUse(host, port) from None
            # Anything else (no such address, a privileged port) uvicorn reports as it is.
