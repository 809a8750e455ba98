"""Visibility over two real ``mcpkit run --redis`` workers sharing a real redis-server: a
session's ``ctx.enable`` made by a tool one worker serves is what the other worker lists and
serves for that session (and tells through that session's GET stream, held by the other
worker), not for another session; a server-wide ``server.disable`` made on one worker at run
time is made on the other."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from tests.scaleout._cluster import RedisServer
from tests.scaleout._run import run_argv, worker
from tests.scaleout._wire import call, headers, initialize, sse_messages

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]
BOTH_BACKENDS = True  # HTTP to worker processes only: the test's own loop may be trio

VISIBLE = Path(__file__).with_name("_visible.py")


async def tools(http: httpx2.AsyncClient, url: str, sid: str) -> list[str]:
    reply = await call(http, url, sid, "tools/list", {})
    return [t["name"] for t in reply["result"]["tools"]]


async def tool(http: httpx2.AsyncClient, url: str, sid: str, name: str) -> Any:
    return await call(http, url, sid, "tools/call", {"name": name, "arguments": {}})


async def messages(stream: httpx2.Response) -> AsyncIterator[Any]:
    """The JSON-RPC messages of an SSE response, as they arrive."""
    buffer = b""
    async for chunk in stream.aiter_bytes():
        buffer += chunk.replace(b"\r\n", b"\n")
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            for _, message in sse_messages(block + b"\n\n"):
                yield message


async def test_a_session_unlocked_on_one_worker_is_unlocked_on_the_other(
    redis: RedisServer,
) -> None:
    argv = run_argv("--redis", redis.url, target=VISIBLE)
    with worker(argv) as first, worker(argv) as second:
        a, b = first.url, second.url
        async with httpx2.AsyncClient(timeout=30) as http:
            sid = await initialize(http, a)
            other = await initialize(http, b)
            assert await tools(http, a, sid) == ["status", "login", "lockdown"]
            get = headers(sid, accept="text/event-stream")
            with anyio.fail_after(30):
                async with (
                    http.stream("GET", a, headers=get) as stream,
                    contextlib.aclosing(messages(stream)) as heard,
                ):
                    assert stream.status_code == 200
                    # Served by worker b; the session's GET stream is worker a's.
                    done = await tool(http, b, sid, "login")
                    assert done["result"]["content"][0]["text"] == "welcome"
                    told = await heard.__anext__()
                    assert told["method"] == "notifications/tools/list_changed"
            # Worker a lists and serves what worker b unlocked for the session ...
            assert await tools(http, a, sid) == ["status", "wipe", "login", "lockdown"]
            assert (await tool(http, a, sid, "wipe"))["result"]["content"][0]["text"] == "wiped"
            # ... and for no other session.
            assert "wipe" not in await tools(http, a, other)
            refused = await tool(http, b, other, "wipe")
            assert refused["error"]["message"] == "Unknown tool: wipe"
            # Server-wide at run time: made on worker a, made on worker b too.
            assert (await tool(http, a, other, "lockdown"))["result"]["content"][0]["text"]
            with anyio.fail_after(10):
                while "status" in await tools(http, b, other):  # noqa: ASYNC110 (the bus: no event here)
                    await anyio.sleep(0.05)
            assert await tools(http, b, sid) == ["wipe", "login", "lockdown"]
