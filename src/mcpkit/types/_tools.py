"""Tools: listing them, describing them, calling them."""

from typing import Any, Literal

from pydantic import Field

from ._base import (
    BaseMetadata,
    Icons,
    MCPModel,
    Meta,
    NotificationParams,
    PaginatedRequestParams,
    PaginatedResult,
    Result,
    _NotificationBase,
    _RequestBase,
)
from ._content import ContentBlock
from ._tasks import TaskAugmentedRequestParams

__all__ = [
    "CallToolRequest",
    "CallToolRequestParams",
    "CallToolResult",
    "ListToolsRequest",
    "ListToolsResult",
    "ObjectSchema",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
    "ToolListChangedNotification",
]


class ObjectSchema(MCPModel):
    """A JSON Schema describing an object (a tool's input or output).

    Only the top-level keywords MCP names are fields; every other JSON Schema keyword is
    kept as an extra member.
    """

    dialect: str | None = Field(default=None, alias="$schema")
    type: Literal["object"] = "object"
    properties: dict[str, Any] | None = None
    required: list[str] | None = None


class ToolAnnotations(MCPModel):
    """Hints about a tool's behaviour (read-only, destructive, idempotent, open-world).

    They are hints only: a client must not trust them from an untrusted server.
    """

    title: str | None = None
    read_only_hint: bool | None = Field(default=None, alias="readOnlyHint")
    destructive_hint: bool | None = Field(default=None, alias="destructiveHint")
    idempotent_hint: bool | None = Field(default=None, alias="idempotentHint")
    open_world_hint: bool | None = Field(default=None, alias="openWorldHint")


class ToolExecution(MCPModel):
    """How a tool may be executed: whether it supports being run as a task."""

    task_support: Literal["forbidden", "optional", "required"] | None = Field(
        default=None, alias="taskSupport"
    )


class Tool(BaseMetadata, Icons):
    """A tool the server offers: name, description, input (and output) schema, hints."""

    description: str | None = None
    input_schema: ObjectSchema = Field(alias="inputSchema")
    output_schema: ObjectSchema | None = Field(default=None, alias="outputSchema")
    execution: ToolExecution | None = None
    annotations: ToolAnnotations | None = None
    meta: Meta | None = Field(default=None, alias="_meta")


class ListToolsRequest(_RequestBase):
    """Asks the server for (a page of) its tools."""

    method: Literal["tools/list"] = "tools/list"
    params: PaginatedRequestParams | None = None


class ListToolsResult(PaginatedResult):
    """Answer to ``tools/list``."""

    tools: list[Tool]


class CallToolRequestParams(TaskAugmentedRequestParams):
    """Params of ``tools/call``: the tool's name and its arguments."""

    name: str
    arguments: dict[str, Any] | None = None


class CallToolRequest(_RequestBase):
    """Asks the server to run one of its tools."""

    method: Literal["tools/call"] = "tools/call"
    params: CallToolRequestParams


class CallToolResult(Result):
    """Answer to ``tools/call``: content blocks, optional structured output, error flag.

    Errors raised by the tool itself belong here with ``is_error=True`` (so the model can
    see them), not in a JSON-RPC error.
    """

    content: list[ContentBlock]
    structured_content: dict[str, Any] | None = Field(default=None, alias="structuredContent")
    is_error: bool | None = Field(default=None, alias="isError")


class ToolListChangedNotification(_NotificationBase):
    """Tells the client the server's list of tools changed."""

    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: NotificationParams | None = None
