"""W3C trace context carried in a request's ``params._meta`` (``traceparent``, ``tracestate``,
``baggage``), so that a host's trace continues through the server.

Only when OpenTelemetry's API is installed (the ``[otel]`` extra) and a span is active:
without it, :func:`with_trace` costs one test of a module global. The keys are the ones the
MCP semantic conventions name; the propagator is the one the application configured
(W3C trace context and baggage by default).
"""

from __future__ import annotations

from typing import Any

try:
    from opentelemetry import propagate as _propagate
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - exercised by the bare-install check in CI
    _propagate = None  # type: ignore[assignment]
    _trace = None  # type: ignore[assignment]


def with_trace(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """``params`` with the active span's context in ``_meta`` (a copy; the caller's dict is
    left alone), or ``params`` itself when there is no active span or no OpenTelemetry.

    Keys the caller already put in ``_meta`` win: a proxy forwarding a request keeps the
    trace context it received.
    """
    if _trace is None or not _trace.get_current_span().get_span_context().is_valid:
        return params
    carrier: dict[str, str] = {}
    _propagate.inject(carrier)
    if not carrier:
        return params
    out = dict(params) if params else {}
    meta = out.get("_meta")
    out["_meta"] = {**carrier, **meta} if isinstance(meta, dict) else carrier
    return out
