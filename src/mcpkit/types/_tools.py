"""Tools: listing them and calling them (what a tool looks like is in :mod:`._tooldefs`)."""

from typing import Any, Literal

from pydantic import Field

from ._base import (
    NotificationParams,
    PaginatedRequestParams,
    PaginatedResult,
    Result,
    _CacheHints,
    _NotificationBase,
    _RequestBase,
)
from ._content import ContentBlock
from ._mrtr import _InputResponseFields
from ._tasks import TaskAugmentedRequestParams
from ._tooldefs import ObjectSchema, Tool, ToolAnnotations, ToolExecution, ToolSchema

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
    "ToolSchema",
]


class ListToolsRequest(_RequestBase):
    """Asks the server for (a page of) its tools."""

    method: Literal["tools/list"] = "tools/list"
    params: PaginatedRequestParams | None = None


class ListToolsResult(_CacheHints, PaginatedResult):
    """Answer to ``tools/list`` (2026-07-28 adds the caching hints ``ttlMs`` and ``cacheScope``)."""

    tools: list[Tool]


class CallToolRequestParams(_InputResponseFields, TaskAugmentedRequestParams):
    """Params of ``tools/call``: the tool's name and its arguments.

    A retry after an ``InputRequiredResult`` (2026-07-28) adds ``inputResponses`` and
    ``requestState``; ``task`` is 2025-11-25 only.
    """

    name: str
    arguments: dict[str, Any] | None = None


class CallToolRequest(_RequestBase):
    """Asks the server to run one of its tools."""

    method: Literal["tools/call"] = "tools/call"
    params: CallToolRequestParams


class CallToolResult(Result):
    """Answer to ``tools/call``: content blocks, optional structured output, error flag.

    Errors raised by the tool itself belong here with ``is_error=True`` (so the model can
    see them), not in a JSON-RPC error. ``structured_content`` is an object up to
    2025-11-25 and any JSON value from 2026-07-28 (a ``null`` read off the wire is kept).
    """

    content: list[ContentBlock]
    structured_content: Any | None = Field(default=None, alias="structuredContent")
    is_error: bool | None = Field(default=None, alias="isError")


class ToolListChangedNotification(_NotificationBase):
    """Tells the client the server's list of tools changed."""

    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: NotificationParams | None = None
