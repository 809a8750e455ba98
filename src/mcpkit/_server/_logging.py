"""MCP log levels, and the optional bridge from Python's :mod:`logging` to the client."""

from __future__ import annotations

import contextvars
import logging
from typing import TYPE_CHECKING, Any

from ..types._levels import LOG_LEVELS, LoggingLevel

if TYPE_CHECKING:
    from ._face import ContextLike

__all__ = ["LEVELS", "ClientLogHandler", "LoggingLevel", "current_context", "mcp_level"]

#: MCP (syslog) levels, by severity.
LEVELS: dict[str, int] = {level: severity for severity, level in enumerate(LOG_LEVELS)}

#: The Context of the request being served (set around tool, resource and prompt functions).
current_context: contextvars.ContextVar[ContextLike | None] = contextvars.ContextVar(
    "mcpkit_context", default=None
)


def mcp_level(levelno: int) -> LoggingLevel:
    """The MCP level for a Python logging level number."""
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno >= logging.INFO:
        return "info"
    return "debug"


class ClientLogHandler(logging.Handler):
    """Forwards records emitted while serving a request to that request's client.

    Records logged outside a request (no current Context) are ignored. Works from the
    event loop and from the worker threads sync tools run in.
    """

    def emit(self, record: logging.LogRecord) -> None:
        ctx = current_context.get()
        if ctx is None:
            return
        rc = ctx._request
        if ctx._session is None and (rc is None or rc.sink is None):
            return
        if record.name.startswith("mcpkit."):
            return  # our own diagnostics never loop back to the client
        try:
            message = self.format(record)
        except Exception:
            self.handleError(record)
            return
        data: Any = message
        level = mcp_level(record.levelno)
        if ctx._session is None and rc is not None and rc.sink is not None:
            # A 2026-07-28 request served without a session: straight to its stream (the
            # sink takes it from any thread), if the request asked for this level.
            n = rc.negotiated
            wanted = n.log_level if n is not None else None
            if wanted is not None and LEVELS.get(level, 0) >= LEVELS.get(wanted, 0):
                params = {"level": level, "data": data, "logger": record.name}
                rc.sink("notifications/message", params)
            return
        _state_of(ctx._session).post_log(ctx, level, data, record.name)


def _state_of(session: Any) -> Any:
    # Imported here: the session module imports this one (for LEVELS).
    from ._session import state_of

    return state_of(session)
