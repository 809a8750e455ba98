"""Run-time changes over real worker processes: three ``mcpkit run examples/everything.py
--redis`` workers on a real redis-server behind the strict round-robin proxy. A tool added
by a tool call served by one worker is listed by every worker, asked directly; a client
whose stream another worker serves hears of it (a 2025-11-25 GET stream, a 2026-07-28
``subscriptions/listen`` stream), once; a worker started afterwards lists it too; and a
change that cannot be shared says so in its worker's log.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import orjson
import pytest
from tests.scaleout._cluster import (
    EVERYTHING,
    Cluster,
    RedisServer,
    cluster,
    free_port,
    start_worker,
    stop_process,
    wait_port,
)
from tests.scaleout._run import run_argv, worker
from tests.scaleout._wire import answer, call, headers, initialize, sse_messages
from tests.scaleout.conftest import JOBS

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(180)]

MODERN = "2026-07-28"
LISTS = ("tools", "prompts", "resources")


@pytest.fixture(scope="module")
def everything(redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(redis.url, tmp_path_factory.mktemp("logs")) as c:
        yield c


def _meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "changes", "version": "0"},
    }


def _modern(method: str, params: dict[str, Any]) -> tuple[dict[str, str], bytes]:
    """A 2026-07-28 request: its headers and body."""
    h = headers(**{"mcp-protocol-version": MODERN, "mcp-method": method})
    if isinstance(params.get("name"), str):
        h["mcp-name"] = params["name"]
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": _meta()}}
    return h, orjson.dumps(body)


async def listed(http: httpx2.AsyncClient, url: str) -> dict[str, list[str]]:
    """What the worker at ``url`` lists, asked directly (2026-07-28: no session): tool and
    prompt names, resource URIs, template strings."""
    found: dict[str, list[str]] = {}
    for kind in (*LISTS, "resources/templates"):
        method = f"{kind}/list"
        h, body = _modern(method, {})
        result = answer(await http.post(url, headers=h, content=body))["result"]
        field = {"resources": "resources", "resources/templates": "resourceTemplates"}.get(
            kind, kind
        )
        key = {"resources": "uri", "resources/templates": "uriTemplate"}.get(kind, "name")
        found[kind] = sorted(item[key] for item in result[field])
    return found


async def agreed(http: httpx2.AsyncClient, urls: list[str]) -> dict[str, list[str]]:
    """What every worker of ``urls`` lists, once they all list the same (bounded poll)."""
    with anyio.fail_after(10):
        while True:
            seen = [await listed(http, url) for url in urls]
            if all(s == seen[0] for s in seen):
                return seen[0]
            await anyio.sleep(0.05)


async def call_tool(
    http: httpx2.AsyncClient, url: str, tool: str, arguments: dict[str, Any] | None = None
) -> str:
    """The text a 2026-07-28 ``tools/call`` of ``tool`` answers (asked of ``url``)."""
    h, body = _modern("tools/call", {"name": tool, "arguments": arguments or {}})
    reply = answer(await http.post(url, headers=h, content=body))
    assert "result" in reply, reply
    return str(reply["result"]["content"][0]["text"])


async def _messages(stream: httpx2.Response) -> AsyncIterator[Any]:
    """The JSON-RPC messages of an SSE response, as they arrive."""
    buffer = b""
    async for chunk in stream.aiter_bytes():
        buffer += chunk.replace(b"\r\n", b"\n")
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            for _, message in sse_messages(block + b"\n\n"):
                yield message


async def _next_method(messages: AsyncIterator[Any]) -> str:
    async for message in messages:
        if "method" in message:
            return str(message["method"])
    raise AssertionError("the stream ended")


async def test_a_2025_get_stream_on_one_worker_hears_of_a_tool_another_added(
    everything: Cluster,
) -> None:
    a, b, c = (u + "/mcp" for u in everything.worker_urls)
    name = f"dyn_2025_{os.getpid()}"
    async with httpx2.AsyncClient(timeout=30) as http:
        sid = await initialize(http, a)
        get = headers(sid, accept="text/event-stream")
        with anyio.fail_after(30):
            async with http.stream("GET", a, headers=get) as stream:
                assert stream.status_code == 200
                messages = _messages(stream)
                # Served by worker b; the session's GET stream is worker a's.
                done = await call(
                    http,
                    b,
                    sid,
                    "tools/call",
                    {"name": "add_dynamic_tool", "arguments": {"name": name}},
                )
                assert done["result"]["content"][0]["text"] == f"added {name}"
                assert await _next_method(messages) == "notifications/tools/list_changed"
                # Told after worker a made it: a lists it.
                assert name in (await listed(http, a))["tools"]
                # A marker: a duplicate of the first notification would come before it.
                # The prompt added on one worker, then removed on another.
                for worker in (c, b):
                    await call(
                        http,
                        worker,
                        sid,
                        "tools/call",
                        {"name": "test_trigger_prompt_change", "arguments": {}},
                    )
                    assert await _next_method(messages) == "notifications/prompts/list_changed"
        everywhere = await agreed(http, [a, b, c])
        assert name in everywhere["tools"]
        assert "test_toggled_prompt" not in everywhere["prompts"]  # added, then removed


async def test_a_2026_listen_stream_on_one_worker_hears_of_a_tool_another_added(
    everything: Cluster,
) -> None:
    a, b, _ = (u + "/mcp" for u in everything.worker_urls)
    name = f"dyn_2026_{os.getpid()}"
    async with httpx2.AsyncClient(timeout=30) as http:
        h, body = _modern("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        with anyio.fail_after(30):
            async with http.stream("POST", a, headers=h, content=body) as stream:
                assert stream.status_code == 200
                messages = _messages(stream)
                ack = await messages.__anext__()
                assert ack["method"] == "notifications/subscriptions/acknowledged", ack
                assert (
                    await call_tool(http, b, "add_dynamic_tool", {"name": name}) == f"added {name}"
                )
                assert await _next_method(messages) == "notifications/tools/list_changed"
                assert name in (await listed(http, a))["tools"]  # made before told
                assert await call_tool(http, a, name) == f"I am {name}"
                # Removed through b again: told once more, and gone from a.
                assert (
                    await call_tool(http, b, "remove_dynamic_tool", {"name": name})
                    == f"removed {name}"
                )
                assert await _next_method(messages) == "notifications/tools/list_changed"
                assert name not in (await listed(http, a))["tools"]


async def test_a_worker_started_after_the_changes_lists_them(
    everything: Cluster, redis: RedisServer, tmp_path: Path
) -> None:
    a, b, c = (u + "/mcp" for u in everything.worker_urls)
    name = f"dyn_late_{os.getpid()}"
    async with httpx2.AsyncClient(timeout=30) as http:
        await call_tool(http, b, "add_dynamic_tool", {"name": name})
        await call_tool(http, c, "test_trigger_tool_change")  # toggles test_toggled_tool
        before = await agreed(http, [a, b, c])  # made everywhere: the bus is quick, not instant
        assert name in before["tools"]
        port = free_port()
        late = start_worker(redis.url, EVERYTHING, port, tmp_path / "late.log")
        try:
            wait_port(port, late)
            after = await listed(http, f"http://127.0.0.1:{port}/mcp")
        finally:
            stop_process(late)
        await call_tool(http, a, "test_trigger_tool_change")  # back as it was
    assert after == before


async def test_a_closure_added_on_a_worker_sharing_redis_is_logged_as_this_workers_only(
    redis: RedisServer,
) -> None:
    with worker(run_argv("--redis", redis.url, target=JOBS)) as w:
        async with httpx2.AsyncClient(timeout=30) as http:
            grown = f"grown_{os.getpid()}"
            assert await call_tool(http, w.url, "grow", {"name": grown}) == "grown"
        lines = w.served.lines
    assert any(
        f"tool {grown!r} was added on this worker only" in line and "@server.runtime_change" in line
        for line in lines
    ), lines[-20:]
