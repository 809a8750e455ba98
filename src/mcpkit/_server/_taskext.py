"""The tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) on the server side.

Revision 2026-07-28 moved tasks out of the core. A client declaring the extension (in the
request's ``_meta``) gets a task handle, unasked, when it calls a task-capable tool: a flat
``CreateTaskResult`` (``resultType: "task"``). It polls ``tasks/get``, which inlines the
tool's ``result`` (or ``error``) once the task is terminal and the ``inputRequests`` of a
task waiting for its client; it answers them with ``tasks/update`` and may ``tasks/cancel``.
There is no ``tasks/result`` nor ``tasks/list``.

The tasks are the 2025-11-25 ones underneath: the same :class:`~mcpkit._server._tasks.TaskManager`,
records and stores (memory, SQLite, Redis), so a tool is written once. What differs is the
wire, how a task asks its client for input (it parks the question in its record instead of
sending a request) and when it starts: at once, or, for a tool registered with
``defer_task=True``, when it calls ``ctx.begin_task()`` after gathering input in the request
(multi round-trip requests).
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import secrets
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from .._exceptions import (
    CapabilityError,
    InternalError,
    InvalidParams,
    MCPError,
    MethodNotFound,
    ProtocolError,
)
from .._session._base import RequestContext, RequestHandlerFn
from .._session._stateless import translate_error
from .._stores._tasks import TaskRecord
from ..types._skillformat import TASKS_EXTENSION
from ._extensions import Extension, client_supports, require_client_extension
from ._logging import current_context
from ._mrtr import check_answer
from ._session import state_of
from ._tasks import (
    SETTLE_STOPPING,
    ComparingTaskStore,
    TaskManager,
    TaskRequestContext,
    _error_text,
    _Live,
    _task_id_param,
    task_wire,
)

if TYPE_CHECKING:
    from ._context import Context
    from ._face import HandlersLike, ServerLike
    from ._tools import ToolDef

logger = logging.getLogger("mcpkit.server")


_WORKING = "The operation is in progress."
_WAITING = "Waiting for input from the client."


def create_result(record: TaskRecord) -> dict[str, Any]:
    """The flat ``CreateTaskResult`` of a new task (``Result & Task``)."""
    out: dict[str, Any] = {"resultType": "task", **task_wire(record, extension=True)}
    return out


def pending_inputs(record: TaskRecord) -> dict[str, Any]:
    """The input requests of a task its client has not answered yet."""
    inp = record.input or {}
    requests = inp.get("requests") or {}
    answered = inp.get("responses") or {}
    return {k: v for k, v in requests.items() if k not in answered}


def detailed(record: TaskRecord) -> dict[str, Any]:
    """``tasks/get``'s ``DetailedTask``: the task, and its result, error or input requests.

    A tool that ran and reported an error is ``completed`` with ``result.isError`` (the
    status ``failed`` is for protocol errors); a task recorded the 2025-11-25 way (``failed``
    with a result) is shown so too.
    """
    d = task_wire(record, extension=True)
    outcome = record.outcome or {}
    if record.status in ("completed", "failed") and "result" in outcome:
        d["status"] = "completed"
        d["result"] = outcome["result"]
    elif record.status == "failed":
        d["error"] = outcome.get("error") or {
            "code": -32603,
            "message": record.status_message or "The task failed.",
        }
    elif record.status == "input_required":
        d["inputRequests"] = pending_inputs(record)
    return d


class ExtTaskContext(TaskRequestContext):
    """The request context of a tool running as a task of the extension.

    The request that started it was answered, and the stateless revision has no channel to
    the client outside a request: notifications are dropped, progress becomes the task's
    status message, and questions to the client are parked in the task (``ask``) until a
    ``tasks/update`` answers them.
    """

    __slots__ = ("extension",)

    def __init__(
        self, rc: RequestContext, manager: TaskManager, task_id: str, extension: TasksExtension
    ) -> None:
        super().__init__(rc, manager, task_id)
        self.extension = extension

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        logger.debug("task %s: %s dropped (the tasks extension polls)", self.task_id, method)

    async def send_request(
        self, method: str, params: dict[str, Any] | None = None, **kw: Any
    ) -> Any:
        raise CapabilityError(
            f"cannot send {method!r} from a task of the tasks extension: ask through "
            "mcpkit.Context (ctx.elicit, ctx.sample, ctx.list_roots)"
        )

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Progress shows in the task's ``statusMessage`` (when it has a message)."""
        if message is not None and not self.manager.is_done(self.task_id):
            await self.extension.set_message(self.task_id, message)

    async def ask(self, method: str, params: dict[str, Any], key: str | None) -> Any:
        """Park a question in the task; the client's answer (``tasks/update``)."""
        return await self.extension.ask(self.task_id, method, params, key)


@dataclasses.dataclass
class _Start:
    """How a tool started through the extension first answers its request."""

    done: anyio.Event = dataclasses.field(default_factory=anyio.Event)
    value: Any = None
    error: BaseException | None = None
    task_id: str | None = None
    scope: anyio.CancelScope | None = None

    def answer(self, value: Any = None, error: BaseException | None = None) -> None:
        if not self.done.is_set():
            self.value, self.error = value, error
            self.done.set()


class TasksExtension(Extension):
    """Serves ``io.modelcontextprotocol/tasks`` for the tools registered with ``task_support``.

    Declared (to 2026-07-28 clients only: the handshake revisions keep the core tasks) as
    soon as a task-capable tool is registered.
    """

    id = TASKS_EXTENSION
    handshake = False

    def __init__(self, manager: TaskManager) -> None:
        self._server: ServerLike | None = None
        #: The server's task manager (given, as the manager holds the server too).
        self._manager = manager
        manager.watcher = self

    def attach(self, server: ServerLike) -> None:
        self._server = server

    @property
    def server(self) -> ServerLike:
        if self._server is None:
            raise RuntimeError("the tasks extension is not attached to a server")
        return self._server

    @property
    def manager(self) -> TaskManager:
        return self._manager

    def settings(self) -> dict[str, Any] | None:
        return {} if self.server.registry.has_task_tools() else None

    def methods(self) -> Mapping[str, RequestHandlerFn]:
        return {
            "tasks/get": self.h_get,
            "tasks/update": self.h_update,
            "tasks/cancel": self.h_cancel,
        }

    # ------------------------------------------------------------------ tools/call

    async def call_tool(
        self, handlers: HandlersLike, rc: RequestContext, tool: ToolDef, args: dict[str, Any]
    ) -> Any:
        """A stateless ``tools/call`` of a task-capable tool."""
        params = rc.request.params
        if not client_supports(rc, self.id):
            if tool.task_support == "required":
                why = f"tool {tool.name!r} runs only as a task, with the {self.id} extension"
                require_client_extension(rc, self.id, why)
            held = tool.context_param is not None or bool(tool.asked)
            return await handlers._rounds(rc, params, handlers._call(tool, args, rc), hold=held)
        # Held: what the tool does before its questions (and its task) runs once.
        held = tool.context_param is not None or bool(tool.asked)
        return await handlers._rounds(rc, params, self._start(rc, tool, args), hold=held)

    async def _start(self, rc: RequestContext, tool: ToolDef, args: dict[str, Any]) -> Any:
        """Run the tool in the task group; answer with its task (or, before it began one,
        its result or its questions)."""
        start = _Start()
        tg = self.manager._tg
        if tg is not None:
            tg.start_soon(self._run, rc, tool, args, start)
        elif rc.session is not None:
            state_of(rc.session).spawn(self._run, rc, tool, args, start)
        else:
            raise ProtocolError(message="Internal error: the server is not running its tasks")
        try:
            await start.done.wait()
        except anyio.get_cancelled_exc_class():
            # The request was cancelled before a task took over: the call goes with it.
            if start.task_id is None and start.scope is not None:
                start.scope.cancel()
            raise
        if start.error is not None:
            raise start.error
        return start.value

    async def _run(
        self, rc: RequestContext, tool: ToolDef, args: dict[str, Any], start: _Start
    ) -> None:
        from ._context import Context

        ctx = Context(self.server, rc, rc.session)
        ctx._begin_task = lambda: self._begin(rc, ctx, start)
        outcome: dict[str, Any] | None = None
        token = current_context.set(ctx)
        try:
            with anyio.CancelScope() as scope:
                start.scope = scope
                try:
                    if not tool.defer_task:
                        await self._begin(rc, ctx, start)
                    value = await tool.call(args, ctx)
                except anyio.get_cancelled_exc_class():
                    raise
                except BaseException as e:
                    if start.task_id is None:
                        start.answer(error=e)  # raised in the request, as a plain call would
                        return
                    outcome = _failure(e)
                else:
                    if start.task_id is None:
                        start.answer(value)  # returned before beginning a task
                        return
                    outcome = {"result": value}
        except BaseException:
            start.answer(error=ProtocolError(message="The server stopped."))
            if start.task_id is not None:
                with anyio.CancelScope(shield=True):
                    err = {"error": {"code": -32603, "message": "The server stopped."}}
                    await self.manager.settle(
                        start.task_id, "failed", "The server stopped.", err, SETTLE_STOPPING
                    )
            raise
        finally:
            current_context.reset(token)
            self._done(start.task_id)
        if start.task_id is None:
            start.answer(error=ProtocolError(message="The call was cancelled."))
            return
        with anyio.CancelScope(shield=True):
            await self._finish(start.task_id, outcome)

    async def _begin(self, rc: RequestContext, ctx: Context, start: _Start) -> None:
        """The tool becomes a task: stored, answered to the request, run on in the background."""
        if start.task_id is not None:
            return
        manager = self.manager
        record = await manager.new_record(rc, manager.default_ttl)
        live = manager._live[record.task_id] = _Live(rc.session, record.owner, ext=True)
        live.scope = start.scope
        live.ctx = ctx
        trc = live.trc = ExtTaskContext(rc, manager, record.task_id, self)
        ctx._request = trc
        start.task_id = record.task_id
        start.answer(create_result(record))

    def _done(self, task_id: str | None) -> None:
        if task_id is None:
            return
        live = self.manager._live.get(task_id)
        if live is not None:
            live.done = True
            del self.manager._live[task_id]

    async def _finish(self, task_id: str, outcome: dict[str, Any] | None) -> None:
        if outcome is None:
            return  # cancelled (tasks/cancel recorded it) or expired
        if "error" in outcome:
            message = outcome["error"]["message"]
            await self.manager.settle(task_id, "failed", message, outcome)
        else:
            result = outcome["result"]
            message = _error_text(result) if result.get("isError") else "The operation completed."
            await self.manager.settle(task_id, "completed", message, outcome)

    # ------------------------------------------------------------------ input

    async def _edit(
        self, task_id: str, change: Callable[[dict[str, Any]], None]
    ) -> TaskRecord | None:
        """Change a live task's input requests and answers; its status follows them.

        The lock orders the edits of this process; a store shared by many workers saves
        an edit only over the record it was made to (compare-and-set), else it is made
        again to the record as it is now: the question asked on one worker and the answer
        given on another are both kept."""
        manager = self.manager
        store = manager.store
        async with manager._transition_lock():
            for _ in range(_EDIT_ATTEMPTS):
                record = await store.get(task_id)
                if record is None or record.terminal:
                    return None
                previous = copy.deepcopy(record)
                _apply_edit(record, change, manager.clock())
                if not isinstance(store, ComparingTaskStore):
                    await store.update(record)
                    break
                saved = await store.replace(previous, record)
                if saved is None:
                    return None
                if saved:
                    break
            else:
                raise InternalError(message=f"task {task_id} kept changing under an edit")
        manager._wake(task_id)
        manager.tell(record)
        return record

    async def ask(self, task_id: str, method: str, params: dict[str, Any], key: str | None) -> Any:
        """Park question ``key`` in the task and wait (bounded) for its answer."""
        key = key or f"{method.split('/', 1)[0]}-{secrets.token_hex(6)}"
        question = {"method": method, "params": params}
        if (
            await self._edit(task_id, lambda inp: inp["requests"].__setitem__(key, question))
            is None
        ):
            raise ProtocolError(message=f"task {task_id} ended while asking {method}")
        try:
            with anyio.fail_after(self.server.client_request_timeout):
                answer = await self._answer(task_id, key)
        finally:
            with anyio.CancelScope(shield=True):
                await self._edit(task_id, lambda inp: _forget(inp, key))
        problem = check_answer(method, answer)
        if problem is not None:
            raise InvalidParams(message=f"Invalid params: inputResponses[{key!r}] {problem}")
        return answer

    async def _answer(self, task_id: str, key: str) -> Any:
        manager = self.manager
        while True:
            # The event first: an answer stored between the read and the wait still wakes us.
            event = manager._changed.setdefault(task_id, anyio.Event())
            record = await manager.store.get(task_id)
            if record is None or record.terminal:
                raise ProtocolError(message=f"task {task_id} ended while waiting for input")
            answers = (record.input or {}).get("responses") or {}
            if key in answers:
                return answers[key]
            await event.wait()

    async def set_message(self, task_id: str, message: str) -> None:
        async with self.manager._transition_lock():
            record = await self.manager.store.get(task_id)
            if record is None or record.terminal or record.status_message == message:
                return
            record.status_message = message
            record.last_updated_at = self.manager.clock()
            await self.manager.store.update(record)

    # ------------------------------------------------------------------ listen streams

    async def follow(self, rc: RequestContext, task_ids: list[str]) -> list[dict[str, Any]] | None:
        """The tasks of ``task_ids`` a ``subscriptions/listen`` stream may follow: the
        caller's own (others' and unknown ones are left out, as ``tasks/get`` reports them
        missing), each as ``tasks/get`` shows it now; None when no task is served.
        -32021 for a client that did not declare the extension (it MUST get it)."""
        require_client_extension(
            rc, self.id, f"notifications/tasks on subscriptions/listen need the {self.id} extension"
        )
        if self.settings() is None:
            return None
        found: list[dict[str, Any]] = []
        for task_id in task_ids:
            record = await self.manager.visible(rc, task_id)
            if record is not None:
                found.append(detailed(record))
        return found

    def follows(self, task_id: str) -> bool:
        return self.server.listeners.follows(task_id)

    def changed(self, record: TaskRecord) -> None:
        """``notifications/tasks`` with the task's new state, to the streams following it."""
        self.server.listeners.post("notifications/tasks", detailed(record))

    # ------------------------------------------------------------------ tasks/*

    def _gate(self, rc: RequestContext) -> None:
        if self.settings() is None:
            raise MethodNotFound(message=f"Method not found: {rc.method}")
        require_client_extension(rc, self.id, f"{rc.method} needs the {self.id} extension")

    async def h_get(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        self._gate(rc)
        record = await self.manager._find(rc, params)
        return detailed(record)

    async def h_update(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        self._gate(rc)
        _task_id_param(params)
        given = (params or {}).get("inputResponses")
        if not isinstance(given, dict):
            raise InvalidParams(message="Invalid params: 'inputResponses' must be an object")
        record = await self.manager._find(rc, params)
        if not record.terminal:
            await self._edit(record.task_id, lambda inp: _store_answers(inp, given))
        return {}

    async def h_cancel(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        self._gate(rc)
        record = await self.manager._find(rc, params)
        if record.terminal:
            return {}  # idempotent: the same empty acknowledgement
        manager = self.manager
        live = manager._live.get(record.task_id)
        if live is not None:
            live.cancelled = True
        await manager._set_status(record.task_id, "cancelled", "The task was cancelled by request.")
        if live is not None and live.scope is not None:
            live.scope.cancel()
        return {}


def _failure(e: BaseException) -> dict[str, Any]:
    """The outcome of a tool that raised once it ran as a task (coded as 2026-07-28 allows:
    a retired or undefined reserved code, -32042 included, is -32603 there)."""
    if isinstance(e, ProtocolError):
        return {"error": translate_error(e).to_error()}
    if isinstance(e, MCPError):
        return {"error": {"code": -32603, "message": str(e)}}
    return {"error": {"code": -32603, "message": f"{type(e).__name__}: {e}"}}


#: How many times an edit is made again to a task another worker changed meanwhile.
_EDIT_ATTEMPTS = 50


def _apply_edit(record: TaskRecord, change: Callable[[dict[str, Any]], None], now: float) -> None:
    """``change`` the record's input requests and answers; its status follows them."""
    inp = copy.deepcopy(record.input) if record.input else {}
    inp.setdefault("requests", {})
    inp.setdefault("responses", {})
    change(inp)
    record.input = inp
    waiting = any(k not in inp["responses"] for k in inp["requests"])
    status = "input_required" if waiting else "working"
    if status != record.status:
        record.status_message = _WAITING if waiting else _WORKING
    record.status = status
    record.last_updated_at = now


def _forget(inp: dict[str, Any], key: str) -> None:
    inp["requests"].pop(key, None)
    inp["responses"].pop(key, None)


def _store_answers(inp: dict[str, Any], given: dict[str, Any]) -> None:
    # Answers to questions the task does not ask (any more) are ignored.
    for key, answer in given.items():
        if key in inp["requests"] and key not in inp["responses"]:
            inp["responses"][key] = answer


__all__ = ["TASKS_EXTENSION", "ExtTaskContext", "TasksExtension", "detailed"]
