"""When a worker may take a missing liveness key for its owner's death (issue 43, W6), with an
injected clock and a real redis-server: only after its own heartbeats reached Redis unbroken
for three beats, the last one lately. A break (a beat that failed, or beats too far apart: a
frozen Redis, a stalled loop) starts the count again, and until it can judge again the
worker counts every other worker alive, so it never fails their tasks or drops their streams.

The beats are the backend's own bookkeeping of a heartbeat Redis answered (``_beaten``) and
of one it did not (``_reachable_since`` cleared, as the heartbeat loop does); the clock
stands in for the seconds between them.
"""

from __future__ import annotations

import pytest
from redis.asyncio import Redis
from tests.scaleout._cluster import RedisServer

from mcpkit import RedisBackend

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


class Clock:
    def __init__(self) -> None:
        self.now = 5_000.0

    def __call__(self) -> float:
        return self.now


def _reader(redis: RedisServer, clock: Clock) -> RedisBackend:
    backend = RedisBackend(redis.url, prefix="judge:", heartbeat=1.0)
    backend.clock = clock
    return backend


async def test_a_reader_judges_only_after_three_unbroken_beats(
    redis: RedisServer, db: Redis
) -> None:
    clock = Clock()
    reader = _reader(redis, clock)
    await db.set("judge:worker:alive-one", b"1")
    try:
        # Never beaten yet: a missing key says nothing.
        assert not reader.judges_liveness()
        assert await reader.alive("gone-one")
        reader._beaten()  # beats at 0, 1 and 2 s: not yet unbroken for the expiry (3 s)
        for _ in range(2):
            clock.now += 1.0
            reader._beaten()
        assert not reader.judges_liveness()
        assert await reader.alive("gone-one")
        clock.now += 1.0  # 3 s since the first, the last 1 s ago
        assert reader.judges_liveness()
        assert not await reader.alive("gone-one")  # now its missing key is its death
        assert await reader.alive("alive-one")  # a key present is always life
        assert await reader.alive(reader.worker_id)  # never its own
    finally:
        await reader.client.aclose()


async def test_a_break_in_the_beats_starts_the_count_again(redis: RedisServer, db: Redis) -> None:
    clock = Clock()
    reader = _reader(redis, clock)
    try:
        for _ in range(4):
            reader._beaten()
            clock.now += 1.0
        clock.now -= 1.0
        assert reader.judges_liveness()

        # No beat for more than two heartbeats (Redis frozen, the loop stalled): the last
        # answer is too old to judge by, and the next one starts the count again.
        clock.now += 2.5
        assert not reader.judges_liveness()
        assert await reader.alive("gone-two")
        reader._beaten()
        assert not reader.judges_liveness()
        for _ in range(3):
            clock.now += 1.0
            reader._beaten()
        assert reader.judges_liveness()
        assert not await reader.alive("gone-two")

        # A heartbeat Redis refused (what the heartbeat loop records): no judgement until
        # three more unbroken beats.
        reader._reachable_since = None
        assert not reader.judges_liveness()
        assert await reader.alive("gone-two")
        for _ in range(3):
            clock.now += 1.0
            reader._beaten()
        assert not reader.judges_liveness()
        clock.now += 1.0
        reader._beaten()
        assert reader.judges_liveness()
    finally:
        await reader.client.aclose()
