"""Errors of the HTTP client transports (importable without the HTTP extra)."""

from __future__ import annotations

from .._exceptions import ConnectionClosed, TransportError


class SessionExpired(ConnectionClosed):
    """The server answered 404 for our session and no new session could be started: connect again."""


class HTTPStatusFailure(TransportError):
    """The server answered an HTTP error status."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
