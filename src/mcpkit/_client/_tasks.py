"""Tasks on the client side: a handle on a task a server runs for us."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import anyio

from .._exceptions import InvalidResponse, RequestTimeout
from ..types import CallToolResult, Task

if TYPE_CHECKING:
    from ._client import Client

#: Polling interval (seconds) when the server suggests none.
DEFAULT_POLL = 1.0
#: Never poll faster than this, whatever the server suggests.
MIN_POLL = 0.01

_TERMINAL = frozenset({"completed", "failed", "cancelled"})


def parse_task(raw: Any, what: str) -> Task:
    """A ``Task`` from a raw result (``tasks/get``, ``tasks/cancel``, a notification)."""
    try:
        return Task.model_validate(raw)
    except Exception as e:
        raise InvalidResponse(f"{what}: the server sent a malformed task: {e}") from e


class TaskHandle:
    """A task running on the server (from :meth:`Client.call_tool_as_task`).

    Example::

        handle = await client.call_tool_as_task("build", {"target": "all"}, ttl=600_000)
        print((await handle.status()).status)      # "working"
        result = await handle.result()             # a CallToolResult, once done

    ``task`` is the last state seen (from the server's answers and its
    ``notifications/tasks/status``).
    """

    def __init__(self, client: Client, task: Task, tool: str | None = None) -> None:
        self.client = client
        self.task = task
        self.tool = tool
        self._changed = anyio.Event()

    @property
    def task_id(self) -> str:
        """The id the server gave the task."""
        return self.task.task_id

    @property
    def done(self) -> bool:
        """True once the last seen status is terminal."""
        return self.task.status in _TERMINAL

    def _update(self, task: Task) -> None:
        # Keep the newest state: notifications may overtake answers.
        if self.task.status in _TERMINAL and task.status not in _TERMINAL:
            return
        self.task = task
        self._changed.set()
        self._changed = anyio.Event()

    async def status(self, *, timeout: float | None = None) -> Task:
        """Ask the server for the task's state (``tasks/get``)."""
        kw: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        raw = await self.client.send_request("tasks/get", {"taskId": self.task_id}, **kw)
        self._update(parse_task(raw, "tasks/get"))
        return self.task

    async def cancel(self, *, timeout: float | None = None) -> Task:
        """Cancel the task (``tasks/cancel``); :class:`~mcpkit.InvalidParams` if it already ended."""
        kw: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        raw = await self.client.send_request("tasks/cancel", {"taskId": self.task_id}, **kw)
        self._update(parse_task(raw, "tasks/cancel"))
        return self.task

    async def wait(self, *, timeout: float | None = None) -> Task:
        """Poll until the task is terminal (honouring ``pollInterval``; a status notification
        wakes it early); returns the final state. ``timeout`` bounds the whole wait
        (``TimeoutError``)."""
        with anyio.fail_after(timeout if timeout is not None else math.inf):
            while True:
                task = await self.status()
                if task.status in _TERMINAL:
                    return task
                if task.status == "input_required":
                    # The server waits for us: tasks/result is where its requests come
                    # through (and it answers once the task is terminal).
                    try:
                        await self._fetch_result()
                    except RequestTimeout:
                        pass
                    except Exception:
                        pass  # the outcome is read again below
                    continue
                interval = DEFAULT_POLL
                if task.poll_interval is not None:
                    interval = max(MIN_POLL, task.poll_interval / 1000.0)
                with anyio.move_on_after(interval):
                    await self._changed.wait()

    async def _fetch_result(self) -> Any:
        return await self.client.send_request("tasks/result", {"taskId": self.task_id})

    async def result(self, *, timeout: float | None = None) -> CallToolResult:
        """Wait for the task to end and return the tool's result (``tasks/result``).

        A task that failed with a JSON-RPC error raises it (:class:`~mcpkit.ProtocolError`),
        exactly as the plain call would have; a cancelled task raises one too.
        """
        await self.wait(timeout=timeout)
        raw = await self._fetch_result()
        if self.tool is not None:
            return await self.client.check_tool_result(self.tool, raw)
        try:
            return CallToolResult.model_validate(raw)
        except Exception as e:
            raise InvalidResponse(f"tasks/result: malformed result: {e}") from e
