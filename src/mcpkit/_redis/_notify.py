"""Changes one worker's server announces, told to the clients of every worker.

A server's lists change on the worker where the change happened (a tool registered at run
time, a resource updated). Its clients are spread over every worker: a 2026-07-28
``subscriptions/listen`` stream is served by whichever worker received it, and a 2025
session's standalone GET stream is held by one worker. So a change is told here at once
(:meth:`SharedNotifications.tell_here`, which names the sessions told) and every other
worker tells its own listen streams and the other sessions whose GET stream it holds
(:meth:`SharedNotifications.tell_others`). Each client hears it once: a session this
worker has a replica of is told here (its message goes to the worker holding its GET
stream, or waits in its backlog for the next one), any other by the one worker holding
its GET stream.

The registration itself reaches every worker through the registration log (``_changes``:
a tool added or removed at run time is made on every worker, in one order, and on the
workers starting later): a logged change carries its list-changed notifications, told by
each worker once it made the change, so a client told never lists the old set. A change
that cannot be logged (a closure registered outside ``@server.runtime_change``) stays on
its worker; its notification still goes to every worker, on the bus (:data:`LIST_CHANGED`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.abc import TaskGroup

from .._app._registry import Hosting, SessionEntry

if TYPE_CHECKING:
    from ._bus import Bus, BusMessage

logger = logging.getLogger("mcpkit.redis")

#: Bus message kinds: a list changed (``m``: the notification's method), a resource was
#: updated (``uri``). Both carry ``from``: the worker that announced it.
LIST_CHANGED = "lc"
RESOURCE_UPDATED = "ru"
_LISTS = frozenset(
    f"notifications/{kind}/list_changed" for kind in ("tools", "resources", "prompts")
)


class SharedNotifications:
    """Tells every worker's clients what one worker's server announced (module docs)."""

    def __init__(
        self,
        backend: Bus,
        hosting: Hosting,
        entries: Callable[[], Iterable[SessionEntry]],
    ) -> None:
        self.backend = backend
        self.hosting = hosting
        self._entries = entries
        self._tg: TaskGroup | None = None
        self._loop_thread: int | None = None
        self._token: Any = None
        backend.on(LIST_CHANGED, self._on_list_changed)
        backend.on(RESOURCE_UPDATED, self._on_resource_updated)

    def attach(self, tg: TaskGroup | None) -> None:
        """Publish from ``tg`` (the registry's, while it runs; None: it stopped)."""
        self._tg = tg
        if tg is None:
            self._loop_thread = self._token = None
        else:
            self._loop_thread = threading.get_ident()
            self._token = anyio.lowlevel.current_token()

    def list_changed(self, method: str) -> None:
        """Tell this worker's clients now and the other workers' through the bus. Callable
        from a worker thread (a sync tool may register another)."""
        told = self.tell_here(method)
        message = {"t": LIST_CHANGED, "m": method, "from": self.backend.worker_id, "told": told}
        self._publish(message)

    def sessions_here(self) -> list[str]:
        """The ids of the sessions this worker has a replica of (those it tells)."""
        return [entry.id for entry in list(self._entries())]

    def tell_here(self, method: str, sessions: Iterable[str] | None = None) -> list[str]:
        """Tell list-changed ``method`` to this worker's listen streams and to every session
        it has a replica of (of ``sessions`` only, when given); returns the ids of the
        sessions told (the other workers tell the rest). Callable from a worker thread."""
        self.hosting.notify_listeners(method)
        only = set(sessions) if sessions is not None else None
        told = []
        for entry in list(self._entries()):
            if only is None or entry.id in only:
                self.hosting.post_list_changed(entry.session, method)
                told.append(entry.id)
        return told

    def tell_others(self, method: str, told: Iterable[str]) -> None:
        """Tell list-changed ``method``, announced by another worker that told the sessions
        ``told``, to this worker's listen streams and the other sessions whose GET stream
        it holds."""
        if method not in _LISTS:
            return
        skip = set(told)
        self.hosting.notify_listeners(method)
        for entry in list(self._entries()):
            if entry.id not in skip and entry.transport.standalone.conn is not None:
                self.hosting.post_list_changed(entry.session, method)

    def resource_updated(self, uri: str) -> None:
        """Tell the other workers' listen streams that ``uri`` changed (this worker's were
        told by the server itself)."""
        self._publish({"t": RESOURCE_UPDATED, "uri": uri, "from": self.backend.worker_id})

    def _publish(self, message: BusMessage) -> None:
        tg = self._tg
        if tg is None:
            return  # not serving: no other worker to tell yet
        if threading.get_ident() == self._loop_thread:
            tg.start_soon(self._broadcast, message)
            return
        try:
            anyio.from_thread.run_sync(tg.start_soon, self._broadcast, message, token=self._token)
        except RuntimeError:
            logger.debug("not published (the event loop is gone): %s", message.get("t"))

    async def _broadcast(self, message: BusMessage) -> None:
        try:
            await self.backend.broadcast(message)
        except Exception as e:  # Redis down: this worker's clients were told all the same
            logger.warning("could not tell the other workers of %s: %s", message.get("t"), e)

    async def _on_list_changed(self, message: BusMessage) -> None:
        method = message.get("m")
        if message.get("from") == self.backend.worker_id or not isinstance(method, str):
            return
        told = message.get("told")
        self.tell_others(method, told if isinstance(told, list) else ())

    async def _on_resource_updated(self, message: BusMessage) -> None:
        uri = message.get("uri")
        if message.get("from") == self.backend.worker_id or not isinstance(uri, str):
            return
        self.hosting.notify_listeners("notifications/resources/updated", {"uri": uri})
