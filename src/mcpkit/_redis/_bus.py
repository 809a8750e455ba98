"""What the parts of the Redis backend need of it: the interface they are written against.

:class:`~mcpkit.RedisBackend` (``_backend``) makes the parts (event store, task store,
session registry, registration log, ``requestState`` keys) and hands each itself; the parts
name it through :class:`Bus` only, so no part imports the module that makes it (no import
circle inside the package). This module imports nothing else of the package.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from redis.asyncio import Redis

#: A bus message: a dict with its kind under ``"t"``.
BusMessage = dict[str, Any]
BusHandler = Callable[[BusMessage], Awaitable[None]]


class Bus(Protocol):
    """One worker's Redis: its connection pool, identity, liveness view and message bus
    (implemented by :class:`~mcpkit.RedisBackend`)."""

    #: This worker's id (in its channel, stream ids and server-to-client request ids).
    worker_id: str
    #: Seconds any one Redis call may take before it counts as failed.
    timeout: float
    #: Seconds between two refreshes of this worker's liveness key.
    heartbeat: float
    max_events_per_stream: int
    session_ttl: float | None
    #: Counts the bus's subscriptions, and whether it is subscribed now.
    bus_epoch: int
    bus_up: bool

    @property
    def where(self) -> str: ...

    @property
    def client(self) -> Redis: ...

    def key(self, *parts: str) -> str: ...

    def guard(self, what: str) -> AbstractAsyncContextManager[None]: ...

    def on(self, kind: str, handler: BusHandler) -> None: ...

    async def send_to(self, worker: str, message: BusMessage) -> bool: ...

    async def broadcast(self, message: BusMessage) -> None: ...

    async def alive(self, worker: str) -> bool: ...

    def judges_liveness(self) -> bool: ...


__all__ = ["Bus", "BusHandler", "BusMessage"]
