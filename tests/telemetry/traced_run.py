"""Run by tests/telemetry/test_opentelemetry.py in a process of its own (OpenTelemetry's global
providers can be set once per process): an application that configured the SDK with
in-memory exporters, a host span around a client talking to a server, then every span and
metric point printed as JSON."""

from __future__ import annotations

import json
import sys

import anyio
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpkit import Client, ResourceNotFound, Server, ToolError

spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)
reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))

server = Server("traced")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ToolError("no")


@server.prompt()
def greet(name: str) -> str:
    """Greet."""
    return f"hello {name}"


@server.resource("doc://{name}")
def doc(name: str) -> str:
    """A document."""
    raise ResourceNotFound(f"doc://{name}")


async def main(revision: str) -> None:
    tracer = trace.get_tracer("host")
    async with Client(server, protocol_version=revision) as client:
        with tracer.start_as_current_span("host work"):
            await client.call_tool("add", {"a": 1, "b": 2})
            await client.call_tool("fail", {})
            await client.get_prompt("greet", {"name": "x"})
            try:
                await client.read_resource("doc://gone")
            except ResourceNotFound:
                pass


anyio.run(main, sys.argv[1])
out = {
    "spans": [
        {
            "name": s.name,
            "kind": s.kind.name,
            "trace": f"{s.context.trace_id:032x}",
            "id": f"{s.context.span_id:016x}",
            "parent": f"{s.parent.span_id:016x}" if s.parent else None,
            "status": s.status.status_code.name,
            "attributes": dict(s.attributes or {}),
        }
        for s in spans.get_finished_spans()
    ],
    "metrics": [
        {
            "name": m.name,
            "unit": m.unit,
            "points": [dict(p.attributes or {}) for p in m.data.data_points],
        }
        for rm in reader.get_metrics_data().resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
    ],
}
print(json.dumps(out))
