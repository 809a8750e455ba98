"""The sessions of a Streamable HTTP app: created, looked up (owner checked), reaped, dropped.

:class:`SessionRegistry` is the seam for where sessions live. :class:`MemorySessionRegistry`
keeps them in this process; a store shared by many workers implements the same protocol.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import anyio
from anyio.abc import TaskGroup

from .._http._events import EventStore
from .._http._security import SessionOwnership
from .._http._transport import HTTPServerTransport
from .._session._kernel import Kernel
from .._session._server import ServerSession
from .._transports._base import Transport
from ._options import HTTPAppOptions

logger = logging.getLogger("mcpkit.http")

#: Bytes from the CSPRNG in a session id (192 bits), as URL-safe base64: 32 characters.
SESSION_ID_BYTES = 24
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{32}")


def new_session_id() -> str:
    """A new session id: 192 bits from the CSPRNG as URL-safe base64 (32 visible ASCII
    characters, no ``:``), the shape :func:`is_session_id` accepts."""
    return secrets.token_urlsafe(SESSION_ID_BYTES)


def is_session_id(sid: str) -> bool:
    """Whether ``sid`` has the shape of an id the registries make (:func:`new_session_id`).

    The app checks a request's ``Mcp-Session-Id`` with it before any lookup, so whatever a
    client sends never reaches a registry's keys (a Redis key ``<prefix>s:<id>`` built from
    ``<victim>:get`` would name another session's record); any other shape is answered as
    an unknown session."""
    return _SESSION_ID.fullmatch(sid) is not None


class SessionFactory(Protocol):
    """What the app serves: anything that makes a :class:`ServerSession` for a transport.

    A server that offers more to the app hosting it (``mcpkit.Server`` does) also has a
    ``hosting()`` method returning a :class:`Hosting`; a low-level factory without one is
    served too, with what sessions alone can tell.
    """

    def create_session(self, transport: Transport) -> ServerSession: ...


class Hosting(Protocol):
    """What an app asks of the server it hosts, beyond sessions (``server.hosting()``)."""

    @property
    def kernel(self) -> Kernel:
        """The kernel serving the server's requests (2026-07-28 ones have no session)."""
        ...

    def running(self) -> AbstractAsyncContextManager[Any]:
        """The server's lifespan, entered once for the app's whole life."""
        ...

    def end_streams(self) -> None:
        """End every stream served outside sessions (listen streams) with its result."""
        ...

    def tool_header_params(self, tool: str) -> Sequence[tuple[str, tuple[str, ...]]]:
        """``(header name, property path)`` of each argument of tool ``tool`` whose schema
        property carries ``x-mcp-header``: the ``Mcp-Param-{Name}`` headers a stateless
        ``tools/call`` is checked against."""
        ...

    def required_scopes(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        session: ServerSession | None = None,
    ) -> Sequence[str]:
        """The OAuth scopes a request needs for the tool, resource or prompt it names
        (none when that is hidden from ``session``: answered as an unknown one)."""
        ...

    def session_snapshot(self, session: ServerSession) -> dict[str, Any]:
        """What another worker needs to serve ``session`` (JSON-able)."""
        ...

    def restore_session(self, transport: Transport, snapshot: dict[str, Any]) -> ServerSession:
        """A session for ``transport`` in the state ``snapshot`` describes."""
        ...

    def apply_snapshot(self, session: ServerSession, snapshot: dict[str, Any]) -> None:
        """Bring a live replica to the state ``snapshot`` describes."""
        ...

    def share_with(
        self,
        shared: Any,
        task_store: Any = None,
        state_keys: Any = None,
        registrations: Any = None,
    ) -> None:
        """Serve from shared state from now on (resource updates, tasks, the keys sealing
        2026-07-28 ``requestState``, and the registration log carrying run-time changes
        to every worker)."""
        ...

    def notify_listeners(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Queue notification ``method`` on every listen stream served here that opted in
        to it (a change another worker's server announced)."""
        ...

    def post_list_changed(self, session: ServerSession, method: str) -> None:
        """Queue list-changed notification ``method`` on ``session`` if it declared the
        list (several in a row send one)."""
        ...


def hosting_of(server: SessionFactory) -> Hosting | None:
    """``server.hosting()``, or None for a low-level factory that has none: the one place
    the app asks (an optional method of the protocol, looked up once per app)."""
    hosting = getattr(server, "hosting", None)
    return hosting() if callable(hosting) else None


class SessionEntry:
    """One session of the app: its id, transport, session, owner and activity.

    ``clock`` is the registry's (see :class:`MemorySessionRegistry`): :attr:`last_active` is
    a reading of it.
    """

    __slots__ = (
        "_clock",
        "_last_active",
        "busy",
        "id",
        "owner",
        "scope",
        "session",
        "transport",
    )

    def __init__(
        self,
        id: str,
        transport: HTTPServerTransport,
        session: ServerSession,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.id = id
        self.transport = transport
        self.session = session
        #: The principal that created the session (None: no owner check configured).
        self.owner: str | None = None
        #: HTTP requests and streams of its client attached right now.
        self.busy = 0
        self._clock = clock
        self._last_active = clock()
        self.scope = anyio.CancelScope()

    def touch(self) -> None:
        """Mark the session active now (on its clock)."""
        self._last_active = self._clock()

    @property
    def last_active(self) -> float:
        """When its client last had something attached, as a reading of the entry's clock."""
        return self._last_active


async def run_session(entry: SessionEntry) -> None:
    """Serve ``entry``'s session until it ends (or its scope is cancelled); a failure is
    logged, never raised into the registry's task group."""
    with entry.scope:
        try:
            await entry.session.run()
        except Exception:
            logger.exception("session %s… failed", entry.id[:8])


class SessionRegistry(Protocol):
    """Where an app's sessions live: the interface a shared store implements."""

    #: The sessions this process serves right now, by id, most recently active last.
    sessions: OrderedDict[str, SessionEntry]

    async def lookup(self, sid: str, headers: dict[str, str]) -> SessionEntry | None:
        """The session ``sid`` if it exists and belongs to the requester; else None.

        A shared registry finds sessions other workers started here too."""
        ...

    async def publish(self, entry: SessionEntry) -> None:
        """``entry`` was initialized: make it visible to every worker before its client
        hears of it (nothing to do for one process)."""
        ...

    def create(self, tg: TaskGroup, owner: str | None) -> SessionEntry | None:
        """A new running session (in ``tg``), or None when the cap is reached. Its id is a
        :func:`new_session_id` (the app answers any other shape as an unknown session)."""
        ...

    def drop(self, entry: SessionEntry, *, forget: bool = True) -> None:
        """End ``entry`` now: its transport closed, its calls cancelled."""
        ...

    async def terminate(self, entry: SessionEntry) -> None:
        """End ``entry`` and forget its stored events before returning."""
        ...

    async def reap_forever(self) -> None:
        """End idle sessions as their timeout passes (runs for the app's lifetime)."""
        ...

    async def aclose(self) -> None:
        """End every session of this process (graceful shutdown)."""
        ...

    def __len__(self) -> int: ...


class SessionBackend(Protocol):
    """Where an app keeps what its sessions share with other workers (e.g. Redis).

    The app asks it for its event store and its session registry once, when it is made.
    Two methods are optional, looked up when present: ``async check()``, awaited when the
    app starts (it raises :class:`~mcpkit.BackendUnavailable` when the backend cannot be
    reached, and the app does not start), and ``where``, a string naming the backend's
    instance for the startup line (no secret in it).
    """

    def event_store(self) -> EventStore:
        """The store of the sessions' SSE events (resumption on any worker)."""
        ...

    def registry(
        self,
        server: SessionFactory,
        options: HTTPAppOptions,
        event_store: EventStore | None,
        ownership: SessionOwnership,
    ) -> SessionRegistry:
        """The registry serving ``server``'s sessions from the shared state."""
        ...


class MemorySessionRegistry:
    """The sessions of one process, most recently active last.

    Args:
        server: makes the :class:`ServerSession` of each new session.
        options: the app's options (``max_sessions``, ``session_idle_timeout``,
            ``json_response``, ``retry_ms`` are read live).
        event_store: where the sessions' events are kept (forgotten with the session).
        ownership: the owner check of :func:`create_http_app`'s ``session_owner``.
        clock: what idle time is measured with: a function returning seconds that only
            move forward (default :func:`time.monotonic`). Every session's activity stamp
            and every idle check read it, so a test can pass a fake clock and move time on
            by hand instead of waiting on the real one. It is kept as :attr:`clock`; the
            registry of an app may be given another one before the app has any session
            (``app.registry.clock = fake``): sessions keep the clock they were created with.

    Example::

        now = [0.0]
        registry = MemorySessionRegistry(server, options, None, ownership, clock=lambda: now[0])
        ...
        now[0] += options.session_idle_timeout + 1
        registry.reap_idle()  # every session without a client attached is ended
    """

    def __init__(
        self,
        server: SessionFactory,
        options: HTTPAppOptions,
        event_store: EventStore | None,
        ownership: SessionOwnership,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.server = server
        self.options = options
        self.event_store = event_store
        self.ownership = ownership
        self.clock = clock
        self.sessions: OrderedDict[str, SessionEntry] = OrderedDict()
        self._tg: TaskGroup | None = None

    def __len__(self) -> int:
        return len(self.sessions)

    async def lookup(self, sid: str, headers: dict[str, str]) -> SessionEntry | None:
        entry = self.sessions.get(sid)
        if entry is not None and not self.ownership.allows(entry.owner, headers):
            # Someone else's session: answered as unknown, so ids cannot be probed.
            return None
        if entry is not None:
            entry.touch()
            self.sessions.move_to_end(sid)
        return entry

    async def publish(self, entry: SessionEntry) -> None:
        return None

    def create(self, tg: TaskGroup, owner: str | None) -> SessionEntry | None:
        self._tg = tg
        if len(self.sessions) >= self.options.max_sessions:
            self._make_room()
            if len(self.sessions) >= self.options.max_sessions:
                return None
        sid = new_session_id()
        transport = HTTPServerTransport(
            secrets.token_hex(6),
            json_response=self.options.json_response,
            event_store=self.event_store,
            retry_ms=self.options.retry_ms,
        )
        transport.session_id = sid
        entry = SessionEntry(
            sid, transport, self.server.create_session(transport), clock=self.clock
        )
        entry.owner = owner
        self.sessions[sid] = entry
        tg.start_soon(self._run, entry)
        return entry

    def _make_room(self) -> None:
        self.reap_idle()
        # Still full: the least recently active idle session makes room (its client gets
        # 404 and starts over, as the spec lets it); failing that, one whose client left
        # calls running with nothing attached (abandoned work is cancelled).
        for abandoned_too in (False, True):
            for entry in list(self.sessions.values()):
                if len(self.sessions) < self.options.max_sessions:
                    return
                if entry.busy == 0 and (abandoned_too or not entry.transport.requests):
                    self.drop(entry)

    async def _run(self, entry: SessionEntry) -> None:
        await run_session(entry)
        self.drop(entry)

    def drop(self, entry: SessionEntry, *, forget: bool = True) -> None:
        if self.sessions.get(entry.id) is entry:
            del self.sessions[entry.id]
        entry.transport.close()
        entry.scope.cancel()
        store, tg = self.event_store, self._tg
        if forget and store is not None and tg is not None:
            tg.start_soon(store.forget_session, entry.transport.key)

    async def terminate(self, entry: SessionEntry) -> None:
        # Awaited here rather than spawned: on shutdown the host task group is about to be
        # cancelled, and trio never starts a task spawned into a cancelled group.
        self.drop(entry, forget=False)
        if self.event_store is not None:
            await self.event_store.forget_session(entry.transport.key)

    async def reap_forever(self) -> None:
        # The timeout is read on every round, so it can be changed while serving.
        while True:
            timeout = self.options.session_idle_timeout
            await anyio.sleep(1.0 if timeout is None else max(0.02, min(timeout / 4, 1.0)))
            self.reap_idle()

    def reap_idle(self) -> None:
        """End every session idle for longer than ``session_idle_timeout``, by :attr:`clock`.

        Does nothing when the timeout is None. :meth:`reap_forever` calls it on every round.
        """
        timeout = self.options.session_idle_timeout
        if timeout is not None:
            self.reap(self.clock() - timeout)

    def reap(self, before: float) -> None:
        """End every session with nothing of its client attached since ``before`` (a reading
        of :attr:`clock`)."""
        for entry in list(self.sessions.values()):
            # Abandoned even with calls still running (they are cancelled with it): a
            # client that is gone must not hold a session, and its slot, forever.
            if entry.busy == 0 and entry.last_active < before:
                logger.info("session %s… idle; ended", entry.id[:8])
                self.drop(entry)

    async def aclose(self) -> None:
        """End every session (graceful shutdown)."""
        for entry in list(self.sessions.values()):
            await self.terminate(entry)
