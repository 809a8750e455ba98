"""Which messages each side sends, and method-name lookups."""

from typing import Annotated, TypeAlias

from pydantic import Field

from ._base import MCPModel, Result
from ._completion import CompleteRequest, CompleteResult
from ._elicitation import ElicitationCompleteNotification, ElicitRequest, ElicitResult
from ._lifecycle import InitializedNotification, InitializeRequest, InitializeResult, PingRequest
from ._logging import LoggingMessageNotification, SetLevelRequest
from ._notifications import CancelledNotification, ProgressNotification
from ._prompts import (
    GetPromptRequest,
    GetPromptResult,
    ListPromptsRequest,
    ListPromptsResult,
    PromptListChangedNotification,
)
from ._resources import (
    ListResourcesRequest,
    ListResourcesResult,
    ListResourceTemplatesRequest,
    ListResourceTemplatesResult,
    ReadResourceRequest,
    ReadResourceResult,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    SubscribeRequest,
    UnsubscribeRequest,
)
from ._roots import ListRootsRequest, ListRootsResult, RootsListChangedNotification
from ._sampling import CreateMessageRequest, CreateMessageResult
from ._tasks import (
    CancelTaskRequest,
    CancelTaskResult,
    GetTaskPayloadRequest,
    GetTaskPayloadResult,
    GetTaskRequest,
    GetTaskResult,
    ListTasksRequest,
    ListTasksResult,
    TaskStatusNotification,
)
from ._tools import (
    CallToolRequest,
    CallToolResult,
    ListToolsRequest,
    ListToolsResult,
    ToolListChangedNotification,
)

__all__ = [
    "NOTIFICATION_TYPES",
    "REQUEST_TYPES",
    "RESULT_TYPES",
    "ClientNotification",
    "ClientRequest",
    "ClientResult",
    "ServerNotification",
    "ServerRequest",
    "ServerResult",
]

#: A request a client sends, told apart by ``method``.
ClientRequest: TypeAlias = Annotated[
    InitializeRequest
    | PingRequest
    | ListResourcesRequest
    | ListResourceTemplatesRequest
    | ReadResourceRequest
    | SubscribeRequest
    | UnsubscribeRequest
    | ListPromptsRequest
    | GetPromptRequest
    | ListToolsRequest
    | CallToolRequest
    | GetTaskRequest
    | GetTaskPayloadRequest
    | CancelTaskRequest
    | ListTasksRequest
    | SetLevelRequest
    | CompleteRequest,
    Field(discriminator="method"),
]

#: A request a server sends, told apart by ``method``.
ServerRequest: TypeAlias = Annotated[
    PingRequest
    | GetTaskRequest
    | GetTaskPayloadRequest
    | CancelTaskRequest
    | ListTasksRequest
    | CreateMessageRequest
    | ListRootsRequest
    | ElicitRequest,
    Field(discriminator="method"),
]

#: A notification a client sends, told apart by ``method``.
ClientNotification: TypeAlias = Annotated[
    CancelledNotification
    | InitializedNotification
    | ProgressNotification
    | TaskStatusNotification
    | RootsListChangedNotification,
    Field(discriminator="method"),
]

#: A notification a server sends, told apart by ``method``.
ServerNotification: TypeAlias = Annotated[
    CancelledNotification
    | ProgressNotification
    | ResourceListChangedNotification
    | ResourceUpdatedNotification
    | PromptListChangedNotification
    | ToolListChangedNotification
    | TaskStatusNotification
    | LoggingMessageNotification
    | ElicitationCompleteNotification,
    Field(discriminator="method"),
]

#: A result a client sends. Results carry no method: prefer ``RESULT_TYPES[method]``.
ClientResult: TypeAlias = (
    GetTaskResult
    | GetTaskPayloadResult
    | CancelTaskResult
    | ListTasksResult
    | CreateMessageResult
    | ListRootsResult
    | ElicitResult
    | Result
)

#: A result a server sends. Results carry no method: prefer ``RESULT_TYPES[method]``.
ServerResult: TypeAlias = (
    InitializeResult
    | ListResourcesResult
    | ListResourceTemplatesResult
    | ReadResourceResult
    | ListPromptsResult
    | GetPromptResult
    | ListToolsResult
    | CallToolResult
    | GetTaskResult
    | GetTaskPayloadResult
    | CancelTaskResult
    | ListTasksResult
    | CompleteResult
    | Result
)

_REQUESTS: tuple[type[MCPModel], ...] = (
    InitializeRequest,
    PingRequest,
    ListResourcesRequest,
    ListResourceTemplatesRequest,
    ReadResourceRequest,
    SubscribeRequest,
    UnsubscribeRequest,
    ListPromptsRequest,
    GetPromptRequest,
    ListToolsRequest,
    CallToolRequest,
    GetTaskRequest,
    GetTaskPayloadRequest,
    CancelTaskRequest,
    ListTasksRequest,
    SetLevelRequest,
    CompleteRequest,
    CreateMessageRequest,
    ListRootsRequest,
    ElicitRequest,
)

_NOTIFICATIONS: tuple[type[MCPModel], ...] = (
    CancelledNotification,
    InitializedNotification,
    ProgressNotification,
    TaskStatusNotification,
    RootsListChangedNotification,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    PromptListChangedNotification,
    ToolListChangedNotification,
    LoggingMessageNotification,
    ElicitationCompleteNotification,
)

#: Request model by method name (``"tools/call"`` -> :class:`CallToolRequest`).
REQUEST_TYPES: dict[str, type[MCPModel]] = {
    cls.model_fields["method"].default: cls for cls in _REQUESTS
}
#: Notification model by method name.
NOTIFICATION_TYPES: dict[str, type[MCPModel]] = {
    cls.model_fields["method"].default: cls for cls in _NOTIFICATIONS
}
#: Result model by the method of the request it answers. A task-augmented request is
#: answered with :class:`CreateTaskResult` instead.
RESULT_TYPES: dict[str, type[Result]] = {
    "initialize": InitializeResult,
    "ping": Result,
    "resources/list": ListResourcesResult,
    "resources/templates/list": ListResourceTemplatesResult,
    "resources/read": ReadResourceResult,
    "resources/subscribe": Result,
    "resources/unsubscribe": Result,
    "prompts/list": ListPromptsResult,
    "prompts/get": GetPromptResult,
    "tools/list": ListToolsResult,
    "tools/call": CallToolResult,
    "tasks/get": GetTaskResult,
    "tasks/result": GetTaskPayloadResult,
    "tasks/cancel": CancelTaskResult,
    "tasks/list": ListTasksResult,
    "logging/setLevel": Result,
    "completion/complete": CompleteResult,
    "sampling/createMessage": CreateMessageResult,
    "roots/list": ListRootsResult,
    "elicitation/create": ElicitResult,
}
