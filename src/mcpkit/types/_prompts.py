"""Prompts: listing prompt templates and getting them filled in."""

from typing import Literal

from pydantic import Field

from ._base import (
    BaseMetadata,
    Icons,
    MCPModel,
    Meta,
    NotificationParams,
    PaginatedRequestParams,
    PaginatedResult,
    RequestParams,
    Result,
    Role,
    _CacheHints,
    _NotificationBase,
    _RequestBase,
)
from ._content import ContentBlock
from ._mrtr import _InputResponseFields

__all__ = [
    "GetPromptRequest",
    "GetPromptRequestParams",
    "GetPromptResult",
    "ListPromptsRequest",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptListChangedNotification",
    "PromptMessage",
]


class PromptArgument(BaseMetadata):
    """An argument a prompt template accepts."""

    description: str | None = None
    required: bool | None = None


class Prompt(BaseMetadata, Icons):
    """A prompt or prompt template the server offers."""

    description: str | None = None
    arguments: list[PromptArgument] | None = None
    meta: Meta | None = Field(default=None, alias="_meta")


class PromptMessage(MCPModel):
    """One message of a prompt; unlike a sampling message it may embed resources."""

    role: Role
    content: ContentBlock


class ListPromptsRequest(_RequestBase):
    """Asks the server for (a page of) its prompts."""

    method: Literal["prompts/list"] = "prompts/list"
    params: PaginatedRequestParams | None = None


class ListPromptsResult(_CacheHints, PaginatedResult):
    """Answer to ``prompts/list`` (2026-07-28 adds the caching hints ``ttlMs`` and ``cacheScope``)."""

    prompts: list[Prompt]


class GetPromptRequestParams(_InputResponseFields, RequestParams):
    """Params of ``prompts/get``: the prompt's name and string arguments for it.

    A retry after an ``InputRequiredResult`` (2026-07-28) adds ``inputResponses`` and
    ``requestState``.
    """

    name: str
    arguments: dict[str, str] | None = None


class GetPromptRequest(_RequestBase):
    """Asks the server for a prompt, filled in with the given arguments."""

    method: Literal["prompts/get"] = "prompts/get"
    params: GetPromptRequestParams


class GetPromptResult(Result):
    """Answer to ``prompts/get``: the prompt's messages."""

    description: str | None = None
    messages: list[PromptMessage]


class PromptListChangedNotification(_NotificationBase):
    """Tells the client the server's list of prompts changed."""

    method: Literal["notifications/prompts/list_changed"] = "notifications/prompts/list_changed"
    params: NotificationParams | None = None
