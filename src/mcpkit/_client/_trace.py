"""The Client's side of OpenTelemetry: a CLIENT span per request (when an application
configured a provider), and the active span's W3C trace context (``traceparent``,
``tracestate``, ``baggage``) in each request's ``params._meta`` so that a host's trace
continues through the server.

Only with OpenTelemetry's API installed (the ``[otel]`` extra); without it, or without an
active span, nothing is added and nothing is paid but one test of a module global. The
span and metric names follow the semantic conventions for MCP (see ``mcpkit._telemetry``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from .. import _telemetry
from .._session._client import ClientSession

#: Whether an application configured OpenTelemetry (a tracer or meter provider).
telemetry_active = _telemetry.active
#: ``params`` with the active span's context in ``_meta`` (keys the caller set win).
with_trace = _telemetry.inject


def _attributes(session: ClientSession) -> dict[str, Any]:
    transport = session.engine.transport
    negotiated = session.peer.negotiated
    return {
        "mcp.session.id": getattr(transport, "session_id", None),
        "mcp.protocol.version": negotiated.protocol_version if negotiated else None,
        "network.transport": getattr(transport, "network_transport", None),
    }


def session_ended(session: ClientSession) -> Callable[[], None]:
    """A callback recording the session's duration when it ends (if telemetry is on)."""
    start = time.perf_counter()

    def record() -> None:
        attrs = _attributes(session)
        del attrs["mcp.session.id"]  # unbounded: not a metric attribute
        _telemetry.record_session("client", time.perf_counter() - start, attrs)

    return record


async def traced(
    session: ClientSession,
    method: str,
    params: dict[str, Any] | None,
    deliver: Callable[[dict[str, Any] | None], Awaitable[Any]],
) -> Any:
    """Send one request inside its CLIENT span; the span's context travels in ``_meta``."""
    return await _telemetry.operation(
        "client",
        method,
        params,
        lambda: deliver(_telemetry.inject(params)),
        extra=_attributes(session),
    )
