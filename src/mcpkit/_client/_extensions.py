"""Protocol extensions on the client side: the seam, and the tasks extension's handle.

A :class:`ClientExtension` is declared under ``capabilities.extensions`` (in ``initialize``,
and in the ``_meta`` of every 2026-07-28 request) and may name ``resultType`` values the
client should hand back whole. The tasks extension (``io.modelcontextprotocol/tasks``)
uses both: a server answering a ``tools/call`` with a task handle (``resultType: "task"``)
gets polled with ``tasks/get`` until the task ends, its input requests answered by the
client's callbacks through ``tasks/update``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import anyio

from .._exceptions import InvalidResponse, ProtocolError
from ..types import CallToolResult
from ..types._extensions import TASKS_EXTENSION, DetailedTask
from ._callbacks import call_back

if TYPE_CHECKING:
    from ._face import ClientLike
    from ._util import ProgressFn

#: Polling bounds (seconds): the first poll when the server suggests no interval, and the
#: longest backoff between polls of a task whose status does not change.
FIRST_POLL = 0.1
MAX_BACKOFF = 5.0
_TERMINAL = frozenset({"completed", "failed", "cancelled"})


class ClientExtension:
    """A protocol extension a :class:`~mcpkit.Client` declares; subclass it to write one.

    ``id`` names it under ``capabilities.extensions``; :meth:`settings` is the object
    declared there (None: not declared); ``result_types`` are the ``resultType`` values
    its servers may answer with, returned whole by :meth:`Client.send_request`.

    Example::

        class Weather(ClientExtension):
            id = "com.example/weather"

        client = Client(url, extensions=[Weather()])
        now = await client.send_request("weather/now")
    """

    id: str = ""
    result_types: frozenset[str] = frozenset()

    def attach(self, client: ClientLike) -> None:
        """Called once when the client is made: keep it if you need it."""

    def settings(self) -> dict[str, Any] | None:
        """The settings object declared under ``capabilities.extensions[id]``."""
        return {}


class TasksClientExtension(ClientExtension):
    """Declares ``io.modelcontextprotocol/tasks``: servers may answer task-capable tools
    with a task, which :meth:`Client.call_tool` follows to its end."""

    id = TASKS_EXTENSION
    result_types = frozenset({"task"})


def parse_detailed(raw: Any, what: str) -> DetailedTask:
    try:
        return DetailedTask.model_validate(raw)
    except Exception as e:
        raise InvalidResponse(f"{what}: the server sent a malformed task: {e}") from e


class ExtensionTaskHandle:
    """A task of the tasks extension (2026-07-28), from :meth:`Client.call_tool_as_task`.

    ``task`` is the last state seen; :meth:`result` polls until the task ends (honouring
    the server's ``pollIntervalMs``, backing off while nothing changes), answering its input
    requests with the client's callbacks, and returns the tool's result.

    Example::

        handle = await client.call_tool_as_task("render", {"scene": "intro"})
        print(handle.task.status)          # "working"
        result = await handle.result()     # a CallToolResult
    """

    def __init__(self, client: ClientLike, task: DetailedTask, tool: str | None = None) -> None:
        self.client = client
        self.task = task
        self.tool = tool

    @property
    def task_id(self) -> str:
        """The id the server gave the task."""
        return self.task.task_id

    @property
    def done(self) -> bool:
        """True once the last seen status is terminal."""
        return self.task.status in _TERMINAL

    async def status(self, *, timeout: float | None = None) -> DetailedTask:
        """Ask the server for the task's state (``tasks/get``)."""
        kw: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        raw = await self.client.send_request("tasks/get", {"taskId": self.task_id}, **kw)
        self.task = parse_detailed(raw, "tasks/get")
        return self.task

    async def cancel(self, *, timeout: float | None = None) -> DetailedTask:
        """Cancel the task (``tasks/cancel``; a task already ended stays as it was)."""
        kw: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        await self.client.send_request("tasks/cancel", {"taskId": self.task_id}, **kw)
        return await self.status(timeout=timeout)

    async def _answer(self, asked: dict[str, Any]) -> None:
        answers = await self.client.session.answer_inputs(asked)
        await self.client.send_request(
            "tasks/update", {"taskId": self.task_id, "inputResponses": answers}
        )

    async def wait(
        self, *, timeout: float | None = None, progress_handler: ProgressFn | None = None
    ) -> DetailedTask:
        """Poll until the task ends; returns its final state. ``timeout`` bounds the wait
        (``TimeoutError``; without one, the task's ``ttlMs``); ``progress_handler`` hears
        each new status message."""
        if timeout is None and self.task.ttl_ms is not None:
            timeout = self.task.ttl_ms / 1000.0
        with anyio.fail_after(timeout if timeout is not None else math.inf):
            base = FIRST_POLL
            if self.task.poll_interval_ms:
                base = max(FIRST_POLL, self.task.poll_interval_ms / 1000.0)
            delay, seen, step = base, self.task.status_message, 0
            task = self.task
            while task.status not in _TERMINAL:
                if task.status == "input_required" and task.input_requests:
                    await self._answer(task.input_requests)
                    delay = base
                else:
                    await anyio.sleep(delay)
                    delay = min(max(base, MAX_BACKOFF), delay * 1.5)
                task = await self.status()
                if task.status_message != seen and task.status_message is not None:
                    seen, step = task.status_message, step + 1
                    delay = base
                    if progress_handler is not None:
                        await call_back(progress_handler, float(step), None, seen)
            return task

    async def result(
        self, *, timeout: float | None = None, progress_handler: ProgressFn | None = None
    ) -> CallToolResult:
        """Wait for the task to end and return the tool's result.

        A task that failed with a protocol error raises it (:class:`~mcpkit.ProtocolError`,
        by its code), as the plain call would have; a cancelled task raises one too.
        """
        task = await self.wait(timeout=timeout, progress_handler=progress_handler)
        if task.status == "completed" and task.result is not None:
            if self.tool is not None:
                return await self.client.check_tool_result(self.tool, task.result)
            try:
                return CallToolResult.model_validate(task.result)
            except Exception as e:
                raise InvalidResponse(f"tasks/get: malformed result: {e}") from e
        if task.status == "cancelled":
            raise ProtocolError(-32603, f"task {self.task_id} was cancelled")
        err = dict(task.error or {})
        if not isinstance(err.get("code"), int):
            err["code"] = -32603
        err.setdefault("message", f"task {self.task_id} {task.status}")
        raise ProtocolError.from_error(err)
