"""Which messages each side sends, the typed success responses, and method-name lookups."""

from typing import Annotated, Any, TypeAlias, TypeVar

from pydantic import Discriminator, Field, Tag

from ._base import MCPModel, Result
from ._completion import CompleteRequest, CompleteResult
from ._elicitation import ElicitationCompleteNotification, ElicitRequest, ElicitResult
from ._jsonrpc import JSONRPCResultResponse
from ._lifecycle import InitializedNotification, InitializeRequest, InitializeResult, PingRequest
from ._logging import LoggingMessageNotification, SetLevelRequest
from ._mrtr import InputRequiredResult
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
from ._stateless import (
    DiscoverRequest,
    DiscoverResult,
    SubscriptionsAcknowledgedNotification,
    SubscriptionsListenRequest,
    SubscriptionsListenResult,
)
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
    "CallToolResultResponse",
    "ClientNotification",
    "ClientRequest",
    "ClientResult",
    "CompleteResultResponse",
    "DiscoverResultResponse",
    "GetPromptResultResponse",
    "ListPromptsResultResponse",
    "ListResourceTemplatesResultResponse",
    "ListResourcesResultResponse",
    "ListToolsResultResponse",
    "ReadResourceResultResponse",
    "ServerNotification",
    "ServerRequest",
    "ServerResult",
    "SubscriptionsListenResultResponse",
]

# The unions hold the messages of every revision mcpkit models (2025-11-25 and 2026-07-28).

#: A request a client sends, told apart by ``method``.
ClientRequest: TypeAlias = Annotated[
    InitializeRequest
    | PingRequest
    | DiscoverRequest
    | SubscriptionsListenRequest
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
    | ElicitationCompleteNotification
    | SubscriptionsAcknowledgedNotification,
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
    # Last: results of 2025-11-25 match as before (the first of equal matches wins).
    | InputRequiredResult
    | DiscoverResult
    | SubscriptionsListenResult
)

# --- typed success responses (2026-07-28) ---------------------------------------------

_R = TypeVar("_R", bound=Result)


def _result_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "input_required" if value.get("resultType") == "input_required" else "complete"
    return "input_required" if isinstance(value, InputRequiredResult) else "complete"


#: The answer to a request that may need input first: an :class:`InputRequiredResult`
#: (``resultType == "input_required"``) or the method's own result.
_OrInputRequired: TypeAlias = Annotated[
    Annotated[InputRequiredResult, Tag("input_required")] | Annotated[_R, Tag("complete")],
    Discriminator(_result_kind),
]


class CallToolResultResponse(JSONRPCResultResponse):
    """A successful response to ``tools/call``: the tool's result, or input it needs first."""

    result: _OrInputRequired[CallToolResult]


class GetPromptResultResponse(JSONRPCResultResponse):
    """A successful response to ``prompts/get``: the prompt, or input it needs first."""

    result: _OrInputRequired[GetPromptResult]


class ReadResourceResultResponse(JSONRPCResultResponse):
    """A successful response to ``resources/read``: the contents, or input needed first."""

    result: _OrInputRequired[ReadResourceResult]


class CompleteResultResponse(JSONRPCResultResponse):
    """A successful response to ``completion/complete``."""

    result: CompleteResult


class DiscoverResultResponse(JSONRPCResultResponse):
    """A successful response to ``server/discover``."""

    result: DiscoverResult


class ListPromptsResultResponse(JSONRPCResultResponse):
    """A successful response to ``prompts/list``."""

    result: ListPromptsResult


class ListResourcesResultResponse(JSONRPCResultResponse):
    """A successful response to ``resources/list``."""

    result: ListResourcesResult


class ListResourceTemplatesResultResponse(JSONRPCResultResponse):
    """A successful response to ``resources/templates/list``."""

    result: ListResourceTemplatesResult


class ListToolsResultResponse(JSONRPCResultResponse):
    """A successful response to ``tools/list``."""

    result: ListToolsResult


class SubscriptionsListenResultResponse(JSONRPCResultResponse):
    """A successful response to ``subscriptions/listen``: the server ended the stream."""

    result: SubscriptionsListenResult


# --- method-name lookups (2025-11-25 methods) ----------------------------------------

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
