"""SSE events in Redis: a stream resumed on any worker replays what another worker sent.

Each stream is one sorted set (score: the event's sequence), bounded to the backend's
``max_events_per_stream``; a set per session names its streams. What a session keeps is
bounded in bytes too (:data:`MAX_SESSION_EVENT_BYTES` by default): a list of the session's
events in the order they were written and a running total of their sizes; past the bound
the oldest events of the session go first, whichever stream they belong to. Storing an
event is one round trip (one transaction: the event added, then a script accounts for it,
drops the oldest past the bound and renews the keys).

The events live as long as their session: every key has the session's TTL, renewed when
an event is stored and, by the session registry, while the session is in use (an attached
client, a recent request); terminating the session deletes them at once, and a worker that
finds its session expired deletes them too. A stream that lost an event after the one a
client names cannot be resumed from there: it is answered as unknown (never replayed with
a hole in it).
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING, Any

import orjson

from .._exceptions import BackendUnavailable
from .._transports._base import Message

if TYPE_CHECKING:
    from ._bus import Bus


logger = logging.getLogger("mcpkit.redis")

#: Bytes of events one session keeps for resumption, by default (oldest dropped first).
MAX_SESSION_EVENT_BYTES = 2 * 1024 * 1024
#: What one event costs beyond its JSON, counted against the session's bound: about what
#: Redis 7 spends on its entries in the sorted set and the list (measured: 130 to 260
#: bytes for small events).
EVENT_OVERHEAD = 128

# Add one event to its stream and account for it, in one script (atomic, one command: no
# transaction around it). KEYS: the stream, the session's streams, its order, its byte
# count. ARGV: stream id, sequence, cost, TTL (s), most events per stream, most bytes per
# session, the key prefix of streams, the event (its member). Returns how many events it
# dropped.
_ACCOUNT = """
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[8])
local n = redis.call('ZCARD', KEYS[1])
local per = tonumber(ARGV[5])
if n > per then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - per - 1) end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. ARGV[3])
local total = redis.call('INCRBY', KEYS[4], ARGV[3])
local most = tonumber(ARGV[6])
local dropped = 0
while total > most do
  local item = redis.call('LPOP', KEYS[3])
  if not item then
    redis.call('SET', KEYS[4], 0)
    break
  end
  local stream, seq, size = string.match(item, '^(%S+) (%S+) (%S+)$')
  local key = ARGV[7] .. stream
  redis.call('ZREMRANGEBYSCORE', key, seq, seq)
  if redis.call('EXISTS', key) == 0 then redis.call('SREM', KEYS[2], stream) end
  total = redis.call('DECRBY', KEYS[4], size)
  dropped = dropped + 1
end
for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, ARGV[4]) end
return dropped
"""

# Renew (ARGV[1] = TTL) or, when ARGV[1] is 0, delete every key of a session's events.
# KEYS: the session's streams, its order, its byte count; ARGV[2]: the key prefix of streams.
_SESSION = """
local streams = redis.call('SMEMBERS', KEYS[1])
local ttl = tonumber(ARGV[1])
for _, stream in ipairs(streams) do
  if ttl > 0 then
    redis.call('EXPIRE', ARGV[2] .. stream, ttl)
  else
    redis.call('DEL', ARGV[2] .. stream)
  end
end
for _, key in ipairs(KEYS) do
  if ttl > 0 then redis.call('EXPIRE', key, ttl) else redis.call('DEL', key) end
end
return #streams
"""

_ACCOUNT_SHA = hashlib.sha1(_ACCOUNT.encode(), usedforsecurity=False).hexdigest()


class RedisEventStore:
    """The :class:`~mcpkit.EventStore` of a :class:`~mcpkit.RedisBackend`.

    Stream ids are unique across workers (they carry the worker's id), so a stream's key
    is its id; ``session_key`` groups them for :meth:`forget_session`.

    Args:
        backend: the Redis the events live in.
        ttl: seconds a session's events are kept after its last activity; the session
            registry sets it to its sessions' TTL (``session_idle_timeout``), so events go
            with their session.
        max_bytes_per_session: bytes of events a session keeps (each event counts its JSON
            and :data:`EVENT_OVERHEAD`); past it, its oldest events are dropped. An event
            alone over the bound is sent but not kept.

    The backend makes one with the defaults; to change the bound, give the app your own::

        backend = RedisBackend(url)
        events = RedisEventStore(backend, max_bytes_per_session=8 * 1024 * 1024)
        app = create_http_app(server, backend=backend, event_store=events)
    """

    def __init__(
        self,
        backend: Bus,
        *,
        ttl: float = 86400.0,
        max_bytes_per_session: int = MAX_SESSION_EVENT_BYTES,
    ) -> None:
        self.backend = backend
        self.ttl = ttl
        self.max_bytes_per_session = max_bytes_per_session

    def _stream(self, stream_id: str) -> str:
        return self.backend.key("ev", stream_id)

    def session_keys(self, session_key: str) -> list[str]:
        """The Redis keys indexing a session's events: its streams, their order, their
        byte count (each stream is a key of its own, named in the first)."""
        b = self.backend
        return [b.key("evs", session_key), b.key("evq", session_key), b.key("evb", session_key)]

    async def store_event(
        self, session_key: str, stream_id: str, seq: int, message: Message
    ) -> None:
        b = self.backend
        # The member carries its sequence: two equal messages stay two events.
        member = b"%d:" % seq + orjson.dumps(message)
        cost = len(member) + EVENT_OVERHEAD
        if cost > self.max_bytes_per_session:
            logger.warning(
                "event %s_%d (%d bytes) not kept for resumption: over the session's bound "
                "of %d bytes",
                stream_id,
                seq,
                len(member),
                self.max_bytes_per_session,
            )
            return
        keys = [self._stream(stream_id), *self.session_keys(session_key)]
        args = (
            stream_id,
            seq,
            cost,
            max(1, int(self.ttl)),
            b.max_events_per_stream,
            self.max_bytes_per_session,
            b.key("ev", ""),
        )
        try:
            async with b.guard("store event"):
                await _store(b, keys, member, args)
        except BackendUnavailable as e:
            # The live connection still gets the event; only its replay is lost.
            logger.warning("event %s_%d not kept for resumption: %s", stream_id, seq, e)

    async def events_after(
        self, session_key: str, stream_id: str, seq: int
    ) -> list[tuple[int, Message]] | None:
        b = self.backend
        key = self._stream(stream_id)
        async with b.guard("read events"):
            pipe = b.client.pipeline(transaction=True)
            pipe.sismember(self.session_keys(session_key)[0], stream_id)
            pipe.exists(key)
            pipe.zrangebyscore(key, f"({seq}", "+inf")
            known, exists, raw = await pipe.execute()
        if not known or not exists:
            return None  # never stored, or every event of it dropped or expired
        out: list[tuple[int, Message]] = []
        for member in raw:
            head, _, body = bytes(member).partition(b":")
            out.append((int(head), orjson.loads(body)))
        if out and out[0][0] > max(seq, 0) + 1:
            # Events after the one named were dropped (the bounds, or a store that failed):
            # replaying the rest would leave a hole the client cannot see.
            return None
        return out

    async def forget_session(self, session_key: str) -> None:
        b = self.backend
        keys = self.session_keys(session_key)
        async with b.guard("forget events"):
            await b.client.eval(_SESSION, len(keys), *keys, 0, b.key("ev", ""))

    def renew_in(self, pipe: Any, session_keys: list[str]) -> None:
        """Add to ``pipe`` (a redis-py pipeline) what gives every key of these sessions'
        events :attr:`ttl` again: their sessions are in use."""
        b = self.backend
        ttl = max(1, int(self.ttl))
        for session_key in session_keys:
            keys = self.session_keys(session_key)
            pipe.eval(_SESSION, len(keys), *keys, ttl, b.key("ev", ""))


async def _store(b: Bus, keys: list[str], member: bytes, args: tuple[Any, ...]) -> None:
    # One round trip, one command: the script called by its digest (sent whole once per
    # Redis, and again after a restart flushed it).
    from redis.exceptions import NoScriptError

    try:
        await b.client.evalsha(_ACCOUNT_SHA, len(keys), *keys, *args, member)
    except NoScriptError:
        await b.client.eval(_ACCOUNT, len(keys), *keys, *args, member)


__all__ = ["EVENT_OVERHEAD", "MAX_SESSION_EVENT_BYTES", "RedisEventStore"]
