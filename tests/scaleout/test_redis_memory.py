"""Redis cleans up after the sessions: what issue 30 measured, over three real workers behind
the strict round-robin proxy and a real redis-server.

Three sessions each make ten calls answering 1 MB (the answers are SSE events kept for
resumption). Without bounds this took Redis from 1 to 32 MiB, and after the sessions'
idle timeout they answered 404 while their 30 event streams stayed for a day. Now a session
keeps at most ``MAX_SESSION_EVENT_BYTES`` of events (the oldest dropped first; resuming
from a dropped event is refused, not replayed with a hole), a DELETE takes its events with
it at once, and an expired session's events expire with it: the test waits for Redis's own
expiry notifications (bounded), never for a fixed time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import orjson
import pytest
import redis as redis_py
from tests.scaleout._cluster import Cluster, RedisServer, cluster
from tests.scaleout._keyspace import notify_expiry, wait_expired
from tests.scaleout._wire import headers, initialize, sse_messages

from mcpkit._redis._events import MAX_SESSION_EVENT_BYTES

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(180)]

#: Only HTTP to the workers, and the blocking Redis client in a thread: trio too.
BOTH_BACKENDS = True

BLOBS = Path(__file__).with_name("_blobs.py")
IDLE = 2  # the workers' session_idle_timeout, seconds
MB = 1_000_000


@pytest.fixture
def blobs(redis: RedisServer, tmp_path: Path) -> Iterator[Cluster]:
    with cluster(redis.url, tmp_path, target=BLOBS, script=True, extra=[str(IDLE)]) as c:
        yield c


@pytest.fixture
def db(redis: RedisServer) -> Iterator[redis_py.Redis]:
    client = redis_py.Redis(port=redis.port)
    try:
        yield client
    finally:
        client.close()


def _dataset(db: redis_py.Redis) -> int:
    """Bytes of Redis's memory holding data (its clients' buffers and its own aside)."""
    return int(db.info("memory")["used_memory_dataset"])


def _event_keys(db: redis_py.Redis, key: str | None = None) -> list[bytes]:
    """The event keys of the session whose key is ``key`` (of every session: None)."""
    if key is None:
        return sorted(db.keys("mcpkit:ev*"))
    names = db.keys(f"mcpkit:ev:{key}.*")
    names += [n for n in (f"mcpkit:{k}:{key}" for k in ("evs", "evq", "evb")) if db.exists(n)]
    return sorted(n if isinstance(n, bytes) else n.encode() for n in names)


def _held(db: redis_py.Redis, keys: list[bytes]) -> int:
    return sum(db.memory_usage(k) or 0 for k in keys)


async def _blob(http: httpx2.AsyncClient, url: str, sid: str, n: int) -> list[str]:
    """Call ``blob`` (1 MB) on session ``sid``: the ids of its events, priming first."""
    body = {"jsonrpc": "2.0", "id": n, "method": "tools/call"}
    body["params"] = {"name": "blob", "arguments": {"size": MB}}
    r = await http.post(url, headers=headers(sid), content=orjson.dumps(body))
    assert r.status_code == 200, r.text
    messages = sse_messages(r.content)
    assert messages[-1][1]["result"]["content"][0]["text"] == "x" * MB
    priming = r.content.split(b"id:", 1)[1].split(b"\n", 1)[0].strip().decode()
    return [priming, *(eid for eid, _ in messages if eid is not None)]


async def test_events_are_bounded_per_session_and_leave_with_their_session(
    blobs: Cluster, db: redis_py.Redis, redis: RedisServer
) -> None:
    notify_expiry(redis.port)
    before = _dataset(db)
    async with httpx2.AsyncClient(timeout=60) as http:
        with anyio.fail_after(60):
            sids = [await initialize(http, blobs.url) for _ in range(3)]
            calls = {sid: [await _blob(http, blobs.url, sid, n) for n in range(10)] for sid in sids}
        keys = {sid: calls[sid][0][0].split(".", 1)[0] for sid in sids}

        # Bounded: each session holds at most the bound (a quarter more in Redis's memory:
        # its allocator rounds a megabyte up); the three hold 30 MB no more.
        for sid in sids:
            held = _held(db, _event_keys(db, keys[sid]))
            assert 0 < held <= 1.25 * MAX_SESSION_EVENT_BYTES, held
        grown = _dataset(db) - before
        assert grown <= 3 * 1.25 * MAX_SESSION_EVENT_BYTES + 256 * 1024, grown

        # Resuming the newest call replays it whole; the oldest one's events were dropped:
        # its resumption is refused (unknown Last-Event-ID), never replayed with a hole.
        first, last = calls[sids[0]][0][0], calls[sids[0]][-1][0]
        with anyio.fail_after(30):
            again = await http.get(blobs.url, headers=headers(sids[0], **{"last-event-id": last}))
            gone = await http.get(blobs.url, headers=headers(sids[0], **{"last-event-id": first}))
        assert again.status_code == 200
        assert sse_messages(again.content)[-1][1]["result"]["content"][0]["text"] == "x" * MB
        assert gone.status_code == 400 and "Last-Event-ID" in gone.json()["error"]["message"]

        # DELETE: the session's events go at once.
        deleted = _event_keys(db, keys[sids[0]])
        assert (await http.delete(blobs.url, headers=headers(sids[0]))).status_code == 200
        assert db.exists(*deleted) == 0

        # Expiry: every event key of the others has the session's TTL (a renewal's worth
        # more at most), and is gone once Redis expired them; nothing asks the workers.
        left = {k for sid in sids[1:] for k in _event_keys(db, keys[sid])}
        # The index of sessions goes with them: its TTL is renewed with theirs.
        records = {f"mcpkit:s:{sid}".encode() for sid in sids[1:]} | {b"mcpkit:sessions"}
        assert all(0 < db.pttl(k) <= (IDLE + 1) * 1000 for k in left)
        with anyio.fail_after(60):
            unexpired = await anyio.to_thread.run_sync(
                wait_expired, redis.port, left | records, 30.0
            )
        assert unexpired == set()
        assert _event_keys(db) == []
        # Nothing of the sessions is left: the workers' liveness and the state keys only.
        assert {k.split(b":")[1] for k in db.keys("mcpkit:*")} <= {b"worker", b"statekey"}
        # Redis's memory is back where it was (give or take its own tables and buffers;
        # it stayed 30 MiB up before).
        assert _dataset(db) - before < 1024 * 1024
        ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        for sid in sids[1:]:
            r = await http.post(blobs.url, headers=headers(sid), content=ping)
            assert r.status_code == 404
