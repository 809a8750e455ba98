"""Tasks on the server side: task-augmented ``tools/call`` and the ``tasks/*`` methods.

A task-augmented call is answered at once with ``CreateTaskResult``; the tool then runs
in a task group owned by the server (not by the request), and its status lives in a
:class:`~mcpkit.TaskStore`. Everything a running task sends (progress, log messages,
elicitation and sampling requests) carries ``io.modelcontextprotocol/related-task``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from .._exceptions import (
    BackendUnavailable,
    InvalidParams,
    InvalidRequest,
    MCPError,
    ProtocolError,
)
from .._session._base import RequestContext
from .._stores._tasks import TERMINAL, MemoryTaskStore, TaskRecord, TaskStore
from ._auth import caller_key
from ._logging import current_context
from ._registry import decode_cursor, encode_cursor
from ._session import state_of

if TYPE_CHECKING:
    from .._session._server import ServerSession
    from ._context import Context
    from ._face import ServerLike
    from ._tools import ToolDef

logger = logging.getLogger("mcpkit.server")

#: The ``_meta`` key tying a message to a task.
RELATED_TASK = "io.modelcontextprotocol/related-task"

#: The statuses a task may move to from each non-terminal one.
_TRANSITIONS = {
    "working": frozenset({"input_required", "completed", "failed", "cancelled"}),
    "input_required": frozenset({"working", "completed", "failed", "cancelled"}),
}

_STOPPED = "The server stopped while the task was running."
#: Seconds a background task's end is retried while the shared state is down (see
#: ``TaskManager.settle``), and while the server is stopping.
SETTLE_FOR = 10.0
SETTLE_STOPPING = 2.0


def iso(t: float) -> str:
    """An RFC 3339 UTC timestamp for seconds since the epoch."""
    return (
        datetime.fromtimestamp(t, timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def task_wire(r: TaskRecord, *, extension: bool = False) -> dict[str, Any]:
    """The ``Task`` object of a record (``extension``: as the tasks extension names the
    times, ``ttlMs`` and ``pollIntervalMs``)."""
    ttl_key, poll_key = ("ttlMs", "pollIntervalMs") if extension else ("ttl", "pollInterval")
    d: dict[str, Any] = {
        "taskId": r.task_id,
        "status": r.status,
        "createdAt": iso(r.created_at),
        "lastUpdatedAt": iso(r.last_updated_at),
        ttl_key: r.ttl,
    }
    if r.status_message is not None:
        d["statusMessage"] = r.status_message
    if r.poll_interval is not None:
        d[poll_key] = r.poll_interval
    return d


def _related(params: dict[str, Any] | None, task_id: str) -> dict[str, Any]:
    out = dict(params or {})
    meta = dict(out.get("_meta") or {})
    meta[RELATED_TASK] = {"taskId": task_id}
    out["_meta"] = meta
    return out


def _task_id_param(params: dict[str, Any] | None) -> str:
    tid = params.get("taskId") if params else None
    if not isinstance(tid, str):
        raise InvalidParams(message="Invalid params: 'taskId' must be a string")
    return tid


def _not_found(task_id: str) -> InvalidParams:
    return InvalidParams(message=f"Unknown task: {task_id}", data={"taskId": task_id})


class TaskRequestContext(RequestContext):
    """The request context a tool running as a task sees.

    The original request was answered (with ``CreateTaskResult``), so what the tool sends
    is tagged with the task instead of the request, and progress continues under the
    original token until the task is terminal.
    """

    __slots__ = ("_last_progress", "manager", "task_id")

    def __init__(self, rc: RequestContext, manager: TaskManager, task_id: str) -> None:
        # The caller and the HTTP request stay the task's; not the request's stream, which
        # ends with the answer that hands over the task.
        super().__init__(rc.session, rc.request, rc.negotiated, transport=rc.transport)
        self.manager = manager
        self.task_id = task_id
        self._last_progress: float | None = None

    @property
    def cancelled(self) -> bool:
        """True once the task was cancelled (``tasks/cancel``) or expired."""
        return self.manager.is_cancelled(self.task_id)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification tagged with the task (dropped once its client is gone).

        A task outlives the connection that created it: its progress and log messages
        are best effort, and must not make the tool fail when nobody listens any more.
        """
        try:
            await self.session.notify(method, _related(params, self.task_id))
        except (MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as e:
            logger.debug("task %s: %s not delivered: %s", self.task_id, method, e)

    async def send_request(
        self, method: str, params: dict[str, Any] | None = None, **kw: Any
    ) -> Any:
        """Ask the client something for the task: the task is ``input_required`` meanwhile."""
        await self.manager.input_needed(self.task_id, +1)
        try:
            return await self.session.send_request(method, _related(params, self.task_id), **kw)
        finally:
            with anyio.CancelScope(shield=True):
                await self.manager.input_needed(self.task_id, -1)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Progress under the original request's token, until the task is terminal."""
        token = self.request.progress_token
        if token is None or self.manager.is_done(self.task_id):
            return
        if self._last_progress is not None and progress <= self._last_progress:
            logger.warning(
                "progress %s of task %s dropped: it must increase", progress, self.task_id
            )
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)


@dataclasses.dataclass
class _Live:
    """What only this process knows of a task it runs."""

    session: ServerSession
    owner: str
    trc: TaskRequestContext | None = None
    ctx: Context | None = None
    scope: anyio.CancelScope | None = None
    waiting_input: int = 0
    cancelled: bool = False
    done: bool = False
    #: A task of the tasks extension (2026-07-28): polled, never told of by notification.
    ext: bool = False


@dataclasses.dataclass
class TaskSettings:
    """How a :class:`~mcpkit.Server` runs tasks (task-augmented tool calls), in one object.

    Times are milliseconds, as on the wire.

    Example::

        server = Server("builds", tasks=TaskSettings(store=SQLiteTaskStore("tasks.db"), ttl=600_000))
    """

    #: Where tasks are kept (default: in memory; ``SQLiteTaskStore`` survives restarts).
    store: TaskStore | None = None
    #: Lifetime of a task when the client asks for none (None: unlimited).
    ttl: int | None = 3_600_000
    #: Longest lifetime a client may ask for (longer requests are cut to it).
    max_ttl: int | None = 86_400_000
    #: The ``pollInterval`` suggested to clients.
    poll_interval: int | None = 1000
    #: ``fn(ctx) -> principal`` owning a new task (default: the session that made it).
    owner: Callable[[Context], str | None] | None = None
    #: Live tasks one owner may have at once (None: no limit).
    max_per_owner: int | None = 100
    #: The wall clock, in seconds (task timestamps and TTLs); tests give a clock they move.
    clock: Callable[[], float] = time.time


def resolve_task_settings(tasks: TaskSettings | None, **legacy: Any) -> TaskSettings:
    """``tasks=`` or the older ``task_*`` keywords of ``Server`` (not both)."""
    from_keywords = TaskSettings(
        store=legacy["task_store"],
        ttl=legacy["task_ttl"],
        max_ttl=legacy["max_task_ttl"],
        poll_interval=legacy["task_poll_interval"],
        owner=legacy["task_owner"],
        max_per_owner=legacy["max_tasks_per_owner"],
    )
    if tasks is None:
        return from_keywords
    if from_keywords != TaskSettings():
        raise TypeError("pass either tasks=TaskSettings(...) or the task_* keywords, not both")
    return tasks


class TaskWatcher(Protocol):
    """Who wants to hear of task changes: :meth:`follows` is asked first (cheap), and
    :meth:`changed` gets the task's new record."""

    def follows(self, task_id: str) -> bool: ...

    def changed(self, record: TaskRecord) -> None: ...


class SharedTaskStore(TaskStore, Protocol):
    """A task store many workers share: it tells of changes made by the others."""

    on_change: Callable[[str, str], Awaitable[None]] | None


@runtime_checkable
class ComparingTaskStore(Protocol):
    """A task store that saves a record only if the stored one is still the one read:
    what an edit of a task on many workers at once needs (a Redis-backed store)."""

    async def replace(self, previous: TaskRecord, record: TaskRecord) -> bool | None:
        """Save ``record`` if the stored task is still ``previous``: True saved, False
        changed meanwhile (read again), None terminal or gone."""
        ...


class TaskManager:
    """Runs tasks for a :class:`~mcpkit.Server` and answers the ``tasks/*`` methods."""

    @classmethod
    def from_settings(
        cls, server: ServerLike, settings: TaskSettings, page_size: int | None
    ) -> TaskManager:
        """The manager of ``server`` configured by ``settings``."""
        return cls(
            server,
            settings.store,
            default_ttl=settings.ttl,
            max_ttl=settings.max_ttl,
            poll_interval=settings.poll_interval,
            owner=settings.owner,
            page_size=page_size or 100,
            max_per_owner=settings.max_per_owner,
            clock=settings.clock,
        )

    def __init__(
        self,
        server: ServerLike,
        store: TaskStore | None,
        *,
        default_ttl: int | None,
        max_ttl: int | None,
        poll_interval: int | None,
        owner: Callable[[Context], str | None] | None,
        page_size: int,
        max_per_owner: int | None = 100,
        sweep_interval: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.server = server
        #: Wall-clock seconds (task timestamps and TTLs); injectable, so tests need not wait.
        self.clock = clock
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        #: True while the store is the default one (shared state may replace it).
        self._default_store = store is None
        self.default_ttl = default_ttl
        self.max_ttl = max_ttl
        self.poll_interval = poll_interval
        self.owner_fn = owner
        self.page_size = page_size
        self.max_per_owner = max_per_owner
        self.sweep_interval = sweep_interval
        self._live: dict[str, _Live] = {}
        #: Wake-ups of tasks we asked clients to run (see :func:`request_as_task`).
        self._remote: dict[str, anyio.Event] = {}
        self._last_purge = 0.0
        self._changed: dict[str, anyio.Event] = {}
        self._tg: TaskGroup | None = None
        self._opened = False
        # Locks belong to the event loop that made them: a server may be served under one
        # loop, then another (tests on asyncio and trio), so each is remade per loop.
        self._open_lock: tuple[Any, anyio.Lock] | None = None
        self._lock: tuple[Any, anyio.Lock] | None = None
        #: Told of each change of a task someone follows (the tasks extension's
        #: ``notifications/tasks`` on listen streams).
        self.watcher: TaskWatcher | None = None

    # ------------------------------------------------------------------ lifetime

    @contextlib.asynccontextmanager
    async def host(self) -> AsyncIterator[None]:
        """Own the task group tasks run in (entered by the server while it serves)."""
        await self._open()
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._sweep)
                try:
                    yield
                finally:
                    self._tg = None
                    tg.cancel_scope.cancel()
        finally:
            # The running tasks have recorded their end by now (the group waited for them).
            with anyio.CancelScope(shield=True):
                self._opened = False
                await self.store.close()

    async def _sweep(self) -> None:
        # Expired tasks are purged on every task method too; this catches idle servers.
        while True:
            await anyio.sleep(self.sweep_interval)
            try:
                await self._purge(force=True)
            except Exception:
                logger.exception("purging expired tasks failed")

    async def _open(self) -> None:
        if self._opened:
            return
        token = anyio.lowlevel.current_token()
        if self._open_lock is None or self._open_lock[0] != token:
            self._open_lock = (token, anyio.Lock())
        async with self._open_lock[1]:
            if not self._opened:
                await self.store.open()
                self._opened = True

    async def on_client_status(self, params: dict[str, Any] | None) -> None:
        """``notifications/tasks/status`` from a client: wake whoever polls that task."""
        tid = params.get("taskId") if params else None
        event = self._remote.pop(tid, None) if isinstance(tid, str) else None
        if event is not None:
            event.set()

    def share(self, store: SharedTaskStore) -> None:
        """Keep tasks in ``store``, shared by many workers, unless a store was chosen; a
        shared store tells of status changes made by the other workers."""
        if self._default_store:
            self.store = store
            self._default_store = False
        if self.store is store:
            store.on_change = self._changed_elsewhere

    async def _changed_elsewhere(self, task_id: str, status: str) -> None:
        self._wake(task_id)
        live = self._live.get(task_id)
        if live is not None and status == "cancelled" and not live.done:
            # Cancelled through another worker: this one runs it, so this one stops it.
            live.cancelled = True
            if live.scope is not None:
                live.scope.cancel()
        watcher = self.watcher
        if watcher is not None and watcher.follows(task_id):
            try:
                record = await self.store.get(task_id)
            except Exception as e:  # the store is down: the followers poll meanwhile
                logger.warning("task %s changed elsewhere, but could not be read: %s", task_id, e)
            else:
                if record is not None:
                    watcher.changed(record)

    def _transition_lock(self) -> anyio.Lock:
        token = anyio.lowlevel.current_token()
        if self._lock is None or self._lock[0] != token:
            self._lock = (token, anyio.Lock())
        return self._lock[1]

    # ------------------------------------------------------------------ state

    def is_cancelled(self, task_id: str) -> bool:
        live = self._live.get(task_id)
        return live is None or live.cancelled

    def is_done(self, task_id: str) -> bool:
        live = self._live.get(task_id)
        return live is None or live.done

    def _wake(self, task_id: str) -> None:
        event = self._changed.pop(task_id, None)
        if event is not None:
            event.set()

    async def _set_status(
        self,
        task_id: str,
        status: str,
        message: str | None = None,
        outcome: dict[str, Any] | None = None,
    ) -> TaskRecord | None:
        """Move a task to ``status`` if the lifecycle allows it; returns the new record."""
        async with self._transition_lock():
            record = await self.store.get(task_id)
            if record is None or status not in _TRANSITIONS.get(record.status, ()):
                return None
            record.status = status
            record.status_message = message
            record.last_updated_at = self.clock()
            if outcome is not None:
                record.outcome = outcome
            await self.store.update(record)
        live = self._live.get(task_id)
        if status in TERMINAL and live is not None:
            live.done = True
        self._wake(task_id)
        self.tell(record)
        if live is not None and not live.ext:
            # notifications/tasks/status goes to the session that created the task (the
            # outbox drops it if that session is gone). No related-task _meta: the id is in it.
            state_of(live.session).post("notifications/tasks/status", task_wire(record))
        return record

    async def settle(
        self,
        task_id: str,
        status: str,
        message: str,
        outcome: dict[str, Any],
        within: float = SETTLE_FOR,
    ) -> None:
        """Record how a task run in the background ended. Nobody waits for an answer, so a
        store that is down (Redis) is retried, backing off, for ``within`` seconds, then
        logged and left (the record keeps its last status until it expires): never
        raised, as an outage of the shared state must not stop the server."""
        deadline = anyio.current_time() + within
        for attempt in itertools.count():  # ended by the deadline
            try:
                await self._set_status(task_id, status, message, outcome)
                return
            except BackendUnavailable as e:
                delay = min(0.05 * 2**attempt, 1.0)
                if anyio.current_time() + delay > deadline:
                    logger.error("task %s ended %s, not recorded: %s", task_id, status, e)
                    return
                if attempt == 0:
                    logger.warning("task %s ended %s; recording it again (%s)", task_id, status, e)
            await anyio.sleep(delay)

    def tell(self, record: TaskRecord) -> None:
        """Tell the watcher of the task's new state, if someone follows it."""
        watcher = self.watcher
        if watcher is not None and watcher.follows(record.task_id):
            watcher.changed(record)

    async def input_needed(self, task_id: str, delta: int) -> None:
        live = self._live.get(task_id)
        if live is None:
            return
        before = live.waiting_input
        live.waiting_input = max(0, before + delta)
        if before == 0 and live.waiting_input > 0:
            await self._set_status(task_id, "input_required", "Waiting for input from the client.")
        elif before > 0 and live.waiting_input == 0 and not live.done:
            await self._set_status(task_id, "working", "The operation is in progress.")

    def _owner(self, rc: RequestContext) -> str:
        if self.owner_fn is not None:
            from ._context import Context

            principal = self.owner_fn(Context(self.server, rc, rc.session))
            if principal is not None:
                return f"principal:{principal}"
        else:
            # Behind authorization, a task belongs to the verified caller: theirs from any
            # of their sessions, nobody else's.
            verified = caller_key(rc)
            if verified is not None:
                return f"principal:{verified}"
        n = rc.negotiated
        if n is not None and n.stateless:
            # No session and no principal: whoever holds the (unguessable) task id may use
            # it, across requests, workers and restarts.
            return "anonymous"
        return f"session:{state_of(rc.session).task_owner}"

    async def _purge(self, *, force: bool = False) -> None:
        # At most once a second on the request path: expired records are also filtered
        # out where they are read, so this only frees space.
        now = self.clock()
        if not force and now - self._last_purge < 1.0:
            return
        self._last_purge = now
        for tid in await self.store.delete_expired(now):
            live = self._live.pop(tid, None)
            if live is not None:
                live.cancelled = live.done = True
                if live.scope is not None:
                    live.scope.cancel()
            self._wake(tid)

    async def visible(self, rc: RequestContext, task_id: str) -> TaskRecord | None:
        """The task, if the caller of ``rc`` may see it (else None, as for a missing one)."""
        await self._open()
        await self._purge()
        record = await self.store.get(task_id)
        if record is None or record.owner != self._owner(rc) or record.expired(self.clock()):
            return None
        return record

    async def _find(self, rc: RequestContext, params: dict[str, Any] | None) -> TaskRecord:
        task_id = _task_id_param(params)
        record = await self.visible(rc, task_id)
        # Someone else's task is reported exactly like a missing one: ids do not leak.
        if record is None:
            raise _not_found(task_id)
        live = self._live.get(task_id)
        if live is not None and live.session is not rc.session:
            # The owner came back on another session (a reconnection): what the task sends
            # from now on (status, progress, elicitation) goes there.
            live.session = rc.session
            if live.trc is not None:
                live.trc.session = rc.session
                live.trc.negotiated = rc.negotiated  # its capabilities, not the old ones
            if live.ctx is not None:
                live.ctx._session = rc.session
        return record

    # ------------------------------------------------------------------ creating

    async def create_tool_task(
        self, rc: RequestContext, tool: ToolDef, args: dict[str, Any], task: Any
    ) -> dict[str, Any]:
        """Accept a task-augmented ``tools/call``: answer ``CreateTaskResult``, run in the background."""
        if not isinstance(task, dict):
            raise InvalidParams(message="Invalid params: 'task' must be an object")
        ttl = task.get("ttl", self.default_ttl)
        if ttl is not None and (type(ttl) is not int or ttl < 0):
            raise InvalidParams(message="Invalid params: 'task.ttl' must be a non-negative integer")
        record = await self.new_record(rc, ttl)
        session: ServerSession = rc.session
        live = self._live[record.task_id] = _Live(session, record.owner)
        trc = live.trc = TaskRequestContext(rc, self, record.task_id)
        if self._tg is not None:
            self._tg.start_soon(self._run_tool, trc, tool, args, live)
        else:
            # Not served through Server.running() (a bare session): the session's own task
            # group is the longest-lived one there is.
            state_of(session).spawn(self._run_tool, trc, tool, args, live)
        result = {"task": task_wire(record)}
        return result

    async def new_record(self, rc: RequestContext, ttl: int | None) -> TaskRecord:
        """Store a new ``working`` task of the caller of ``rc`` (durably: it is found by
        ``tasks/get`` as soon as this returns)."""
        if ttl is None:
            ttl = self.max_ttl
        elif self.max_ttl is not None:
            ttl = min(ttl, self.max_ttl)
        await self._open()
        await self._purge()
        owner = self._owner(rc)
        if self.max_per_owner is not None:
            running = sum(1 for live in self._live.values() if live.owner == owner)
            if running >= self.max_per_owner:
                raise InvalidRequest(
                    message=f"Too many tasks running ({running}); wait for some to finish",
                    data={"maxTasks": self.max_per_owner},
                )
        now = self.clock()
        record = await self.store.create(
            TaskRecord(
                task_id=str(uuid.uuid4()),
                owner=owner,
                status="working",
                status_message="The operation is in progress.",
                created_at=now,
                last_updated_at=now,
                ttl=ttl,
                poll_interval=self.poll_interval,
            )
        )
        return record

    async def _run_tool(
        self, trc: TaskRequestContext, tool: ToolDef, args: dict[str, Any], live: _Live
    ) -> None:
        from ._context import Context

        task_id = trc.task_id
        outcome: dict[str, Any] | None = None
        try:
            with anyio.CancelScope() as scope:
                live.scope = scope
                if live.cancelled:
                    scope.cancel()
                ctx = live.ctx = Context(self.server, trc, live.session)
                token = current_context.set(ctx)
                try:
                    outcome = {"result": await tool.call(args, ctx)}
                except ProtocolError as e:
                    outcome = {"error": e.to_error()}
                except MCPError as e:
                    outcome = {"error": {"code": -32603, "message": str(e)}}
                finally:
                    current_context.reset(token)
        except BaseException:
            # The server is stopping: leave a clear status rather than `working` forever.
            with anyio.CancelScope(shield=True):
                err = {"error": {"code": -32603, "message": _STOPPED}}
                await self.settle(task_id, "failed", _STOPPED, err, SETTLE_STOPPING)
            raise
        finally:
            live.scope = None
        try:
            with anyio.CancelScope(shield=True):
                if outcome is None:
                    return  # cancelled (tasks/cancel already recorded it) or expired
                if "error" in outcome:
                    message = outcome["error"]["message"]
                    await self.settle(task_id, "failed", message, outcome)
                elif outcome["result"].get("isError"):
                    message = _error_text(outcome["result"])
                    await self.settle(task_id, "failed", message, outcome)
                else:
                    message = "The operation completed."
                    await self.settle(task_id, "completed", message, outcome)
        finally:
            live.done = True
            if self._live.get(task_id) is live:
                del self._live[task_id]

    # ------------------------------------------------------------------ tasks/*

    async def h_get(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        return task_wire(await self._find(rc, params))

    async def h_result(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        record = await self._find(rc, params)
        owner = record.owner
        task_id = record.task_id
        while not record.terminal:
            event = self._changed.get(task_id)
            if event is None:
                event = self._changed[task_id] = anyio.Event()
            got = await self.store.get(task_id)
            if got is None or got.owner != owner:
                raise _not_found(task_id)
            record = got
            if record.terminal:
                break
            if task_id not in self._live:
                # Nobody here runs it (another process of a shared store): poll the store.
                with anyio.move_on_after((self.poll_interval or 1000) / 1000.0):
                    await event.wait()
            else:
                await event.wait()
        outcome = record.outcome or {
            "error": {"code": -32603, "message": record.status_message or record.status}
        }
        if "error" in outcome:
            err = outcome["error"]
            raise ProtocolError(err.get("code"), err.get("message", ""), err.get("data"))
        return _related(outcome["result"], task_id)

    async def h_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        await self._open()
        await self._purge()
        cursor = params.get("cursor") if params else None
        after = 0 if cursor is None else decode_cursor("tasks", cursor, self.server.stateless)
        records = await self.store.list_owned(self._owner(rc), after, self.page_size + 1)
        page = records[: self.page_size]
        more = len(records) > self.page_size
        now = self.clock()
        records = [r for r in page if not r.expired(now)]
        result: dict[str, Any] = {"tasks": [task_wire(r) for r in records]}
        if more:
            result["nextCursor"] = encode_cursor("tasks", page[-1].seq, self.server.stateless)
        return result

    async def h_cancel(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        record = await self._find(rc, params)
        if record.terminal:
            raise InvalidParams(
                message=f"Cannot cancel task {record.task_id}: it is already {record.status}",
                data={"taskId": record.task_id, "status": record.status},
            )
        live = self._live.get(record.task_id)
        if live is not None:
            live.cancelled = True
        outcome = {"error": {"code": -32603, "message": "The task was cancelled."}}
        new = await self._set_status(
            record.task_id, "cancelled", "The task was cancelled by request.", outcome
        )
        if live is not None and live.scope is not None:
            live.scope.cancel()
        if new is None:  # it finished in the meantime
            new = await self.store.get(record.task_id)
            if new is None:
                raise _not_found(record.task_id)
            if new.status != "cancelled":
                raise InvalidParams(
                    message=f"Cannot cancel task {new.task_id}: it is already {new.status}",
                    data={"taskId": new.task_id, "status": new.status},
                )
        return task_wire(new)


def _error_text(result: dict[str, Any]) -> str:
    """A status message for a tool result flagged ``isError``: its first text, shortened."""
    for block in result.get("content") or ():
        if isinstance(block, dict) and isinstance(block.get("text"), str) and block["text"]:
            text: str = block["text"]
            return text if len(text) <= 200 else text[:197] + "..."
    return "The tool reported an error."


#: How long a task-augmented request to the client may take when no timeout is given (s).
REMOTE_TASK_TIMEOUT = 3600.0

#: The client capability (under ``tasks.requests``) each task-augmented request needs.
CLIENT_TASK_CAPABILITY = {
    "sampling/createMessage": ("sampling", "createMessage"),
    "elicitation/create": ("elicitation", "create"),
}


async def request_as_task(
    ctx: Context, method: str, params: dict[str, Any], timeout: float | None
) -> Any:
    """Send ``method`` to the client as a task, poll it, and return its final result.

    The polls honour the client's ``pollInterval`` and wake early on its
    ``notifications/tasks/status``; a task that needs input is waited on with
    ``tasks/result``. A tool itself running as a task is ``input_required`` meanwhile.
    """
    rc = ctx._request
    session = ctx.session
    manager = ctx.server.tasks_manager
    own = rc.task_id if isinstance(rc, TaskRequestContext) else None
    kw: dict[str, Any] = {}
    if rc is not None and own is None:
        kw["related_request_id"] = rc.request_id  # HTTP: on the stream of the tool call
    if own is not None:
        await manager.input_needed(own, +1)
    try:
        with anyio.fail_after(timeout if timeout is not None else REMOTE_TASK_TIMEOUT):
            p = dict(params)
            p["task"] = {}
            if own is not None:
                p = _related(p, own)
            created = await session.send_request(method, p, **kw)
            task = created.get("task") if isinstance(created, dict) else None
            tid = task.get("taskId") if isinstance(task, dict) else None
            if not isinstance(tid, str):
                # Not a CreateTaskResult: the client ran it as a plain request.
                return created
            while True:
                status = task.get("status") if isinstance(task, dict) else None
                if status in TERMINAL or status == "input_required":
                    return await session.send_request("tasks/result", {"taskId": tid}, **kw)
                poll = task.get("pollInterval") if isinstance(task, dict) else None
                interval = poll / 1000.0 if isinstance(poll, (int, float)) and poll > 0 else 1.0
                event = manager._remote.setdefault(tid, anyio.Event())
                with anyio.move_on_after(max(0.01, interval)):
                    await event.wait()
                manager._remote.pop(tid, None)
                task = await session.send_request("tasks/get", {"taskId": tid}, **kw)
    finally:
        if own is not None:
            with anyio.CancelScope(shield=True):
                await manager.input_needed(own, -1)
