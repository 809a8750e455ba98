"""Middleware on the Server and the Client: order, hooks, changing requests, answering them,
failing them, and the shipped middleware (logging, timing, rate limit, list cache, error
mapping), under both revisions."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from mcpkit import Client, ProtocolError, Server
from mcpkit.middleware import (
    RATE_LIMITED,
    CallNext,
    ErrorMappingMiddleware,
    ListCacheMiddleware,
    LoggingMiddleware,
    MCPRequest,
    Middleware,
    RateLimitMiddleware,
    TimingMiddleware,
)

pytestmark = pytest.mark.anyio
REVISIONS = ["2025-11-25", "2026-07-28"]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _server(*middleware: Any) -> Server:
    server = Server("mw", middleware=list(middleware))

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool()
    def lookup(key: str) -> str:
        """Look a key up."""
        return {"a": "1"}[key]

    @server.resource("data://{key}")
    def data(key: str) -> str:
        """A value by key."""
        return {"a": "1"}[key]

    return server


@pytest.mark.parametrize("revision", REVISIONS)
async def test_order_hooks_and_changed_params(revision: str) -> None:
    seen: list[str] = []

    async def outer(request: MCPRequest, call_next: CallNext) -> Any:
        seen.append(f"outer {request.method}")
        return await call_next(request)

    class Shout(Middleware):
        async def on_request(self, request: MCPRequest, call_next: CallNext) -> Any:
            seen.append(f"inner {request.method}")
            return await call_next(request)

        async def on_call_tool(self, request: MCPRequest, call_next: CallNext) -> Any:
            seen.append(f"hook {request.target}")
            assert request.params is not None
            request.params["arguments"]["text"] = request.params["arguments"]["text"].upper()
            return await call_next(request)

    with anyio.fail_after(20):
        async with Client(_server(outer, Shout()), protocol_version=revision) as client:
            result = await client.call_tool("echo", {"text": "hi"})
    assert result.content[0].text == "HI"  # type: ignore[union-attr]
    calls = [s for s in seen if "tools/call" in s or s.startswith("hook")]
    assert calls == ["outer tools/call", "inner tools/call", "hook echo"]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_answering_and_refusing_without_the_handler(revision: str) -> None:
    class Gate(Middleware):
        async def on_call_tool(self, request: MCPRequest, call_next: CallNext) -> Any:
            if request.target == "lookup":
                raise ProtocolError(-32001, "lookups are closed")
            return {"content": [{"type": "text", "text": "from the gate"}]}

    with anyio.fail_after(20):
        async with Client(_server(Gate()), protocol_version=revision) as client:
            result = await client.call_tool("echo", {"text": "hi"})
            assert result.content[0].text == "from the gate"  # type: ignore[union-attr]
            with pytest.raises(ProtocolError) as caught:
                await client.call_tool("lookup", {"key": "a"})
    assert (caught.value.code, caught.value.message) == (-32001, "lookups are closed")


async def test_rate_limit_per_caller_with_retry_after() -> None:
    clock = Clock()
    limit = RateLimitMiddleware(rate=1, burst=2, methods=["tools/call"], clock=clock)
    with anyio.fail_after(20):
        async with Client(_server(limit), protocol_version="2025-11-25") as client:
            await client.call_tool("echo", {"text": "1"})
            await client.call_tool("echo", {"text": "2"})
            with pytest.raises(ProtocolError) as caught:
                await client.call_tool("echo", {"text": "3"})
            assert caught.value.code == RATE_LIMITED
            assert caught.value.data == {"retryAfter": pytest.approx(1.0)}
            clock.now += 1.0  # one token back
            await client.call_tool("echo", {"text": "4"})
            # Another caller (session) has its own bucket.
            async with Client(client_server(client), protocol_version="2025-11-25") as other:
                await other.call_tool("echo", {"text": "x"})


def client_server(client: Client) -> Any:
    return client.target


async def test_list_cache_serves_repeats_and_drops_on_change() -> None:
    calls: list[str] = []

    async def count(request: MCPRequest, call_next: CallNext) -> Any:
        calls.append(request.method)
        return await call_next(request)

    server = _server(ListCacheMiddleware(ttl=60), count)
    with anyio.fail_after(20):
        async with Client(server, protocol_version="2025-11-25") as client:
            await client.list_tools(use_cache=False)
            await client.list_tools(use_cache=False)
            assert calls.count("tools/list") == 1  # the second came from the cache

            @server.tool()
            def added() -> str:
                """New."""
                return "new"

            names = [t.name for t in await client.list_tools(use_cache=False)]
    assert "added" in names and calls.count("tools/list") == 2


async def test_timing_logging_and_error_mapping(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    timing = TimingMiddleware(clock=clock)
    caplog.set_level(logging.INFO, logger="mcpkit.requests")
    server = _server(
        LoggingMiddleware(),
        timing,
        ErrorMappingMiddleware({KeyError: (-32602, "no such key")}),
    )
    with anyio.fail_after(20):
        async with Client(server, protocol_version="2025-11-25") as client:
            await client.call_tool("echo", {"text": "secret-value"})
            # A tool's exception is a tool result (isError); a resource's escapes: mapped.
            failed = await client.call_tool("lookup", {"key": "missing"})
            assert failed.is_error
            with pytest.raises(ProtocolError) as caught:
                await client.read_resource("data://missing")
    assert (caught.value.code, caught.value.message) == (-32602, "no such key")
    assert ("tools/call", "echo") in timing.stats and timing.stats[("tools/call", "echo")] == [0.0]
    records = [r for r in caplog.records if getattr(r, "mcp_method", None) == "tools/call"]
    assert [r.mcp_outcome for r in records] == ["ok", "tool_error"]  # type: ignore[attr-defined]
    reads = [r for r in caplog.records if getattr(r, "mcp_method", None) == "resources/read"]
    assert [r.mcp_outcome for r in reads] == ["error -32602"]  # type: ignore[attr-defined]
    assert all("secret-value" not in r.getMessage() for r in caplog.records)  # params not logged


@pytest.mark.parametrize("revision", REVISIONS)
async def test_client_middleware_sees_and_changes_what_is_sent(revision: str) -> None:
    sent: list[str] = []

    async def tag(request: MCPRequest, call_next: CallNext) -> Any:
        sent.append(request.method)
        if request.method == "tools/call" and request.params is not None:
            request.params = {**request.params, "arguments": {"text": "changed"}}
        return await call_next(request)

    with anyio.fail_after(20):
        async with Client(_server(), protocol_version=revision, middleware=[tag]) as client:
            result = await client.call_tool("echo", {"text": "original"})
    assert result.content[0].text == "changed"  # type: ignore[union-attr]
    assert "tools/call" in sent
