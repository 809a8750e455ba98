"""Tasks (2025-11-25, experimental): durable, pollable execution of requests."""

from typing import Literal, TypeAlias

from pydantic import Field

from ._base import (
    MCPModel,
    NotificationParams,
    PaginatedRequestParams,
    PaginatedResult,
    RequestParams,
    Result,
    _NotificationBase,
    _RequestBase,
)

__all__ = [
    "RELATED_TASK_META_KEY",
    "CancelTaskRequest",
    "CancelTaskRequestParams",
    "CancelTaskResult",
    "CreateTaskResult",
    "GetTaskPayloadRequest",
    "GetTaskPayloadRequestParams",
    "GetTaskPayloadResult",
    "GetTaskRequest",
    "GetTaskRequestParams",
    "GetTaskResult",
    "ListTasksRequest",
    "ListTasksResult",
    "RelatedTaskMetadata",
    "Task",
    "TaskAugmentedRequestParams",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotification",
    "TaskStatusNotificationParams",
]

#: Where a task is in its life: running, waiting for input, or finished one way or another.
TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]

#: The ``_meta`` key under which :class:`RelatedTaskMetadata` is carried.
RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task"


class TaskMetadata(MCPModel):
    """Asks for task execution of a request; ``ttl`` is how long to keep the task (ms)."""

    ttl: int | None = None


class RelatedTaskMetadata(MCPModel):
    """Links a message to a task (sent in ``_meta`` under the related-task key)."""

    task_id: str = Field(alias="taskId")


class TaskAugmentedRequestParams(RequestParams):
    """Params of a request that may be run as a task."""

    task: TaskMetadata | None = None


class Task(MCPModel):
    """The state of a task: id, status, timestamps, retention and polling hint."""

    task_id: str = Field(alias="taskId")
    status: TaskStatus
    status_message: str | None = Field(default=None, alias="statusMessage")
    created_at: str = Field(alias="createdAt")
    last_updated_at: str = Field(alias="lastUpdatedAt")
    ttl: int | None
    poll_interval: int | None = Field(default=None, alias="pollInterval")


class CreateTaskResult(Result):
    """Answer to a task-augmented request: the task that was created."""

    task: Task


class GetTaskRequestParams(RequestParams):
    """Params of ``tasks/get``."""

    task_id: str = Field(alias="taskId")


class GetTaskRequest(_RequestBase):
    """Asks for the current state of a task."""

    method: Literal["tasks/get"] = "tasks/get"
    params: GetTaskRequestParams


class GetTaskResult(Result, Task):
    """Answer to ``tasks/get``: the task's state."""


class GetTaskPayloadRequestParams(RequestParams):
    """Params of ``tasks/result``."""

    task_id: str = Field(alias="taskId")


class GetTaskPayloadRequest(_RequestBase):
    """Asks for the result of a finished task."""

    method: Literal["tasks/result"] = "tasks/result"
    params: GetTaskPayloadRequestParams


class GetTaskPayloadResult(Result):
    """Answer to ``tasks/result``: shaped like the result of the original request."""


class CancelTaskRequestParams(RequestParams):
    """Params of ``tasks/cancel``."""

    task_id: str = Field(alias="taskId")


class CancelTaskRequest(_RequestBase):
    """Asks to cancel a task."""

    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: CancelTaskRequestParams


class CancelTaskResult(Result, Task):
    """Answer to ``tasks/cancel``: the task's state after cancelling."""


class ListTasksRequest(_RequestBase):
    """Asks for a page of the known tasks."""

    method: Literal["tasks/list"] = "tasks/list"
    params: PaginatedRequestParams | None = None


class ListTasksResult(PaginatedResult):
    """Answer to ``tasks/list``."""

    tasks: list[Task]


class TaskStatusNotificationParams(NotificationParams, Task):
    """Params of ``notifications/tasks/status``: the task's new state."""


class TaskStatusNotification(_NotificationBase):
    """Tells the requestor that a task's status changed (optional to send)."""

    method: Literal["notifications/tasks/status"] = "notifications/tasks/status"
    params: TaskStatusNotificationParams
