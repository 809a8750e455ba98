"""OpenTelemetry, as an application configures it (the SDK's global providers, in a process of
its own: tests/telemetry/traced_run.py): one connected trace from the host's span through the
client's CLIENT spans to the server's SERVER spans, named and attributed per the semantic
conventions for MCP, and the duration metrics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

RUN = Path(__file__).with_name("traced_run.py")


def _run(revision: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(RUN), revision], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module", params=["2025-11-25", "2026-07-28"])
def run(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    return request.param, _run(request.param)


def _span(spans: list[dict[str, Any]], name: str, kind: str) -> dict[str, Any]:
    found = [s for s in spans if s["name"] == name and s["kind"] == kind]
    assert len(found) == 1, (name, kind, [(s["name"], s["kind"]) for s in spans])
    return found[0]


def test_one_trace_from_the_host_through_the_server(run: tuple[str, dict[str, Any]]) -> None:
    revision, data = run
    spans = data["spans"]
    host = _span(spans, "host work", "INTERNAL")
    client = _span(spans, "tools/call add", "CLIENT")
    server = _span(spans, "tools/call add", "SERVER")
    # The client span is the host's child; the server continued it from params._meta.
    assert client["parent"] == host["id"] and server["parent"] == client["id"]
    assert host["trace"] == client["trace"] == server["trace"]
    for span in (client, server):
        attrs = span["attributes"]
        assert attrs["mcp.method.name"] == "tools/call"
        assert attrs["gen_ai.tool.name"] == "add"
        assert attrs["gen_ai.operation.name"] == "execute_tool"
        assert attrs["mcp.protocol.version"] == revision
        assert span["status"] == "UNSET"
    assert server["attributes"]["jsonrpc.request.id"]


def test_names_and_errors_per_the_conventions(run: tuple[str, dict[str, Any]]) -> None:
    revision, data = run
    spans = data["spans"]
    prompt = _span(spans, "prompts/get greet", "SERVER")
    assert prompt["attributes"]["gen_ai.prompt.name"] == "greet"
    failed = _span(spans, "tools/call fail", "SERVER")
    assert failed["status"] == "ERROR"
    assert failed["attributes"]["error.type"] == "tool_error"
    missing = _span(spans, "resources/read", "SERVER")
    code = "-32602" if revision == "2026-07-28" else "-32002"
    assert missing["attributes"]["mcp.resource.uri"] == "doc://gone"
    assert missing["attributes"]["error.type"] == code
    assert missing["attributes"]["rpc.response.status_code"] == code
    assert _span(spans, "resources/read", "CLIENT")["status"] == "ERROR"


def test_duration_metrics(run: tuple[str, dict[str, Any]]) -> None:
    revision, data = run
    by_name = {m["name"]: m for m in data["metrics"]}
    for side in ("client", "server"):
        metric = by_name[f"mcp.{side}.operation.duration"]
        assert metric["unit"] == "s"
        methods = {p["mcp.method.name"] for p in metric["points"]}
        assert {"tools/call", "prompts/get", "resources/read"} <= methods
        tools = [p for p in metric["points"] if p.get("gen_ai.tool.name") == "fail"]
        assert tools and tools[0]["error.type"] == "tool_error"
        # Unbounded values stay out of metric attributes.
        assert all(
            "jsonrpc.request.id" not in p and "mcp.session.id" not in p for p in metric["points"]
        )
    assert "mcp.client.session.duration" in by_name
    if revision == "2025-11-25":  # a stateless server keeps no session
        assert "mcp.server.session.duration" in by_name


def test_a_program_that_never_imports_opentelemetry_does_not_pay_for_it() -> None:
    """mcpkit imports OpenTelemetry's API only once the application has (it must, to
    configure a provider): a server or client that never does starts without it."""
    program = (
        "import sys, anyio\n"
        "from mcpkit import Client, Server\n"
        "server = Server('plain')\n"
        "@server.tool()\n"
        "def add(a: int, b: int) -> int:\n"
        "    return a + b\n"
        "async def main():\n"
        "    async with Client(server) as c:\n"
        "        assert (await c.call_tool('add', {'a': 1, 'b': 2})).structured_content == {'result': 3}\n"
        "anyio.run(main)\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
