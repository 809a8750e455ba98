"""The bound on the sessions a Redis keeps, across every worker sharing it.

Each worker bounds its own replicas (the app's ``max_sessions``), and each session bounds
what it keeps (its events: ``RedisEventStore.max_bytes_per_session``); this bounds how many
sessions Redis holds for the whole deployment (``RedisBackend(max_shared_sessions=...)``), so what
Redis keeps is at most about ``max_shared_sessions`` times what one session may keep.

The sessions are indexed in one sorted set (``<prefix>sessions``), scored by when each was
last in use (wall-clock seconds, comparable between workers): set when a session is made,
renewed with the session's record by the worker using it (``RedisSessionRegistry.renew``,
every ``renew_every`` seconds), removed when it ends. A new session past the bound ends the
least recently used one, if that one was idle for :attr:`SessionBound.idle_for` seconds
(two renewals: a session in use is renewed within one), as a worker's own ``max_sessions``
lets its least recently active replica go; when every session was in use lately, the new
one is refused: 503, the client may retry. One script decides it, atomically: workers
making sessions at once never overshoot the bound.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._exceptions import BackendUnavailable

if TYPE_CHECKING:
    from ._bus import Bus

logger = logging.getLogger("mcpkit.redis")

#: Sessions one Redis keeps for a deployment, by default (the default ``max_sessions`` of
#: one worker: a deployment keeps what one process would).
MAX_SESSIONS = 10_000

# Admit session ARGV[1] into the index KEYS[1] at time ARGV[2] under bound ARGV[3], ending
# the least recently used sessions idle since before ARGV[4] to make room (ARGV[5]: the key
# prefix of session records, ARGV[6]: that of the subscriptions index; ARGV[7]: the TTL
# of the sessions, the index's too: renewed with any session, it outlives them). Returns {1, count,
# oldest score, ended sid, its record, ...} admitted, or {0, count, oldest score} refused.
_ADMIT = """
local index = KEYS[1]
local sid, now, most = ARGV[1], ARGV[2], tonumber(ARGV[3])
local out = {}
if not redis.call('ZSCORE', index, sid) then
  local n = redis.call('ZCARD', index)
  while n >= most do
    local oldest = redis.call('ZRANGE', index, 0, 0, 'WITHSCORES')
    if #oldest == 0 then break end
    local record = ARGV[5] .. oldest[1]
    local raw = redis.call('GET', record)
    if raw and tonumber(oldest[2]) > tonumber(ARGV[4]) then
      return {0, n, oldest[2]}
    end
    redis.call('ZREM', index, oldest[1])
    n = n - 1
    if raw then
      for _, uri in ipairs(redis.call('SMEMBERS', record .. ':subs')) do
        redis.call('SREM', ARGV[6] .. uri, oldest[1])
      end
      redis.call('DEL', record, record .. ':get', record .. ':bl', record .. ':subs')
      table.insert(out, oldest[1])
      table.insert(out, raw)
    end
  end
end
redis.call('ZADD', index, now, sid)
redis.call('EXPIRE', index, ARGV[7])
local first = redis.call('ZRANGE', index, 0, 0, 'WITHSCORES')
return {1, redis.call('ZCARD', index), first[2] or now, unpack(out)}
"""


# End session ARGV[1] whose record is KEYS[1]: the record, its GET stream's holder, its
# backlog, its subscriptions and their entries in the subscribers' index (ARGV[2]: its key
# prefix), read from Redis (a replica's view of them may lag); as _ADMIT ends one.
_END = """
for _, uri in ipairs(redis.call('SMEMBERS', KEYS[1] .. ':subs')) do
  redis.call('SREM', ARGV[2] .. uri, ARGV[1])
end
redis.call('DEL', KEYS[1], KEYS[1] .. ':get', KEYS[1] .. ':bl', KEYS[1] .. ':subs')
"""


class SessionBound:
    """The bound of a :class:`~mcpkit.RedisBackend` on the sessions Redis keeps (module docs).

    Args:
        backend: the Redis.
        most: the bound (``RedisBackend(max_shared_sessions=...)``).
        idle_for: seconds a session must have been idle to be ended for a new one.
        ttl: the sessions' TTL in seconds (the index lives as long as the last renewed).
        wall: the wall clock, in seconds (tests move it); comparable between workers.
    """

    def __init__(
        self,
        backend: Bus,
        most: int,
        idle_for: Callable[[], float],
        ttl: Callable[[], int],
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.backend = backend
        self.most = most
        self.idle_for = idle_for
        self.ttl = ttl
        self.wall = wall
        # When the least recently used session was last in use, while the bound is reached
        # (None: there is room, as far as this worker knows).
        self._full_since: float | None = None

    @property
    def index(self) -> str:
        """The key of the index of sessions."""
        return self.backend.key("sessions")

    def room(self) -> bool:
        """Whether a new session may be made, as far as this worker knows without asking
        Redis (what it learnt at its last admission or :meth:`look`)."""
        oldest = self._full_since
        return oldest is None or oldest <= self.wall() - self.idle_for()

    def _learn(self, count: Any, oldest: Any) -> None:
        full = int(count) >= self.most
        self._full_since = float(oldest) if full and oldest is not None else None

    async def admit(self, sid: str) -> list[tuple[str, bytes]]:
        """Count session ``sid`` in; returns the sessions ended to make room for it, each
        as its id and record (what else they keep goes with them: the caller's part).
        Raises :class:`~mcpkit.BackendUnavailable` (answered 503) when the bound is
        reached and no session was idle long enough to end."""
        b = self.backend
        now = self.wall()
        async with b.guard("count session"):
            found = await b.client.eval(
                _ADMIT,
                1,
                self.index,
                sid,
                repr(now),
                self.most,
                repr(now - self.idle_for()),
                b.key("s", ""),
                b.key("sub", ""),
                self.ttl(),
            )
        self._learn(found[1], found[2])
        if not int(found[0]):
            raise BackendUnavailable(
                f"too many sessions in {b.where}: {self.most}, the deployment's bound "
                "(RedisBackend max_shared_sessions), each in use lately; retry later"
            )
        rest = found[3:]
        ended = [(_text(rest[i]), _bytes(rest[i + 1])) for i in range(0, len(rest) - 1, 2)]
        for sid_ended, _ in ended:
            logger.info(
                "session %s… ended to make room (max_shared_sessions=%d)", sid_ended[:6], self.most
            )
        return ended

    async def look(self) -> None:
        """Learn from Redis whether the bound is reached (the registry's reaper does, every
        second or so), so new sessions are refused before their handshake runs."""
        b = self.backend
        async with b.guard("count sessions"):
            pipe = b.client.pipeline(transaction=False)
            pipe.zcard(self.index)
            pipe.zrange(self.index, 0, 0, withscores=True)
            count, first = await pipe.execute()
        self._learn(count, first[0][1] if first else None)

    def touch_in(self, pipe: Any, sids: list[str]) -> None:
        """Add to ``pipe`` what marks ``sids`` as in use now (existing entries only)."""
        if sids:
            now = self.wall()
            pipe.zadd(self.index, dict.fromkeys(sids, now), xx=True)
            pipe.expire(self.index, self.ttl())

    def end_in(self, pipe: Any, sid: str) -> None:
        """Add to ``pipe`` what ends session ``sid`` in Redis (its events aside) and takes
        it out of the index."""
        b = self.backend
        pipe.eval(_END, 1, b.key("s", sid), sid, b.key("sub", ""))
        pipe.zrem(self.index, sid)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


__all__ = ["MAX_SESSIONS", "SessionBound"]
