"""Tools: listing them and calling them (what a tool looks like is in :mod:`._tooldefs`)."""

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

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


def _false_for_none(value: Any) -> Any:
    return False if value is None else value


class CallToolResult(Result):
    """Answer to ``tools/call``: content blocks, optional structured output, error flag.

    Errors raised by the tool itself belong here with ``is_error=True`` (so the model can
    see them), not in a JSON-RPC error. ``structured_content`` is an object up to
    2025-11-25 and any JSON value from 2026-07-28 (a ``null`` read off the wire is kept).
    ``is_error`` is ``False`` when the server left ``isError`` out (the schema's default);
    a result written back leaves it out again unless it was set.
    """

    content: list[ContentBlock]
    structured_content: Any | None = Field(default=None, alias="structuredContent")
    # A ``null`` some peer sends reads as the default, as it did when the field was optional.
    is_error: Annotated[bool, BeforeValidator(_false_for_none)] = Field(
        default=False, alias="isError"
    )


# ``is_error=None`` keeps meaning "absent" when built in Python, like every optional member
# (its default is not None, so MCPModel does not count it among them).
CallToolResult._mcp_drop_none = CallToolResult._mcp_drop_none | {"is_error", "isError"}


class ToolListChangedNotification(_NotificationBase):
    """Tells the client the server's list of tools changed."""

    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: NotificationParams | None = None
