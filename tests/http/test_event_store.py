"""The in-memory event store stays bounded and replays per stream."""

from __future__ import annotations

import pytest

from mcpkit._http import InMemoryEventStore

pytestmark = pytest.mark.anyio


async def test_replay_is_per_stream_and_ordered() -> None:
    store = InMemoryEventStore()
    for i in range(1, 6):
        await store.store_event("s1", "a", i, {"n": i})
        await store.store_event("s1", "b", i, {"m": i})
    assert await store.events_after("s1", "a", 3) == [(4, {"n": 4}), (5, {"n": 5})]
    assert await store.events_after("s1", "c", 0) is None
    assert await store.events_after("s2", "a", 0) is None
    await store.forget_session("s1")
    assert await store.events_after("s1", "a", 0) is None
    assert store.event_count() == 0


async def test_every_bound_holds() -> None:
    store = InMemoryEventStore(
        max_events_per_stream=3, max_streams_per_session=2, max_sessions=3, max_events=10
    )
    for i in range(10):
        await store.store_event("s", "a", i, {})
    assert [s for s, _ in await store.events_after("s", "a", -1) or []] == [7, 8, 9]
    await store.store_event("s", "b", 0, {})
    await store.store_event("s", "c", 0, {})  # a third stream: the least recently written goes
    assert await store.events_after("s", "a", -1) is None
    for k in range(5):
        for i in range(3):
            await store.store_event(f"t{k}", "x", i, {})
    assert store.session_count() <= 3
    assert store.event_count() <= 10
    counted = 0
    for k in range(5):
        got = await store.events_after(f"t{k}", "x", -1)
        counted += len(got or [])
    assert counted == store.event_count() - len(await store.events_after("s", "b", -1) or []) - len(
        await store.events_after("s", "c", -1) or []
    )
