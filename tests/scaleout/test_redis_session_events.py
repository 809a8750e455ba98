"""The events of a shared session go with it: deleted when it is terminated, when a worker
finds it expired (a request, or the reaper letting its replica go), and renewed with it
while it is in use. An app on a :class:`RedisBackend` called in process, against a real
redis-server; the registry's clock is a fake one, moved by hand (nothing waits for time).
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import AsyncIterator
from typing import Any

import anyio
import orjson
import pytest
from redis.asyncio import Redis
from tests.http._http_helpers import asgi_call
from tests.scaleout._cluster import RedisServer
from tests.scaleout._wire import sse_messages

from mcpkit import Context, RedisBackend, Server, create_http_app
from mcpkit._app import StreamableHTTPApp
from mcpkit._redis import RedisSessionRegistry
from mcpkit.lowlevel import RedisEventStore

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "events", "version": "0"},
}
TTL = 600


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Held:
    """A tool call the test holds open: ``started`` once it runs, it ends on ``release``."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()


def _server(held: Held) -> Server:
    server = Server("events")

    @server.tool()
    async def talk(n: int, ctx: Context) -> str:
        """Say ``n`` progress steps (SSE events kept for resumption), then answer."""
        for i in range(n):
            await ctx.report_progress(i + 1, n)
        return "said"

    @server.tool()
    async def hold() -> str:
        """Run until the test releases it."""
        held.started.set()
        await held.release.wait()
        return "released"

    return server


@pytest.fixture
def held() -> Held:
    return Held()


@pytest.fixture
async def app(redis: RedisServer, held: Held) -> AsyncIterator[StreamableHTTPApp]:
    backend = RedisBackend(redis.url, prefix=f"e{secrets.token_hex(4)}:", session_ttl=TTL)
    app = create_http_app(_server(held), backend=backend)
    app.registry.clock = Clock()  # type: ignore[attr-defined]
    with anyio.fail_after(30):
        async with app:
            yield app


def _registry(app: StreamableHTTPApp) -> RedisSessionRegistry:
    registry = app.registry
    assert isinstance(registry, RedisSessionRegistry)
    return registry


def _clock(app: StreamableHTTPApp) -> Clock:
    clock = _registry(app).clock
    assert isinstance(clock, Clock)
    return clock


async def _post(app: StreamableHTTPApp, sid: str | None, method: str, params: Any) -> int:
    h = dict(HEADERS) if sid is None else {**HEADERS, "mcp-session-id": sid}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    return (await asgi_call(app, "POST", h, body))[0]


async def _session(app: StreamableHTTPApp) -> str:
    body = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    status, headers, _ = await asgi_call(app, "POST", HEADERS, body)
    assert status == 200
    sid = headers["mcp-session-id"]
    note = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (await asgi_call(app, "POST", {**HEADERS, "mcp-session-id": sid}, note))[0] == 202
    await _talk(app, sid, 3)
    return sid


async def _talk(app: StreamableHTTPApp, sid: str, n: int) -> list[str]:
    """Call ``talk`` on ``sid``: the ids of the events it answered with, in order."""
    params = {"name": "talk", "arguments": {"n": n}, "_meta": {"progressToken": 1}}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    status, _, answer = await asgi_call(app, "POST", {**HEADERS, "mcp-session-id": sid}, body)
    assert status == 200
    events = sse_messages(answer)
    assert len(events) == n + 1 and events[-1][1]["result"]["content"][0]["text"] == "said"
    return [eid for eid, _ in events if eid is not None]


async def _event_keys(app: StreamableHTTPApp, db: Redis, sid: str) -> list[bytes]:
    """Every key of ``sid``'s events: its streams and its index, order and byte count."""
    registry = _registry(app)
    backend = registry.backend
    key = registry.sessions[sid].transport.key if sid in registry.sessions else None
    assert key is not None
    found: list[bytes] = []
    for pattern in (f"ev:{key}.*", f"evs:{key}", f"evq:{key}", f"evb:{key}"):
        found += await db.keys(backend.key(pattern))
    return sorted(found)


async def _gone(db: Redis, keys: list[bytes]) -> bool:
    return await db.exists(*keys) == 0


async def test_terminating_a_session_deletes_its_events_at_once(
    app: StreamableHTTPApp, db: Redis
) -> None:
    sid, other = await _session(app), await _session(app)
    keys, others = await _event_keys(app, db, sid), await _event_keys(app, db, other)
    assert len(keys) == 4 and len(others) == 4  # one stream each, and its three indexes
    status, _, _ = await asgi_call(app, "DELETE", {**HEADERS, "mcp-session-id": sid})
    assert status == 200
    assert await _gone(db, keys)
    assert await db.exists(*others) == 4  # another session's are untouched


async def test_a_request_finding_its_session_expired_deletes_its_events(
    app: StreamableHTTPApp, db: Redis
) -> None:
    sid = await _session(app)
    keys = await _event_keys(app, db, sid)
    # What Redis does when the session's TTL passes (time passes, nobody uses it): its
    # record is gone.
    _clock(app).now += TTL + 1
    await db.delete(_registry(app).backend.key("s", sid))
    assert await _post(app, sid, "ping", None) == 404
    assert await _gone(db, keys)


async def test_the_reaper_letting_an_expired_sessions_replica_go_deletes_its_events(
    app: StreamableHTTPApp, db: Redis
) -> None:
    registry = _registry(app)
    expired, alive = await _session(app), await _session(app)
    expired_keys, alive_keys = (
        await _event_keys(app, db, expired),
        await _event_keys(app, db, alive),
    )
    await db.delete(registry.backend.key("s", expired))
    _clock(app).now += registry.replica_idle + 1  # both replicas idle here
    await registry.reap()
    assert expired not in registry.sessions and alive not in registry.sessions
    assert await _gone(db, expired_keys)
    # The session that lives on keeps its events (another worker may serve it next).
    assert await db.exists(*alive_keys) == len(alive_keys)


async def test_a_session_in_use_is_renewed_with_its_events(
    app: StreamableHTTPApp, db: Redis, held: Held
) -> None:
    registry = _registry(app)
    busy, idle = await _session(app), await _session(app)
    busy_keys, idle_keys = await _event_keys(app, db, busy), await _event_keys(app, db, idle)
    record = registry.backend.key("s", busy)
    await registry.renew()  # what was active so far is renewed
    _clock(app).now += 1
    async with anyio.create_task_group() as tg:
        # A call runs on the busy session: its client is attached, as a GET stream would be.
        tg.start_soon(_post, app, busy, "tools/call", {"name": "hold", "arguments": {}})
        await held.started.wait()
        for key in [record, *busy_keys, *idle_keys]:
            await db.expire(key, 5)  # as if their TTL had nearly run out
        await registry.renew()
        held.release.set()
    # The session in use and its events have their TTL again; the idle one's run out.
    assert TTL - 5 < await db.ttl(record) <= TTL
    for key in busy_keys:
        assert TTL - 5 < await db.ttl(key) <= TTL
    for key in idle_keys:
        assert 0 < await db.ttl(key) <= 5


async def test_a_session_with_its_get_stream_open_is_renewed_with_its_events(
    app: StreamableHTTPApp, db: Redis
) -> None:
    registry = _registry(app)
    sid = await _session(app)
    keys = await _event_keys(app, db, sid)
    record, holder = registry.backend.key("s", sid), registry.backend.key("s", sid + ":get")
    await registry.renew()
    _clock(app).now += 1
    opened = anyio.Event()

    async def client(message: Any) -> None:
        if message["type"] == "http.response.start":
            opened.set()

    get = {**HEADERS, "mcp-session-id": sid, "accept": "text/event-stream"}
    async with anyio.create_task_group() as tg:
        tg.start_soon(functools.partial(asgi_call, app, "GET", get, send=client))
        await opened.wait()  # its client attached, with no request running
        for key in [record, holder, *keys]:
            await db.expire(key, 5)  # as if their TTL had nearly run out
        await registry.renew()
        tg.cancel_scope.cancel()
    for key in [record, holder, *keys]:
        assert TTL - 5 < await db.ttl(key) <= TTL


async def test_a_bound_of_your_own_is_kept_and_a_resumption_past_it_refused(
    redis: RedisServer, db: Redis, held: Held
) -> None:
    # deploy.md, "Sizing": the app given an event store of its own, with its own bound.
    bound = 1200  # about five progress events
    backend = RedisBackend(redis.url, prefix=f"b{secrets.token_hex(4)}:", session_ttl=TTL)
    events = RedisEventStore(backend, max_bytes_per_session=bound)
    app = create_http_app(_server(held), backend=backend, event_store=events)
    with anyio.fail_after(30):
        async with app:
            sid = await _session(app)
            ids = await _talk(app, sid, 20)
            keys = await _event_keys(app, db, sid)
            key = _registry(app).sessions[sid].transport.key
            # Bounded in bytes, by this store's bound, and kept as long as the session.
            assert 0 < int(await db.get(backend.key("evb", key)) or 0) <= bound
            for k in keys:
                assert TTL - 5 < await db.ttl(k) <= TTL
            # The newest events replay; from an event after which one was dropped: a 400,
            # as for an unknown Last-Event-ID.
            get = {**HEADERS, "mcp-session-id": sid, "accept": "text/event-stream"}
            status, _, replay = await asgi_call(app, "GET", {**get, "last-event-id": ids[-2]})
            assert status == 200
            assert sse_messages(replay)[-1][1]["result"]["content"][0]["text"] == "said"
            status, _, refused = await asgi_call(app, "GET", {**get, "last-event-id": ids[0]})
            assert status == 400 and b"Last-Event-ID" in refused


async def _reads(db: Redis) -> int:
    """How many GETEX (a request reading its session) Redis served so far."""
    stats = await db.info("commandstats")
    return int(stats.get("cmdstat_getex", {}).get("calls", 0))


async def test_a_replica_read_lately_is_served_without_reading_redis(
    app: StreamableHTTPApp, db: Redis
) -> None:
    registry = _registry(app)
    sid = await _session(app)  # its requests read it: the replica is fresh now
    before = await _reads(db)
    for _ in range(5):
        assert await _post(app, sid, "ping", None) == 200
    assert await _reads(db) == before  # no round trip to Redis for these
    _clock(app).now += registry.fresh_for  # the window passed: read again, once
    for _ in range(3):
        assert await _post(app, sid, "ping", None) == 200
    assert await _reads(db) == before + 1
    registry.backend.bus_epoch += 1  # the bus resubscribed: a message may have been missed
    assert await _post(app, sid, "ping", None) == 200
    assert await _reads(db) == before + 2
    # What renews it in Redis meanwhile: the renewal round, off the request path.
    key = registry.backend.key("s", sid)
    await db.expire(key, 5)
    await registry.renew()
    assert await db.ttl(key) > 5


async def test_a_session_ended_on_another_worker_is_gone_here_at_once(
    app: StreamableHTTPApp, redis: RedisServer
) -> None:
    registry = _registry(app)
    sid = await _session(app)
    assert await _post(app, sid, "ping", None) == 200  # fresh here
    heard = anyio.Event()
    forget = registry._on_deleted

    async def on_deleted(message: Any) -> None:
        await forget(message)
        heard.set()

    registry.backend.on("del", on_deleted)
    other = create_http_app(
        _server(Held()),
        backend=RedisBackend(redis.url, prefix=registry.backend.prefix, session_ttl=TTL),
    )
    async with other:
        status, _, _ = await asgi_call(other, "DELETE", {**HEADERS, "mcp-session-id": sid})
        assert status == 200
        with anyio.fail_after(10):
            await heard.wait()
    assert await _post(app, sid, "ping", None) == 404
