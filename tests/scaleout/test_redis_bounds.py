"""What Redis keeps stays bounded across workers (issue 43, W7 and W8).

Two workers (two apps on :class:`RedisBackend` sharing one real redis-server, called in
process):

- the sessions Redis keeps for the deployment are bounded (``RedisBackend(max_shared_sessions)``):
  past it a new session ends the least recently used one idle long enough, or is refused
  with 503 when every one was in use lately; the clock of the sessions' last use is a fake
  one, moved by hand;
- the resources one session subscribes to are bounded (``Server.max_subscriptions``), and a
  subscribe writes and tells the other workers that one subscription only, not the session's
  whole record.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import orjson
import pytest
from redis.asyncio import Redis
from tests.http._http_helpers import asgi_call
from tests.scaleout._cluster import RedisServer
from tests.scaleout._wire import VERSION, sse_messages
from tests.scaleout._wire import headers as wire_headers

from mcpkit import Context, RedisBackend, Server, create_http_app
from mcpkit._app import StreamableHTTPApp
from mcpkit._redis import RedisSessionRegistry

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

INIT = {
    "protocolVersion": VERSION,
    "capabilities": {},
    "clientInfo": {"name": "bounds", "version": "0"},
}


class Wall:
    """A wall clock moved by hand (the sessions' last use is scored on it)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _server(max_subscriptions: int | None = 1000) -> Server:
    server = Server("bounds")
    server.max_subscriptions = max_subscriptions

    @server.resource("note://{n}")
    def note(n: str) -> str:
        """A resource per ``n``, to subscribe to."""
        return n

    @server.tool()
    async def talk(n: int, ctx: Context) -> str:
        """Say ``n`` progress steps (events kept for resumption), then answer."""
        for i in range(n):
            await ctx.report_progress(i + 1, n)
        return "said"

    return server


@asynccontextmanager
async def _workers(
    redis: RedisServer, prefix: str, **options: Any
) -> AsyncIterator[tuple[StreamableHTTPApp, StreamableHTTPApp]]:
    """Two workers on one Redis under ``prefix``, with ``options`` for their backends."""
    subs = options.pop("max_subscriptions", 1000)
    a = create_http_app(_server(subs), backend=RedisBackend(redis.url, prefix=prefix, **options))
    b = create_http_app(_server(subs), backend=RedisBackend(redis.url, prefix=prefix, **options))
    with anyio.fail_after(30):
        async with a, b:
            yield a, b


def _registry(app: StreamableHTTPApp) -> RedisSessionRegistry:
    registry = app.registry
    assert isinstance(registry, RedisSessionRegistry)
    return registry


async def _post(app: StreamableHTTPApp, sid: str | None, method: str, params: Any) -> Any:
    """POST one request: its status and JSON-RPC answer (the error body for a non-200)."""
    h = wire_headers(sid)
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    status, headers, raw = await asgi_call(app, "POST", h, body)
    if headers.get("content-type", "").startswith("application/json") or status != 200:
        return status, orjson.loads(raw) if raw else None, headers
    return status, next(m for _, m in sse_messages(raw) if "method" not in m), headers


async def _session(app: StreamableHTTPApp) -> str:
    status, got, headers = await _post(app, None, "initialize", INIT)
    assert status == 200, got
    sid: str = headers["mcp-session-id"]
    note = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (await asgi_call(app, "POST", wire_headers(sid), note))[0] == 202
    return sid


async def _records(db: Redis, prefix: str) -> set[str]:
    """The ids of the session records in Redis (not their other keys)."""
    keys = [k.decode()[len(prefix) + 2 :] async for k in db.scan_iter(f"{prefix}s:*")]
    return {k for k in keys if ":" not in k}


async def test_sessions_past_the_bound_end_the_least_recently_used_idle_one_or_are_refused(
    redis: RedisServer, db: Redis
) -> None:
    prefix = f"b{secrets.token_hex(4)}:"
    wall = Wall()
    async with _workers(redis, prefix, max_shared_sessions=3, session_ttl=40) as (a, b):
        for app in (a, b):
            _registry(app).bound.wall = wall
        idle_for = _registry(a).bound.idle_for()
        assert idle_for == 20.0  # two renewals: a quarter of the sessions' TTL each
        first = await _session(a)
        await _post(a, first, "tools/call", {"name": "talk", "arguments": {"n": 3}})
        events = [k async for k in db.scan_iter(f"{prefix}ev*")]
        assert events  # what the first session keeps beside its record
        wall.now += 1
        made = [first, await _session(b)]
        wall.now += 1
        made.append(await _session(a))
        assert await _records(db, prefix) == set(made)
        assert await db.zcard(f"{prefix}sessions") == 3
        # All three in use lately: a fourth is refused, on either worker (each knows it from
        # its last admission, or from counting as its reaper does every second), before
        # its handshake runs; nothing is ended for it.
        await _registry(b).bound.look()
        for app in (b, a):
            status, got, headers = await _post(app, None, "initialize", INIT)
            assert status == 503, got
            assert "too many sessions" in got["error"]["message"], got
            assert "mcp-session-id" not in headers
        assert await _records(db, prefix) == set(made)
        status, got, _ = await _post(b, first, "ping", {})
        assert status == 200 and got["result"] == {}, got
        # Later, the least recently used one idle long enough: ended for the new one, with
        # everything it kept; the bound holds.
        wall.now += idle_for + 1
        newest = await _session(b)
        assert await _records(db, prefix) == {*made[1:], newest}
        assert await db.zcard(f"{prefix}sessions") == 3
        assert await db.exists(*events) == 0
        for app in (a, b):
            with anyio.fail_after(10):  # the other worker's replica goes on the bus
                while True:
                    status, got, _ = await _post(app, first, "ping", {})
                    if status == 404:
                        break
                    await anyio.sleep(0.02)
        # Ending a session makes room at once.
        h = wire_headers(newest)
        assert (await asgi_call(a, "DELETE", h))[0] == 200
        assert await db.zcard(f"{prefix}sessions") == 2
        assert await _session(a) in await _records(db, prefix)


async def test_workers_making_the_last_sessions_at_once_never_overshoot_the_bound(
    redis: RedisServer, db: Redis
) -> None:
    prefix = f"r{secrets.token_hex(4)}:"
    async with _workers(redis, prefix, max_shared_sessions=2) as (a, b):
        await _session(a)
        answers: list[tuple[int, Any, dict[str, str]]] = []

        async def initialize(app: StreamableHTTPApp) -> None:
            answers.append(await _post(app, None, "initialize", INIT))

        # Neither worker knows the other is making one: both handshakes run, one is kept.
        async with anyio.create_task_group() as tg:
            for app in (a, b):
                tg.start_soon(initialize, app)
        assert sorted(status for status, _, _ in answers) == [200, 503], answers
        assert len(await _records(db, prefix)) == 2
        assert await db.zcard(f"{prefix}sessions") == 2
        refused = next(headers for status, _, headers in answers if status == 503)
        assert "mcp-session-id" not in refused
        assert sum(len(_registry(app).sessions) for app in (a, b)) == 2  # none left behind


async def test_subscriptions_past_the_bound_are_refused_naming_it(
    redis: RedisServer, db: Redis
) -> None:
    prefix = f"s{secrets.token_hex(4)}:"
    async with _workers(redis, prefix, max_subscriptions=4) as (a, b):
        sid = await _session(a)
        for i in range(4):
            status, got, _ = await _post(a, sid, "resources/subscribe", {"uri": f"note://{i}"})
            assert status == 200 and got["result"] == {}, got
        # The fifth, on the other worker (whose replica reads the subscriptions once).
        status, got, _ = await _post(b, sid, "resources/subscribe", {"uri": "note://4"})
        assert status == 200 and got["error"]["code"] == -32602, got
        assert "max_subscriptions=4" in got["error"]["message"], got
        # One held already is no new one.
        status, got, _ = await _post(b, sid, "resources/subscribe", {"uri": "note://3"})
        assert status == 200 and got["result"] == {}, got
        status, got, _ = await _post(b, sid, "resources/unsubscribe", {"uri": "note://0"})
        assert got["result"] == {}, got
        # The worker that made them hears of the one let go, and takes another.
        with anyio.fail_after(10):
            while True:
                status, got, _ = await _post(a, sid, "resources/subscribe", {"uri": "note://9"})
                if "result" in got:
                    break
                await anyio.sleep(0.02)
        members = await db.smembers(f"{prefix}s:{sid}:subs")
        assert {m.decode() if isinstance(m, bytes) else m for m in members} == {
            "note://1",
            "note://2",
            "note://3",
            "note://9",
        }


async def test_a_subscribe_writes_and_tells_that_subscription_only(
    redis: RedisServer, db: Redis
) -> None:
    prefix = f"d{secrets.token_hex(4)}:"
    async with _workers(redis, prefix) as (a, b):
        sid = await _session(a)
        await _post(b, sid, "ping", {})  # a replica on the other worker too
        for i in range(200):
            _, got, _ = await _post(a, sid, "resources/subscribe", {"uri": f"note://{i}"})
            assert got["result"] == {}, got
        record = await db.get(f"{prefix}s:{sid}")
        assert isinstance(record, bytes) and b"note://" not in record  # it holds none of them
        bus = db.pubsub()
        await bus.subscribe(f"{prefix}all")
        try:
            _, got, _ = await _post(a, sid, "resources/subscribe", {"uri": "note://last"})
            assert got["result"] == {}, got
            with anyio.fail_after(10):
                while True:
                    message = await bus.get_message(ignore_subscribe_messages=True, timeout=1)
                    if message is not None and orjson.loads(message["data"]).get("t") == "ref":
                        break
        finally:
            await bus.aclose()  # type: ignore[no-untyped-call]
        told = orjson.loads(message["data"])
        assert told["add"] == ["note://last"] and told["del"] == [], told
        assert "raw" not in told  # nothing else of the session changed
        assert len(message["data"]) < 200
        assert await db.scard(f"{prefix}s:{sid}:subs") == 201
        # Ended on the other worker: every subscription goes, and its subscribers' entries.
        h = wire_headers(sid)
        assert (await asgi_call(b, "DELETE", h))[0] == 200
        assert [k async for k in db.scan_iter(f"{prefix}sub:*")] == []
        assert await db.exists(f"{prefix}s:{sid}:subs") == 0


def test_the_deployments_bound_has_its_own_name_and_the_old_one_warns() -> None:
    # "max_sessions" is one process's bound everywhere else (docs/architecture.md).
    assert RedisBackend("redis://127.0.0.1:1/0").max_shared_sessions == 10_000
    assert RedisBackend("redis://127.0.0.1:1/0", max_shared_sessions=7).max_shared_sessions == 7
    with pytest.warns(DeprecationWarning, match="use max_shared_sessions="):
        old = RedisBackend("redis://127.0.0.1:1/0", max_sessions=5)
    assert old.max_shared_sessions == 5
    with pytest.raises(ValueError, match="max_shared_sessions must be at least 1"):
        RedisBackend("redis://127.0.0.1:1/0", max_shared_sessions=0)
