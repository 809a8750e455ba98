"""The Redis backend: one connection pool, this worker's identity and heartbeat, and the bus.

Every worker of a deployment opens one :class:`RedisBackend` on the same Redis (or Valkey).
It names the worker (a random id), keeps the worker's liveness key fresh (what tells the
others that the worker died: its tasks fail, its streams end), and carries messages between
workers over Redis pub/sub: each worker listens on its own channel and on one broadcast
channel, so a message reaches exactly the worker that needs it (responses, stream events)
or, for the rare ones only (session ended, cancellation), every worker.

redis-py's asyncio client runs on asyncio only: a worker serving with a Redis backend runs
on asyncio (uvicorn's default). Every Redis operation is bounded as a whole by the
backend's ``timeout``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import time
import warnings
import weakref
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import anyio
import orjson

from .._backend import asyncio_loop
from .._exceptions import BackendUnavailable
from ._bound import MAX_SESSIONS
from ._bus import BusHandler, BusMessage
from ._statekeys import RedisStateKeys

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from .._app._options import HTTPAppOptions
    from .._app._registry import SessionFactory
    from .._http._events import EventStore
    from .._http._security import SessionOwnership
    from ._changes import RedisRegistrationLog
    from ._events import RedisEventStore
    from ._sessions import RedisSessionRegistry
    from ._tasks import RedisTaskStore

logger = logging.getLogger("mcpkit.redis")


def _redis_errors() -> tuple[type[BaseException], ...]:
    from redis.exceptions import RedisError  # its connection errors and timeouts included

    return (RedisError, OSError, TimeoutError)


def _timeouts() -> tuple[type[BaseException], ...]:
    from redis.exceptions import TimeoutError as RedisTimeout

    return (RedisTimeout, TimeoutError)


def redis_where(url: str) -> str:
    """The Redis instance ``url`` names, for people: ``Redis host:port/db`` (``(TLS)`` for
    ``rediss://``, the socket's path for ``unix://``); never a user name or password."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    if parts.scheme == "unix":
        return f"Redis {parts.path} (db {(query.get('db') or ['0'])[0]})"
    db = (query.get("db") or [""])[0] or parts.path.strip("/") or "0"
    try:
        port = str(parts.port or 6379)
    except ValueError:  # not a number: redis-py refuses the URL, and says why
        port = "?"
    host = parts.hostname or "localhost"
    shown = f"[{host}]" if ":" in host else host
    tls = " (TLS)" if parts.scheme == "rediss" else ""
    return f"Redis {shown}:{port}/{db}{tls}"


#: Every backend of this process, for :func:`_new_ids_after_fork`.
_BACKENDS: weakref.WeakSet[RedisBackend] = weakref.WeakSet()


def _new_ids_after_fork() -> None:
    """In a process just forked: a worker id of its own for every backend it inherited.

    A pre-forking server imports the app once and forks its workers from that process
    (gunicorn ``--preload``): each worker would otherwise carry the same id, and take the
    others' run-time changes, notifications and routed messages for its own (skipped as
    made here already)."""
    for backend in list(_BACKENDS):
        backend.worker_id = secrets.token_hex(4)


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_new_ids_after_fork)


class RedisBackend:
    """Shared state for many workers, in Redis: sessions, events, tasks, routing.

    Args:
        url: ``redis://[[user]:[password]@]host:port/db`` (``rediss://`` for TLS,
            ``unix:///path``); Valkey works the same.
        prefix: put before every key and channel (several deployments on one Redis).
        timeout: seconds any one Redis call may take before it counts as failed.
        heartbeat: seconds between the refreshes of this worker's liveness key; a worker
            silent for ``3 * heartbeat`` while Redis answered counts as dead (its tasks
            fail, its streams end). A key that expired while Redis was unreachable is no
            such evidence: a worker judges others dead only once its own view of Redis has
            been unbroken for ``3 * heartbeat`` (:meth:`judges_liveness`).
        max_events_per_stream: SSE events kept per stream for resumption.
        session_ttl: seconds an unused session is kept (None: the app's
            ``session_idle_timeout``, or one day when that is None).
        max_shared_sessions: sessions this Redis keeps for the whole deployment (every
            worker's together; ``max_sessions`` of the HTTP app bounds one process's);
            past it a new session ends the least recently used one idle for two renewals
            of the sessions (two minutes by default), or is refused (503) when every one
            was in use lately. What Redis keeps is about ``max_shared_sessions`` times what
            one session may keep (its events: 2 MiB by default). ``max_sessions=``, its
            old name, is deprecated (it warns, and works for one release).
        state_key_rotation: seconds between two keys sealing 2026-07-28 ``requestState``,
            shared by every worker of this Redis (:class:`RedisStateKeys`; unused when the
            server has a key of its own: ``MCPKIT_STATE_KEY``).

    Pass it as ``backend=`` to :func:`mcpkit.create_http_app`, or give
    ``Server.http_app(redis=url)`` / ``mcpkit run --redis URL`` / ``MCPKIT_REDIS_URL``
    the URL and mcpkit makes it.

    Example::

        backend = RedisBackend("redis://127.0.0.1:6379/0")
        app = create_http_app(server, backend=backend)
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "mcpkit:",
        timeout: float = 5.0,
        heartbeat: float = 1.0,
        max_events_per_stream: int = 1000,
        session_ttl: float | None = None,
        max_shared_sessions: int = MAX_SESSIONS,
        state_key_rotation: float = 86400.0,
        max_sessions: int | None = None,
    ) -> None:
        try:
            import redis.asyncio  # noqa: F401
        except ImportError as e:  # the [redis] extra is missing
            raise ImportError(
                "the Redis backend needs redis-py: pip install 'mcpkit[redis]'"
            ) from e
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self.heartbeat = heartbeat
        self.max_events_per_stream = max_events_per_stream
        self.session_ttl = session_ttl
        if max_sessions is not None:
            # One word, one meaning (docs/architecture.md): "max_sessions" bounds one
            # process's sessions everywhere else.
            warnings.warn(
                "RedisBackend(max_sessions=) is deprecated: use max_shared_sessions= (the "
                "sessions of every worker together; max_sessions is one process's bound)",
                DeprecationWarning,
                stacklevel=2,
            )
            max_shared_sessions = max_sessions
        if max_shared_sessions < 1:
            raise ValueError(f"max_shared_sessions must be at least 1, not {max_shared_sessions}")
        self.max_shared_sessions = max_shared_sessions
        #: This worker's id: in its channel, its stream ids and its server-to-client
        #: request ids, so the others know where to send what belongs to it. Made again in
        #: a process forked from this one (:func:`_new_ids_after_fork`).
        self.worker_id = secrets.token_hex(4)
        _BACKENDS.add(self)
        self.errors = _redis_errors()
        self._client: Redis | None = None
        self._client_loop: object = None
        self._handlers: dict[str, BusHandler] = {}
        self._events: RedisEventStore | None = None
        self._tasks: RedisTaskStore | None = None
        self._changes: RedisRegistrationLog | None = None
        # Checks the rotation (at least 60 s) now, not when the app first starts.
        self._state_keys = RedisStateKeys(self, rotation=state_key_rotation)
        self._checked = False
        self._serving = 0
        #: Counts the bus's subscriptions: a message may have been missed when it changed.
        self.bus_epoch = 0
        #: Whether the bus is subscribed now.
        self.bus_up = False
        #: Seconds that only move forward: when this worker's heartbeats succeeded (tests
        #: may set another before serving).
        self.clock: Callable[[], float] = time.monotonic
        # Since when this worker reached Redis without a break (None: not now), and when
        # its last heartbeat was answered (see judges_liveness).
        self._reachable_since: float | None = None
        self._last_beat = -float("inf")

    @property
    def where(self) -> str:
        """The instance, for people (``Redis 10.0.0.5:6379/0``): the startup line, errors.
        Never a password."""
        return redis_where(self.url)

    async def check(self) -> None:
        """Reach Redis once before serving (what an app starting with this backend awaits):
        a ``PING``, the shared ``requestState`` keys read, and the run-time changes of the
        other workers made here (:meth:`registration_log`).

        Raises :class:`BackendUnavailable`, one line naming the instance, when Redis refuses
        (nothing listens, wrong host or password, a URL it cannot use): a worker that cannot
        share anything must not start as if it did. A Redis that accepts the connection but
        does not answer within ``timeout`` is logged, and the worker starts (requests that
        need Redis are answered 503 until it answers). Done once per backend.
        """
        if self._checked:
            return
        try:
            client = self.client
        except ValueError as e:  # redis-py refuses the URL itself
            raise BackendUnavailable(f"cannot use the Redis URL ({e})") from None
        try:
            async with self.guard("start"):
                await client.ping()
                await self.state_keys().refresh()
        except BackendUnavailable as e:
            cause = e.__cause__
            if not isinstance(cause, _timeouts()):
                reason = " ".join(str(cause or e).split()) or type(cause).__name__
                raise BackendUnavailable(f"cannot reach {self.where}: {reason}") from None
            logger.warning("%s did not answer within %g s; serving on", self.where, self.timeout)
        self._checked = True
        if self._changes is not None:
            await self._changes.replay()

    # ------------------------------------------------------------------ connection

    @property
    def client(self) -> Redis:
        """The connection pool (made on first use, on the running event loop)."""
        loop = asyncio_loop()
        if loop is None:
            raise RuntimeError("redis-py's asyncio client runs on asyncio only, not on trio")
        if self._client is None or self._client_loop is not loop:
            from redis.asyncio import Redis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff
            from redis.exceptions import ConnectionError as RedisConnectionError

            self._client = Redis.from_url(
                self.url,
                # No per-read timeout: every operation is bounded as a whole by guard()
                # (a per-read timeout costs a timer on every read, ~20% of a GETEX's
                # client time on this stack).
                socket_timeout=None,
                socket_connect_timeout=self.timeout,
                health_check_interval=30,
                # After a Redis restart every pooled connection is stale: a call that meets
                # one tries once more on a fresh connection rather than failing the request.
                # A timeout is not retried (a wedged Redis must not double the wait).
                retry=Retry(NoBackoff(), 1),
                retry_on_error=[RedisConnectionError],
                retry_on_timeout=False,
            )
            self._client_loop = loop
        return self._client

    def key(self, *parts: str) -> str:
        """The Redis key (or channel) named by ``parts`` under this backend's prefix."""
        return self.prefix + ":".join(parts)

    @contextlib.asynccontextmanager
    async def guard(self, what: str) -> AsyncIterator[None]:
        """Turn a Redis failure (down, timeout, refused) into :class:`BackendUnavailable`,
        and bound the whole operation (a Redis that never answers holds nobody)."""
        try:
            with anyio.fail_after(self.timeout):
                yield
        except self.errors as e:
            raise BackendUnavailable(f"Redis unavailable ({what}): {e}") from e

    # ------------------------------------------------------------------ parts

    def event_store(self) -> EventStore:
        """The shared event store (one per backend)."""
        from ._events import RedisEventStore

        if self._events is None:
            self._events = RedisEventStore(self)
        return self._events

    def task_store(self) -> RedisTaskStore:
        """The shared task store (one per backend)."""
        from ._tasks import RedisTaskStore

        if self._tasks is None:
            self._tasks = RedisTaskStore(self)
        return self._tasks

    def state_keys(self) -> RedisStateKeys:
        """The keys sealing 2026-07-28 ``requestState``, shared by every worker of this
        Redis, rotated every ``state_key_rotation`` seconds (one per backend)."""
        return self._state_keys

    def registration_log(self) -> RedisRegistrationLog:
        """The log carrying the tools, resources and prompts added or removed at run time
        to every worker, and to those starting later (one per backend)."""
        from ._changes import RedisRegistrationLog

        if self._changes is None:
            self._changes = RedisRegistrationLog(self)
        return self._changes

    def registry(
        self,
        server: SessionFactory,
        options: HTTPAppOptions,
        event_store: EventStore | None,
        ownership: SessionOwnership,
    ) -> RedisSessionRegistry:
        """The session registry of an app (see :class:`~mcpkit.lowlevel.SessionBackend`);
        it gives the server this backend's shared state through its hosting interface."""
        from ._sessions import RedisSessionRegistry

        return RedisSessionRegistry(self, server, options, event_store, ownership)

    # ------------------------------------------------------------------ bus

    def on(self, kind: str, handler: BusHandler) -> None:
        """Serve bus messages of ``kind`` with ``handler(message)``."""
        self._handlers[kind] = handler

    async def send_to(self, worker: str, message: BusMessage) -> bool:
        """Publish ``message`` on ``worker``'s channel; False when no such worker listens."""
        async with self.guard("publish"):
            n = await self.client.publish(self.key("w", worker), orjson.dumps(message))
        return bool(n)

    async def broadcast(self, message: BusMessage) -> None:
        """Publish ``message`` to every worker (this one included)."""
        async with self.guard("publish"):
            await self.client.publish(self.key("all"), orjson.dumps(message))

    @property
    def expiry(self) -> float:
        """Seconds a worker's liveness key lives after its last heartbeat."""
        return 3 * self.heartbeat

    def judges_liveness(self) -> bool:
        """Whether a missing liveness key may be taken, now, as its worker's death.

        Only when this worker's own heartbeats have reached Redis without a break for the
        whole :attr:`expiry`, the last one lately: a key that expired while Redis was
        down, frozen or out of reach (from here, and so perhaps from its worker too) says
        nothing of its worker, which renews it within a heartbeat once Redis answers.
        A reader that cannot judge counts every worker alive (its tasks stay ``working``,
        its streams open) until it can."""
        since = self._reachable_since
        now = self.clock()
        return (
            since is not None
            and now - since >= self.expiry
            and now - self._last_beat <= 2 * self.heartbeat
        )

    async def alive(self, worker: str) -> bool:
        """Whether ``worker`` may be alive: it refreshed its liveness key lately, or this
        worker cannot tell yet (:meth:`judges_liveness`)."""
        if worker == self.worker_id or not self.judges_liveness():
            return True
        async with self.guard("liveness"):
            found = bool(await self.client.exists(self.key("worker", worker)))
        return found or not self.judges_liveness()

    async def serve(self) -> None:
        """Listen on the bus and keep this worker's heartbeat, until cancelled.

        Survives Redis restarts: the listener reconnects with a bounded backoff, and the
        heartbeat resumes as soon as Redis answers again.
        """
        self._serving += 1
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._beat)
                tg.start_soon(self.state_keys().keep_fresh)
                if self._changes is not None:
                    tg.start_soon(self._changes.serve)
                await self._listen()
        finally:
            self._serving -= 1
            if self._serving == 0:
                with anyio.CancelScope(shield=True):
                    await self._goodbye()

    async def _goodbye(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        with contextlib.suppress(*self.errors), anyio.move_on_after(self.timeout):
            await client.delete(self.key("worker", self.worker_id))
        with contextlib.suppress(*self.errors), anyio.move_on_after(self.timeout):
            await client.aclose()

    async def _beat(self) -> None:
        key = self.key("worker", self.worker_id)
        ttl_ms = max(1, int(self.expiry * 1000))
        while True:
            try:
                with anyio.fail_after(self.timeout + 1):
                    await self.client.set(key, b"1", px=ttl_ms)
            except Exception as e:  # Redis down or slow: the next beat tries again
                self._reachable_since = None
                logger.warning("Redis heartbeat failed: %s", e)
            else:
                self._beaten()
            await anyio.sleep(self.heartbeat)

    def _beaten(self) -> None:
        # Answered twice heartbeats apart at most: Redis was reachable all along (a longer
        # gap, a beat waiting on a frozen Redis say, starts the count again).
        now = self.clock()
        if self._reachable_since is None or now - self._last_beat > 2 * self.heartbeat:
            self._reachable_since = now
        self._last_beat = now

    async def _listen(self) -> None:
        delay = 0.1
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                with anyio.fail_after(self.timeout):
                    await pubsub.subscribe(self.key("w", self.worker_id), self.key("all"))
                self.bus_epoch += 1
                self.bus_up = True
                delay = 0.1
                while True:
                    msg = await pubsub.get_message(timeout=1.0)
                    if msg is not None and msg.get("type") == "message":
                        await self._dispatch(msg["data"])
            except self.errors as e:
                logger.warning("Redis bus lost (%s); reconnecting in %.1f s", e, delay)
            finally:
                self.bus_up = False
                with contextlib.suppress(*self.errors), anyio.CancelScope(shield=True):
                    with anyio.move_on_after(1):
                        await pubsub.aclose()  # type: ignore[no-untyped-call]
            await anyio.sleep(delay)
            delay = min(delay * 2, 5.0)

    async def _dispatch(self, data: bytes) -> None:
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            logger.warning("ignored a malformed bus message")
            return
        handler = self._handlers.get(str(message.get("t"))) if isinstance(message, dict) else None
        if handler is None:
            return
        try:
            await handler(message)
        except BackendUnavailable as e:
            logger.warning("bus message %r not handled: %s", message.get("t"), e)
        except Exception:
            logger.exception("bus message %r failed", message.get("t"))


__all__ = ["RedisBackend"]
