"""A task that finishes while Redis is down is recorded ``completed`` once Redis is back,
never failed as lost (issue 43, W6): the liveness key of its worker expired while Redis was
down, which says nothing of the worker.

Two workers (two apps on :class:`RedisBackend`, called in process) share a real
redis-server that keeps its data across a restart (append-only file). The task runs on one;
Redis is stopped for longer than the liveness keys live, the task finishes meanwhile, Redis
starts again on the same port, and the other worker is asked at once.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from tests.http._http_helpers import asgi_call
from tests.scaleout._cluster import RedisServer, redis_server
from tests.scaleout._wire import VERSION, sse_messages
from tests.scaleout._wire import headers as wire_headers

from mcpkit import RedisBackend, Server, create_http_app
from mcpkit._app import StreamableHTTPApp

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(90)]

#: Seconds between heartbeats: liveness keys live three of them.
HEARTBEAT = 0.25
INIT = {
    "protocolVersion": VERSION,
    "capabilities": {},
    "clientInfo": {"name": "outage", "version": "0"},
}


def _server(release: anyio.Event) -> Server:
    server = Server("outage")

    @server.tool(task_support="optional")
    async def charge(amount: int) -> str:
        """Charge ``amount`` (a side effect a client must not repeat) once released."""
        await release.wait()
        return f"charged {amount}"

    return server


async def _post(
    app: StreamableHTTPApp, sid: str | None, method: str, params: Any
) -> tuple[int, dict[str, str], Any]:
    """POST one request: its status, headers and the JSON-RPC answer (None for a 503)."""
    h = wire_headers(sid)
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    status, headers, raw = await asgi_call(app, "POST", h, body)
    if status != 200:
        return status, headers, None
    if headers.get("content-type", "").startswith("application/json"):
        return status, headers, orjson.loads(raw)
    return status, headers, next(m for _, m in sse_messages(raw) if "method" not in m)


@pytest.fixture
def durable(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path, durable=True) as server:
        yield server


async def _serving(backend: RedisBackend) -> None:
    """Until ``backend`` has reached Redis long enough to judge liveness (bounded)."""
    with anyio.fail_after(20):
        while not backend.judges_liveness():  # noqa: ASYNC110  (its heartbeats, no event)
            await anyio.sleep(0.02)


async def test_a_task_finishing_while_redis_is_down_is_completed_not_lost(
    durable: RedisServer,
) -> None:
    prefix = f"o{secrets.token_hex(4)}:"
    release = anyio.Event()
    a = create_http_app(
        _server(release), backend=RedisBackend(durable.url, prefix=prefix, heartbeat=HEARTBEAT)
    )
    b = create_http_app(
        _server(release), backend=RedisBackend(durable.url, prefix=prefix, heartbeat=HEARTBEAT)
    )
    backend_b = b.registry.backend  # type: ignore[attr-defined]
    assert isinstance(backend_b, RedisBackend)
    with anyio.fail_after(30):
        async with a, b:
            await _serving(backend_b)
            status, headers, _ = await _post(a, None, "initialize", INIT)
            assert status == 200
            sid = headers["mcp-session-id"]
            note = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
            assert (await asgi_call(a, "POST", wire_headers(sid), note))[0] == 202
            params = {"name": "charge", "arguments": {"amount": 7}, "task": {"ttl": 60000}}
            status, _, created = await _post(a, sid, "tools/call", params)
            assert status == 200, created
            task_id = created["result"]["task"]["taskId"]
            durable.stop()
            release.set()  # the task finishes on worker A while Redis is down
            # The outage itself: longer than the liveness keys live (3 heartbeats), so every
            # worker's key has expired by the time Redis is back.
            await anyio.sleep(8 * HEARTBEAT)
            durable.start()
            # Asked at once on worker B, then until the task is no longer working.
            while True:
                status, _, got = await _post(b, sid, "tasks/get", {"taskId": task_id})
                if status == 200:
                    assert got["result"]["status"] in ("working", "completed"), got
                    if got["result"]["status"] == "completed":
                        break
                await anyio.sleep(0.02)
            status, _, got = await _post(b, sid, "tasks/result", {"taskId": task_id})
            assert status == 200, got
            result = got["result"]
            assert result["content"][0]["text"] == "charged 7", result
            assert "isError" not in result or not result["isError"], result


async def test_a_worker_gone_during_the_outage_still_counts_as_dead_once_redis_is_back(
    durable: RedisServer,
) -> None:
    """The other side: a worker that stopped while Redis was down (nothing it could record)
    is judged dead once the others reached Redis unbroken for three heartbeats, and its
    task is failed as lost, as for a worker killed while Redis answered."""
    prefix = f"g{secrets.token_hex(4)}:"
    never = anyio.Event()
    b = create_http_app(
        _server(never), backend=RedisBackend(durable.url, prefix=prefix, heartbeat=HEARTBEAT)
    )
    a = create_http_app(
        _server(never), backend=RedisBackend(durable.url, prefix=prefix, heartbeat=HEARTBEAT)
    )
    with anyio.fail_after(60):
        async with b:
            async with a:
                status, headers, _ = await _post(a, None, "initialize", INIT)
                sid = headers["mcp-session-id"]
                params = {"name": "charge", "arguments": {"amount": 1}, "task": {"ttl": 60000}}
                status, _, created = await _post(a, sid, "tools/call", params)
                assert status == 200, created
                task_id = created["result"]["task"]["taskId"]
                durable.stop()
            # Worker A is gone; its end of the task could not be recorded.
            durable.start()
            while True:
                status, _, got = await _post(b, sid, "tasks/get", {"taskId": task_id})
                if status == 200 and got["result"]["status"] != "working":
                    break
                await anyio.sleep(0.02)
            assert got["result"]["status"] == "failed", got
            assert "worker running the task stopped" in got["result"]["statusMessage"], got
