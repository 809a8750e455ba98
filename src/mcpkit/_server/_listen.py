"""``subscriptions/listen`` (revision 2026-07-28): change notifications a client opted in to.

A stateless client has no session to push notifications to, so it opens a long-lived
request; its response stream carries the list-changed and resource-updated notifications it
asked for, each tagged with the request's id (``io.modelcontextprotocol/subscriptionId``),
until the client cancels it (closes the stream, or ``notifications/cancelled`` on stdio) or
the server ends it with a result. With the tasks extension, ``taskIds`` asks for
``notifications/tasks``: the state of each task followed (as ``tasks/get`` shows it) when
the stream opens, then each time it changes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from .._exceptions import InvalidParams
from .._session._stateless import META_SUBSCRIPTION_ID

if TYPE_CHECKING:
    from .._session._base import RequestContext

logger = logging.getLogger("mcpkit.server")

#: Filter key -> the list-changed notification it opts in to, and the capability it needs.
_LIST_FILTERS = {
    "toolsListChanged": ("notifications/tools/list_changed", "tools"),
    "promptsListChanged": ("notifications/prompts/list_changed", "prompts"),
    "resourcesListChanged": ("notifications/resources/list_changed", "resources"),
}
#: Notifications queued for one listener before it counts as stalled (then dropped).
_QUEUE = 256

_Item = tuple[str, "dict[str, Any] | None"]
#: The notification of a task's new state (the tasks extension).
TASK_NOTIFICATION = "notifications/tasks"
#: ``follow(rc, task_ids)``: the tasks of ``task_ids`` the caller may follow, each as
#: ``tasks/get`` shows it now; None when the server serves no tasks. Raises -32021 for a
#: client that did not declare the tasks extension.
TaskFollower = Callable[["RequestContext", list[str]], Awaitable["list[dict[str, Any]] | None"]]


class Listener:
    """One open ``subscriptions/listen`` stream: what it asked for and its queue."""

    def __init__(
        self, wanted: frozenset[str], uris: frozenset[str], tasks: frozenset[str] = frozenset()
    ) -> None:
        self.wanted = wanted
        self.uris = uris
        #: The task ids it follows (``notifications/tasks``).
        self.tasks = tasks
        #: Task id -> the last state queued for it (``lastUpdatedAt``, the rest of it).
        self._told: dict[str, tuple[str, dict[str, Any]]] = {}
        self._send, self.queue = anyio.create_memory_object_stream[_Item](_QUEUE)
        self._token = anyio.lowlevel.current_token()
        self._loop_thread = threading.get_ident()

    def wants(self, method: str, params: dict[str, Any] | None) -> bool:
        if method == "notifications/resources/updated":
            return params is not None and params.get("uri") in self.uris
        if method == TASK_NOTIFICATION:
            return params is not None and self._news(params)
        return method in self.wanted

    def _news(self, task: dict[str, Any]) -> bool:
        """Whether ``task`` is a state of a followed task not queued yet, nor older than
        one queued (the same change may be told twice: by this worker and by the store
        other workers share; a new ``lastUpdatedAt`` alone is no news). Remembers it."""
        task_id, when = task.get("taskId"), task.get("lastUpdatedAt")
        if task_id not in self.tasks or not isinstance(when, str):
            return False
        state = {k: v for k, v in task.items() if k != "lastUpdatedAt"}
        last = self._told.get(task_id)
        if last is not None and (when < last[0] or state == last[1]):
            return False  # ISO 8601 times of one format: their order is the text's
        self._told[task_id] = (when, state)
        return True

    def post(self, method: str, params: dict[str, Any] | None) -> None:
        """Queue a notification; safe from worker threads (registrations may happen there)."""
        if threading.get_ident() == self._loop_thread:
            self._post_now((method, params))
            return
        try:
            anyio.from_thread.run_sync(self._post_now, (method, params), token=self._token)
        except RuntimeError:
            logger.debug("dropped %s: the listener's event loop is gone", method)

    def _post_now(self, item: _Item) -> None:
        try:
            self._send.send_nowait(item)
        except anyio.WouldBlock:
            logger.warning("a subscriptions/listen stream is stalled; dropped %s", item[0])
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def close(self) -> None:
        self._send.close()


class Listeners:
    """The open listen streams of one server."""

    def __init__(self) -> None:
        self._all: set[Listener] = set()

    def add(self, listener: Listener) -> None:
        self._all.add(listener)

    def discard(self, listener: Listener) -> None:
        self._all.discard(listener)

    def post(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Queue ``method`` for every listener that opted in to it."""
        for listener in list(self._all):
            if listener.wants(method, params):
                listener.post(method, params)

    def follows(self, task_id: str) -> bool:
        """Whether an open stream follows the task (``notifications/tasks``)."""
        return any(task_id in listener.tasks for listener in self._all)

    def close_all(self) -> None:
        """End every stream gracefully (each answers its request with a result)."""
        for listener in list(self._all):
            listener.close()


def read_task_ids(params: dict[str, Any] | None) -> list[str] | None:
    """The ``taskIds`` a listen request asks to follow (None: it asks for none)."""
    filt = params.get("notifications") if params else None
    ids = filt.get("taskIds") if isinstance(filt, dict) else None
    if ids is None:
        return None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise InvalidParams(message="Invalid params: notifications.taskIds must be strings")
    return list(dict.fromkeys(ids))


def read_filter(
    params: dict[str, Any] | None, capabilities: dict[str, Any]
) -> tuple[dict[str, Any], frozenset[str], frozenset[str]]:
    """(the filter we honour, list-changed methods, resource URIs) of a listen request.

    Types the server does not support are left out of what it acknowledges (``taskIds``
    is read apart: :func:`read_task_ids`).
    """
    filt = params.get("notifications") if params else None
    if not isinstance(filt, dict):
        raise InvalidParams(message="Invalid params: 'notifications' must be an object")
    honoured: dict[str, Any] = {}
    wanted: set[str] = set()
    for key, (method, capability) in _LIST_FILTERS.items():
        value = filt.get(key)
        if value is not None and not isinstance(value, bool):
            raise InvalidParams(message=f"Invalid params: notifications.{key} must be a boolean")
        cap = capabilities.get(capability)
        if value and isinstance(cap, dict) and cap.get("listChanged"):
            honoured[key] = True
            wanted.add(method)
    uris = filt.get("resourceSubscriptions")
    if uris is not None:
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise InvalidParams(
                message="Invalid params: notifications.resourceSubscriptions must be strings"
            )
        resources = capabilities.get("resources")
        if isinstance(resources, dict) and resources.get("subscribe"):
            honoured["resourceSubscriptions"] = list(uris)
        else:
            uris = []
    return honoured, frozenset(wanted), frozenset(uris or ())


async def serve_listen(
    listeners: Listeners,
    rc: RequestContext,
    capabilities: dict[str, Any],
    *,
    subscribe: Callable[[str], Awaitable[None]] | None = None,
    follow: TaskFollower | None = None,
) -> Any:
    """Serve one ``subscriptions/listen`` request until it is cancelled or the server ends it.

    ``subscribe(uri)`` is awaited for each resource URI honoured, before the acknowledgement
    (a hub subscribes on the mounted server behind the URI); ``follow`` decides which of the
    ``taskIds`` asked for the stream follows (see :data:`TaskFollower`)."""
    params = rc.request.params
    honoured, wanted, uris = read_filter(params, capabilities)
    task_ids = read_task_ids(params)
    if subscribe is not None:
        for uri in sorted(uris):
            await subscribe(uri)
    sub_id = rc.request_id
    tag = {META_SUBSCRIPTION_ID: sub_id}
    # Listening before the tasks are read: a change meanwhile is queued, not missed.
    listener = Listener(wanted, uris, frozenset(task_ids or ()))
    listeners.add(listener)
    try:
        if task_ids is not None:
            await _follow_tasks(listener, honoured, rc, task_ids, follow)
        await rc.notify(
            "notifications/subscriptions/acknowledged", {"_meta": tag, "notifications": honoured}
        )
        async with listener.queue:
            async for method, params in listener.queue:
                if method == TASK_NOTIFICATION and (params or {}).get("taskId") not in (
                    listener.tasks
                ):
                    continue  # queued before the caller's tasks were known: not theirs
                await rc.notify(method, {**(params or {}), "_meta": tag})
    finally:
        listeners.discard(listener)
        listener.close()
        listener.queue.close()  # also when refused before reading it (-32021)
    # The server ended the stream (shutdown): say so with a result.
    return {"_meta": tag}


async def _follow_tasks(
    listener: Listener,
    honoured: dict[str, Any],
    rc: RequestContext,
    task_ids: list[str],
    follow: TaskFollower | None,
) -> None:
    """Narrow what ``listener`` follows to the tasks ``follow`` allows, acknowledge them,
    and queue the state each is in now (a task may have changed before the stream opened)."""
    tasks = await follow(rc, task_ids) if follow is not None else None
    followed = [t["taskId"] for t in tasks or ()]
    listener.tasks = frozenset(followed)
    if tasks is None:
        return  # no tasks served: left out of the acknowledgement
    honoured["taskIds"] = followed
    for task in tasks:
        if listener.wants(TASK_NOTIFICATION, task):
            listener.post(TASK_NOTIFICATION, task)
