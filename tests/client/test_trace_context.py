"""W3C trace context in ``params._meta``: the Client carries the active OpenTelemetry span's
``traceparent`` (and ``tracestate``, ``baggage``) on every request, under either era, so that
a host's trace continues through the server; nothing without an active span."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest
from opentelemetry import baggage, context, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, TraceState

from mcpkit import Client, Context, Server

pytestmark = pytest.mark.anyio

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
SPAN_ID = 0x00F067AA0BA902B7
PARENT = f"00-{TRACE_ID:032x}-{SPAN_ID:016x}-01"
REVISIONS = ["2025-11-25", "2026-07-28"]


def _server(seen: list[dict[str, Any]]) -> Server:
    server = Server("traced")

    @server.tool()
    def probe(ctx: Context) -> str:
        """Record the request's _meta."""
        seen.append(dict(ctx.meta or {}))
        return "ok"

    return server


@contextmanager
def _span(state: TraceState | None = None) -> Iterator[None]:
    span_context = SpanContext(
        TRACE_ID, SPAN_ID, is_remote=False, trace_flags=TraceFlags(1), trace_state=state
    )
    with trace.use_span(NonRecordingSpan(span_context)):
        yield


@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_active_span_travels_in_meta(revision: str) -> None:
    seen: list[dict[str, Any]] = []
    with anyio.fail_after(20):
        async with Client(_server(seen), protocol_version=revision) as client:
            with _span(TraceState([("vendor", "v1")])):
                token = context.attach(baggage.set_baggage("tenant", "acme"))
                try:
                    await client.call_tool("probe", {})
                finally:
                    context.detach(token)
            await client.call_tool("probe", {})
    traced, untraced = seen
    assert traced["traceparent"] == PARENT
    assert traced["tracestate"] == "vendor=v1"
    assert traced["baggage"] == "tenant=acme"
    assert not {"traceparent", "tracestate", "baggage"} & set(untraced)


async def test_the_callers_own_meta_wins() -> None:
    # A proxy forwarding a request keeps the trace context it received.
    seen: list[dict[str, Any]] = []
    forwarded = "00-" + "1" * 32 + "-" + "2" * 16 + "-00"
    with anyio.fail_after(20):
        async with Client(_server(seen)) as client:
            with _span():
                await client.call_tool("probe", {}, meta={"traceparent": forwarded, "k": 1})
    assert seen[0]["traceparent"] == forwarded and seen[0]["k"] == 1
