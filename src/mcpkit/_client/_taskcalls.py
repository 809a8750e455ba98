"""The tasks a :class:`Client` starts and follows: tools run as tasks, handles by task id,
``tasks/list`` and the server's ``notifications/tasks/status``.

Under a handshake revision a tool runs as a task when asked (``tools/call`` with ``task``,
if the server declares ``tasks.requests.tools.call``); the client keeps one
:class:`TaskHandle` per task id, which the status notifications update. Under the stateless
revision (2026-07-28) the tasks extension decides, and the handles are
:class:`ExtensionTaskHandle` (not kept: the extension sends no status notifications).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError as PydanticValidationError

from .._exceptions import CapabilityError, InvalidResponse
from ..types import Task
from ..types._extensions import DetailedTask
from ._extensions import ExtensionTaskHandle, parse_detailed
from ._lists import MAX_PAGES
from ._tasks import TaskHandle, parse_task
from ._util import short_errors

if TYPE_CHECKING:
    from ._face import ClientLike

logger = logging.getLogger("mcpkit.client")


class ClientTasks:
    """The task requests of one :class:`Client`, and the handles on its tasks by id."""

    def __init__(self, client: ClientLike) -> None:
        self.client = client
        #: The handles on the tasks of the handshake era, by task id (status notifications
        #: update them).
        self.handles: dict[str, TaskHandle] = {}

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        ttl: int | None,
        timeout: Any,
        meta: Mapping[str, Any] | None,
    ) -> TaskHandle | ExtensionTaskHandle:
        """``tools/call`` as a task (see :meth:`Client.call_tool_as_task`)."""
        client = self.client
        if client.session.stateless:
            return await self._extension_call(name, arguments, timeout, meta)
        caps = client.session.server_capabilities
        tasks_cap = caps.get("tasks") if isinstance(caps, dict) else None
        requests = tasks_cap.get("requests") if isinstance(tasks_cap, dict) else None
        tools_cap = requests.get("tools") if isinstance(requests, dict) else None
        if not isinstance(tools_cap, dict) or not isinstance(tools_cap.get("call"), dict):
            raise CapabilityError(
                "the server does not declare tasks.requests.tools.call: it cannot run tools as tasks"
            )
        params: dict[str, Any] = {"name": name, "task": {} if ttl is None else {"ttl": ttl}}
        if arguments is not None:
            params["arguments"] = arguments if type(arguments) is dict else dict(arguments)
        if meta:
            params["_meta"] = dict(meta)
        raw = await client.send_request("tools/call", params, timeout=timeout)
        task_raw = raw.get("task") if isinstance(raw, dict) else None
        if task_raw is None:
            raise InvalidResponse(f"tools/call {name!r} as a task: the answer has no 'task'")
        return self.handle(parse_task(task_raw, "tools/call"), name)

    async def _extension_call(
        self, name: str, arguments: Mapping[str, Any] | None, timeout: Any, meta: Any
    ) -> ExtensionTaskHandle:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if meta:
            params["_meta"] = dict(meta)
        raw = await self.client.send_request("tools/call", params, timeout=timeout)
        if isinstance(raw, dict) and raw.get("resultType") == "task":
            return ExtensionTaskHandle(self.client, parse_detailed(raw, "tools/call"), name)
        done = DetailedTask(task_id="", status="completed", result=raw)
        return ExtensionTaskHandle(self.client, done, name)

    def task(self, task_id: str, tool: str | None) -> TaskHandle | ExtensionTaskHandle:
        """The handle on a task known by its id (see :meth:`Client.task`)."""
        if self.client.session.stateless:
            unknown = DetailedTask(task_id=task_id, status="working")
            return ExtensionTaskHandle(self.client, unknown, tool)
        handle = self.handles.get(task_id)
        if handle is None:
            placeholder = Task(
                task_id=task_id,
                status="working",
                created_at="1970-01-01T00:00:00Z",
                last_updated_at="1970-01-01T00:00:00Z",
                ttl=None,
            )
            handle = self.handle(placeholder, tool)
        return handle

    def handle(self, task: Task, tool: str | None) -> TaskHandle:
        """A new handle on ``task``, kept by its id."""
        handle = TaskHandle(self.client, task, tool)
        self.handles[task.task_id] = handle
        return handle

    async def list_page(self, cursor: str | None, timeout: Any) -> tuple[list[Task], str | None]:
        """One page of ``tasks/list``: the tasks and the cursor of the next page (or None)."""
        raw = await self.client.send_request(
            "tasks/list", {"cursor": cursor} if cursor else None, timeout=timeout
        )
        if not isinstance(raw, dict) or not isinstance(raw.get("tasks"), list):
            raise InvalidResponse("tasks/list: the answer has no 'tasks' list")
        tasks = [parse_task(t, "tasks/list") for t in raw["tasks"]]
        nxt = raw.get("nextCursor")
        return tasks, nxt if isinstance(nxt, str) else None

    async def list_all(self, timeout: Any) -> list[Task]:
        """Every page of ``tasks/list`` (a server looping on cursors is refused)."""
        tasks: list[Task] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            page, cursor = await self.client.list_tasks_page(cursor, timeout=timeout)
            tasks.extend(page)
            if cursor is None:
                return tasks
            if cursor in seen:
                raise InvalidResponse(f"tasks/list: the server repeated the cursor {cursor!r}")
            seen.add(cursor)
        raise InvalidResponse(f"tasks/list: more than {MAX_PAGES} pages; giving up")

    async def on_status(self, params: dict[str, Any] | None) -> None:
        """``notifications/tasks/status``: update the handle on that task, if we hold one."""
        try:
            task = Task.model_validate(params or {})
        except PydanticValidationError as e:
            logger.warning("dropped malformed notifications/tasks/status: %s", short_errors(e))
            return
        handle = self.handles.get(task.task_id)
        if handle is not None:
            handle._update(task)
