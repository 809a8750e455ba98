"""Tasks on the client side: a handle on a task a server runs for us."""

from __future__ import annotations

import contextlib
import math
import secrets
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import anyio

from .._exceptions import InvalidParams, InvalidResponse, ProtocolError, RequestTimeout
from ..types import CallToolResult, Task

if TYPE_CHECKING:
    from ._face import ClientLike

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

    def __init__(self, client: ClientLike, task: Task, tool: str | None = None) -> None:
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


class TaskReceiver:
    """Runs task-augmented requests the server sends us (sampling, elicitation) as tasks.

    The server gets ``CreateTaskResult`` at once; the callback runs in the background and
    the server polls ``tasks/get`` and fetches ``tasks/result``. Tasks live in memory, for
    the connection's lifetime.
    """

    def __init__(
        self, client: ClientLike, *, max_ttl: int = 3_600_000, poll_interval: int = 500
    ) -> None:
        self.client = client
        self.max_ttl = max_ttl
        self.poll_interval = poll_interval
        self.tg: Any = None
        self._tasks: dict[str, dict[str, Any]] = {}

    def wrap(self, handler: Any) -> Any:
        """``handler`` made task-capable: a request with ``task`` runs in the background."""

        async def augmented(ctx: Any, params: dict[str, Any] | None) -> Any:
            task = params.get("task") if params else None
            if task is None or self.tg is None:
                return await handler(ctx, params)
            return self._create(ctx, handler, params, task)

        return augmented

    def _create(self, ctx: Any, handler: Any, params: Any, task: Any) -> dict[str, Any]:

        ttl = task.get("ttl") if isinstance(task, dict) else None
        if ttl is not None and (type(ttl) is not int or ttl < 0):
            raise InvalidParams(message="Invalid params: 'task.ttl' must be a non-negative integer")
        ttl = self.max_ttl if ttl is None else min(ttl, self.max_ttl)
        now = time.time()
        tid = secrets.token_urlsafe(16)
        entry: dict[str, Any] = {
            "wire": {
                "taskId": tid,
                "status": "working",
                "createdAt": _iso(now),
                "lastUpdatedAt": _iso(now),
                "ttl": ttl,
                "pollInterval": self.poll_interval,
            },
            "created": now,
            "outcome": None,
            "done": anyio.Event(),
            "scope": anyio.CancelScope(),
        }
        self._tasks[tid] = entry
        self.tg.start_soon(self._run, entry, ctx, handler, params)
        return {"task": dict(entry["wire"])}

    async def _run(self, entry: dict[str, Any], ctx: Any, handler: Any, params: Any) -> None:

        outcome: dict[str, Any] | None = None
        with entry["scope"]:
            try:
                outcome = {"result": await handler(ctx, params)}
            except ProtocolError as e:
                outcome = {"error": e.to_error()}
            except Exception as e:
                outcome = {"error": {"code": -32603, "message": f"{type(e).__name__}: {e}"}}
        if outcome is not None and entry["outcome"] is None:
            status = "failed" if "error" in outcome else "completed"
            await self._finish(entry, status, outcome)

    async def _finish(self, entry: dict[str, Any], status: str, outcome: dict[str, Any]) -> None:

        entry["outcome"] = outcome
        entry["wire"]["status"] = status
        entry["wire"]["lastUpdatedAt"] = _iso(time.time())
        if status == "failed":
            entry["wire"]["statusMessage"] = outcome["error"].get("message", "failed")
        elif status == "cancelled":
            entry["wire"]["statusMessage"] = "The task was cancelled by request."
        entry["done"].set()
        with contextlib.suppress(Exception):
            await self.client.session.notify("notifications/tasks/status", dict(entry["wire"]))

    def _purge(self) -> None:

        now = time.time()
        for tid, e in list(self._tasks.items()):
            ttl = e["wire"]["ttl"]
            if ttl is not None and now >= e["created"] + ttl / 1000.0:
                e["scope"].cancel()
                del self._tasks[tid]

    def _find(self, params: dict[str, Any] | None) -> dict[str, Any]:
        self._purge()
        tid = params.get("taskId") if params else None
        entry = self._tasks.get(tid) if isinstance(tid, str) else None
        if entry is None:
            raise InvalidParams(message=f"Unknown task: {tid}", data={"taskId": tid})
        return entry

    async def h_get(self, ctx: Any, params: dict[str, Any] | None) -> Any:
        return dict(self._find(params)["wire"])

    async def h_result(self, ctx: Any, params: dict[str, Any] | None) -> Any:

        entry = self._find(params)
        await entry["done"].wait()
        outcome = entry["outcome"]
        if "error" in outcome:
            err = outcome["error"]
            raise ProtocolError(err.get("code"), err.get("message", ""), err.get("data"))
        result = dict(outcome["result"])
        meta = dict(result.get("_meta") or {})
        meta["io.modelcontextprotocol/related-task"] = {"taskId": entry["wire"]["taskId"]}
        result["_meta"] = meta
        return result

    async def h_list(self, ctx: Any, params: dict[str, Any] | None) -> Any:
        if params and params.get("cursor") is not None:
            raise InvalidParams(message="Invalid params: unknown cursor (one page only)")
        self._purge()
        return {"tasks": [dict(e["wire"]) for e in self._tasks.values()]}

    async def h_cancel(self, ctx: Any, params: dict[str, Any] | None) -> Any:
        entry = self._find(params)
        if entry["outcome"] is not None:
            raise InvalidParams(
                message=f"Cannot cancel task {entry['wire']['taskId']}: it is already "
                f"{entry['wire']['status']}"
            )
        outcome = {"error": {"code": -32603, "message": "The task was cancelled."}}
        await self._finish(entry, "cancelled", outcome)
        entry["scope"].cancel()
        return dict(entry["wire"])


def _iso(t: float) -> str:

    return (
        datetime.fromtimestamp(t, timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )
