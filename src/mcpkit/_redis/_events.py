"""SSE events in Redis: a stream resumed on any worker replays what another worker sent.

Each stream is one sorted set (score: the event's sequence), bounded to the backend's
``max_events_per_stream`` and expiring with its session; a set per session names its
streams so ending the session forgets them all. Storing an event is one round trip.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import orjson

from .._exceptions import BackendUnavailable
from .._transports._base import Message

if TYPE_CHECKING:
    from ._backend import RedisBackend


logger = logging.getLogger("mcpkit.redis")


class RedisEventStore:
    """The :class:`~mcpkit.EventStore` of a :class:`~mcpkit.RedisBackend`.

    Stream ids are unique across workers (they carry the worker's id), so a stream's key
    is its id; ``session_key`` groups them for :meth:`forget_session`.
    """

    def __init__(self, backend: RedisBackend, *, ttl: float = 86400.0) -> None:
        self.backend = backend
        #: Seconds a stream is kept after its last event (bounded by its session's TTL
        #: in practice: a session that ends forgets its streams).
        self.ttl = ttl

    def _stream(self, stream_id: str) -> str:
        return self.backend.key("ev", stream_id)

    def _streams_of(self, session_key: str) -> str:
        return self.backend.key("evs", session_key)

    async def store_event(
        self, session_key: str, stream_id: str, seq: int, message: Message
    ) -> None:
        b = self.backend
        key = self._stream(stream_id)
        ttl = int(self.ttl)
        try:
            async with b.guard("store event"):
                pipe = b.client.pipeline(transaction=False)
                # The member carries its sequence: two equal messages stay two events.
                pipe.zadd(key, {b"%d:" % seq + orjson.dumps(message): seq})
                pipe.zremrangebyrank(key, 0, -1 - b.max_events_per_stream)
                pipe.expire(key, ttl)
                pipe.sadd(self._streams_of(session_key), stream_id)
                pipe.expire(self._streams_of(session_key), ttl)
                await pipe.execute()
        except BackendUnavailable as e:
            # The live connection still gets the event; only its replay is lost.
            logger.warning("event %s_%d not kept for resumption: %s", stream_id, seq, e)

    async def events_after(
        self, session_key: str, stream_id: str, seq: int
    ) -> list[tuple[int, Message]] | None:
        b = self.backend
        key = self._stream(stream_id)
        async with b.guard("read events"):
            pipe = b.client.pipeline(transaction=False)
            pipe.sismember(self._streams_of(session_key), stream_id)
            pipe.zrangebyscore(key, f"({seq}", "+inf")
            known, raw = await pipe.execute()
        if not known:
            return None
        out: list[tuple[int, Message]] = []
        for member in raw:
            head, _, body = bytes(member).partition(b":")
            out.append((int(head), orjson.loads(body)))
        return out

    async def forget_session(self, session_key: str) -> None:
        b = self.backend
        async with b.guard("forget events"):
            streams = await b.client.smembers(self._streams_of(session_key))
            keys = [self._stream(s.decode() if isinstance(s, bytes) else s) for s in streams]
            await b.client.delete(self._streams_of(session_key), *keys)


__all__ = ["RedisEventStore"]
