"""OpenTelemetry for both roles, per the semantic conventions for MCP: a span per request
(``{mcp.method.name} {target}``, CLIENT or SERVER kind), the operation-duration metrics, and
W3C trace context carried in ``params._meta`` both ways.

It needs only OpenTelemetry's API (the ``[otel]`` extra) and a tracer or meter provider the
application configured globally; mcpkit configures nothing, and imports the API only once the
application has. Without the package nothing here runs; with it but no provider,
:func:`active` is one cheap check per request and nothing else is paid (the engine calls the
plain handler).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ._exceptions import ProtocolError
from ._version import __version__

#: OpenTelemetry's API modules, imported once the application imported them (see _load).
_trace: Any = None
_metrics: Any = None
_propagate: Any = None


def _load() -> bool:
    """Whether OpenTelemetry's API is at hand, importing it once the application has: to
    configure a provider or start a span it must import ``opentelemetry.trace`` first, so
    a program that never does pays nothing for it (the import takes ~15-40 ms of a
    server's start)."""
    global _trace, _metrics, _propagate
    if _trace is not None:
        return True
    if "opentelemetry.trace" not in sys.modules:
        return False
    try:
        from opentelemetry import metrics, propagate, trace
    except ImportError:  # pragma: no cover - a half-installed package
        return False
    _metrics, _propagate, _trace = metrics, propagate, trace
    return True


#: The bucket boundaries the conventions give for the duration histograms (seconds).
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
#: Attributes of a span that the duration metrics keep (bounded cardinality).
_METRIC_KEYS = (
    "mcp.method.name",
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "gen_ai.operation.name",
    "mcp.protocol.version",
    "network.transport",
    "error.type",
    "rpc.response.status_code",
)
_TRACE_KEYS = ("traceparent", "tracestate", "baggage")

_instruments: dict[str, Any] = {}


#: Once a provider is configured it stays (OpenTelemetry sets its globals once).
_on = False
#: Until then, when to look again (monotonic seconds): looking costs ~2 us, too much per
#: request, so a provider configured after serving started is seen within a second.
_next_look = 0.0
LOOK_EVERY = 1.0


def active() -> bool:
    """Whether an application configured a tracer or meter provider (then we record)."""
    global _on, _next_look
    if _on:
        return True
    now = time.monotonic()
    if now < _next_look:
        return False
    _next_look = now + LOOK_EVERY
    if not _load():
        return False
    _on = not isinstance(_trace.get_tracer_provider(), _trace.ProxyTracerProvider) or (
        # The API's stand-in meter provider until one is set: its class says "Proxy".
        "Proxy" not in type(_metrics.get_meter_provider()).__name__
    )
    return _on


def inject(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """``params`` with the current trace context in ``_meta`` (a copy; keys the caller set
    win, so a proxy forwards the context it received); ``params`` itself with no active span."""
    if not _load() or not _trace.get_current_span().get_span_context().is_valid:
        return params
    carrier: dict[str, str] = {}
    _propagate.inject(carrier)
    if not carrier:
        return params
    out = dict(params) if params else {}
    meta = out.get("_meta")
    out["_meta"] = {**carrier, **meta} if isinstance(meta, dict) else carrier
    return out


def describe(method: str, params: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """The span name and the attributes a request's method and params give."""
    attrs: dict[str, Any] = {"mcp.method.name": method}
    target = None
    if params:
        name = params.get("name")
        if method == "tools/call" and isinstance(name, str):
            target = attrs["gen_ai.tool.name"] = name
            attrs["gen_ai.operation.name"] = "execute_tool"
        elif method == "prompts/get" and isinstance(name, str):
            target = attrs["gen_ai.prompt.name"] = name
        uri = params.get("uri")
        if isinstance(uri, str) and method.startswith("resources/"):
            attrs["mcp.resource.uri"] = uri
    return (f"{method} {target}" if target else method), attrs


def _histogram(name: str, description: str) -> Any:
    hist = _instruments.get(name)
    if hist is None:
        meter = _metrics.get_meter("mcpkit", __version__)
        hist = _instruments[name] = meter.create_histogram(
            name, unit="s", description=description, explicit_bucket_boundaries_advisory=BUCKETS
        )
    return hist


def _outcome(span: Any, attrs: dict[str, Any], result: Any, exc: BaseException | None) -> None:
    """Record how the operation ended: ``error.type`` and the span's status."""
    error: str | None = None
    if isinstance(exc, ProtocolError):
        error = attrs["rpc.response.status_code"] = str(exc.code)
    elif exc is not None:
        error = type(exc).__qualname__
    elif (
        attrs.get("mcp.method.name") == "tools/call"
        and isinstance(result, Mapping)
        and result.get("isError") is True
    ):
        error = "tool_error"
    if error is not None:
        attrs["error.type"] = error
        span.set_attribute("error.type", error)
        if "rpc.response.status_code" in attrs:
            span.set_attribute("rpc.response.status_code", attrs["rpc.response.status_code"])
        span.set_status(_trace.Status(_trace.StatusCode.ERROR, str(exc) if exc else error))


async def operation(
    kind: str,
    method: str,
    params: Mapping[str, Any] | None,
    call: Callable[[], Awaitable[Any]],
    *,
    extra: Mapping[str, Any],
    parent_meta: Any = None,
) -> Any:
    """Run ``call()`` (one request) inside its span, and record its duration.

    ``kind`` is ``"client"`` or ``"server"``; ``extra`` adds attributes (request id, session
    id, protocol version, network transport); on the server, ``parent_meta`` (the request's
    ``_meta``) carries the caller's trace context.
    """
    name, attrs = describe(method, params)
    attrs.update({k: v for k, v in extra.items() if v is not None})
    parent = None
    if isinstance(parent_meta, Mapping) and any(k in parent_meta for k in _TRACE_KEYS):
        parent = _propagate.extract(
            {k: str(parent_meta[k]) for k in _TRACE_KEYS if k in parent_meta}
        )
    tracer = _trace.get_tracer("mcpkit", __version__)
    span_kind = _trace.SpanKind.SERVER if kind == "server" else _trace.SpanKind.CLIENT
    start = time.perf_counter()
    result: Any = None
    failure: BaseException | None = None
    with tracer.start_as_current_span(
        name,
        context=parent,
        kind=span_kind,
        attributes=attrs,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            result = await call()
            return result
        except BaseException as e:
            failure = e
            raise
        finally:
            _outcome(span, attrs, result, failure)
            hist = _histogram(
                f"mcp.{kind}.operation.duration",
                f"Duration of an MCP request as observed by the {kind}.",
            )
            hist.record(
                time.perf_counter() - start, {k: attrs[k] for k in _METRIC_KEYS if k in attrs}
            )


def record_session(kind: str, seconds: float, attrs: Mapping[str, Any]) -> None:
    """Record a finished session's duration (``mcp.{kind}.session.duration``)."""
    if not active():
        return
    _histogram(f"mcp.{kind}.session.duration", f"Duration of an MCP session on the {kind}.").record(
        seconds, {k: v for k, v in attrs.items() if v is not None}
    )
