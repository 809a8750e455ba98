"""What a session keeps in Redis for resumption is bounded in bytes (oldest events dropped
first, whatever their stream), goes with the session, and is never replayed with a hole in
it. :class:`RedisEventStore` against a real redis-server, each test under its own prefix;
sizes are read from Redis itself (``MEMORY USAGE``, ``INFO memory``).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis
from tests.scaleout._cluster import RedisServer

from mcpkit import RedisBackend
from mcpkit._redis._events import EVENT_OVERHEAD, MAX_SESSION_EVENT_BYTES, RedisEventStore

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

MiB = 1024 * 1024


@pytest.fixture
async def store(redis: RedisServer) -> AsyncIterator[RedisEventStore]:
    backend = RedisBackend(redis.url, prefix=f"t{secrets.token_hex(4)}:")
    try:
        yield RedisEventStore(backend, ttl=60)
    finally:
        await backend.client.aclose()


def _message(n: int, pad: int = 0) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": n, "p": "x" * pad}}


def _cost(seq: int, message: dict[str, Any]) -> int:
    import orjson

    return len(b"%d:" % seq + orjson.dumps(message)) + EVENT_OVERHEAD


async def _keys(db: Redis, store: RedisEventStore) -> list[bytes]:
    return sorted(await db.keys(store.backend.prefix + "*"))


async def _dataset(db: Redis) -> int:
    """Bytes of Redis's memory holding data (its clients' buffers and its own aside)."""
    return int((await db.info("memory"))["used_memory_dataset"])


async def _ttls(db: Redis, keys: list[bytes]) -> list[int]:
    return [await db.ttl(k) for k in keys]


async def test_the_oldest_events_of_a_session_go_first_whatever_their_stream(
    store: RedisEventStore, db: Redis
) -> None:
    one = _cost(1, _message(1, 200))
    store.max_bytes_per_session = 4 * one  # room for four events of this size
    for seq in range(1, 4):  # a.1 b.1 a.2 b.2 a.3 b.3: six events, written in that order
        await store.store_event("s", "s.a", seq, _message(seq, 200))
        await store.store_event("s", "s.b", seq, _message(seq, 200))
    # a.1 and b.1 went, oldest first; the four newest stay, and the count says so.
    assert [s for s, _ in await store.events_after("s", "s.a", 1) or []] == [2, 3]
    assert [s for s, _ in await store.events_after("s", "s.b", 1) or []] == [2, 3]
    counted = int(await db.get(store.backend.key("evb", "s")) or 0)
    assert counted == 4 * one
    assert await db.llen(store.backend.key("evq", "s")) == 4
    # Another session is bounded on its own: nothing of it was dropped for this one.
    await store.store_event("t", "t.a", 1, _message(1, 200))
    assert await store.events_after("t", "t.a", 0) == [(1, _message(1, 200))]


async def test_a_resumption_after_a_dropped_event_is_refused_never_replayed_with_a_hole(
    store: RedisEventStore,
) -> None:
    store.max_bytes_per_session = 3 * _cost(1, _message(1))
    for seq in range(1, 6):
        await store.store_event("s", "s.a", seq, _message(seq))
    # Kept: 3, 4, 5. After 2 (or 3, 4, 5) the rest is whole: replayed.
    assert [s for s, _ in await store.events_after("s", "s.a", 2) or []] == [3, 4, 5]
    assert [s for s, _ in await store.events_after("s", "s.a", 4) or []] == [5]
    assert await store.events_after("s", "s.a", 5) == []
    # After 1 (or from the priming event, 0), event 2 is gone: as for an unknown stream.
    assert await store.events_after("s", "s.a", 1) is None
    assert await store.events_after("s", "s.a", 0) is None
    # A stream all of whose events were dropped is unknown, and out of the session's index.
    await store.store_event("s", "s.b", 1, _message(1))
    for seq in range(6, 9):
        await store.store_event("s", "s.a", seq, _message(seq))
    assert await store.events_after("s", "s.b", 0) is None
    assert not await store.backend.client.sismember(store.backend.key("evs", "s"), "s.b")


async def test_an_event_alone_over_the_bound_is_not_kept_and_says_so(
    store: RedisEventStore, db: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    store.max_bytes_per_session = 1000
    await store.store_event("s", "s.a", 1, _message(1))
    with caplog.at_level(logging.WARNING, logger="mcpkit.redis"):
        await store.store_event("s", "s.a", 2, _message(2, 2000))
    assert "over the session's bound of 1000 bytes" in caplog.text
    assert [s for s, _ in await store.events_after("s", "s.a", 0) or []] == [1]
    # The next event leaves a hole at 2: resuming from 1 is refused, from 2 it is whole.
    await store.store_event("s", "s.a", 3, _message(3))
    assert await store.events_after("s", "s.a", 1) is None
    assert [s for s, _ in await store.events_after("s", "s.a", 2) or []] == [3]


async def test_every_key_has_the_session_ttl_is_renewed_and_goes_with_the_session(
    store: RedisEventStore, db: Redis
) -> None:
    store.ttl = 30
    for seq in range(1, 4):
        await store.store_event("s", f"s.{seq}", 1, _message(seq))
    keys = await _keys(db, store)
    assert len(keys) == 3 + 3  # three streams, the index, the order, the byte count
    assert all(0 < t <= 30 for t in await _ttls(db, keys))
    # Renewed while the session is in use: every key, the streams listed in the index too.
    for k in keys:
        await db.expire(k, 5)
    store.ttl = 40
    pipe = store.backend.client.pipeline(transaction=False)
    store.renew_in(pipe, ["s"])
    await pipe.execute()
    assert all(30 < t <= 40 for t in await _ttls(db, keys))
    # Forgotten with the session: nothing of it is left.
    await store.forget_session("s")
    assert await _keys(db, store) == []
    assert await store.events_after("s", "s.1", 0) is None


async def test_ten_one_megabyte_events_keep_the_default_bound_in_redis_memory(
    store: RedisEventStore, db: Redis
) -> None:
    assert store.max_bytes_per_session == MAX_SESSION_EVENT_BYTES == 2 * MiB
    big = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "x" * 10**6}]},
    }
    before = await _dataset(db)
    for n in range(10):
        await store.store_event("s", f"s.{n}", 1, big)
    keys = await _keys(db, store)
    held = 0
    for k in keys:
        held += await db.memory_usage(k) or 0
    grown = await _dataset(db) - before
    # Two of the ten kept (the two newest): their keys take a quarter more than the bound
    # at most (Redis's allocator rounds a megabyte up), and Redis's data (its own tables
    # and caches that grew meanwhile too) less than twice the bound, where the ten took 10.
    kept = [n for n in range(10) if await store.events_after("s", f"s.{n}", 0)]
    assert kept == [8, 9]
    assert held <= 1.25 * MAX_SESSION_EVENT_BYTES, held
    assert grown < 2 * MAX_SESSION_EVENT_BYTES, grown
    await store.forget_session("s")
    assert await _keys(db, store) == []


async def test_a_stream_keeps_its_newest_thousand_events(store: RedisEventStore) -> None:
    assert store.backend.max_events_per_stream == 1000  # the default, as deploy.md has it
    for seq in range(1, 1002):
        await store.store_event("s", "s.a", seq, _message(seq))
    after_first = await store.events_after("s", "s.a", 1)
    assert [s for s, _ in after_first or []] == list(range(2, 1002))
    # Event 1 went: from the start, the stream has a hole, and is refused.
    assert await store.events_after("s", "s.a", 0) is None
