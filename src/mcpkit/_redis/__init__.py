"""Shared state for many workers, in Redis (or Valkey): sessions, events, tasks, routing."""

from ._backend import RedisBackend
from ._events import RedisEventStore
from ._sessions import RedisSessionRegistry
from ._tasks import RedisTaskStore

__all__ = [
    "RedisBackend",
    "RedisEventStore",
    "RedisSessionRegistry",
    "RedisTaskStore",
]
