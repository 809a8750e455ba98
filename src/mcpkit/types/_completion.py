"""Argument completion (``completion/complete``)."""

from typing import Annotated, Literal

from pydantic import Field

from ._base import BaseMetadata, MCPModel, RequestParams, Result, _RequestBase

__all__ = [
    "CompleteRequest",
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "PromptReference",
    "ResourceTemplateReference",
]


class PromptReference(BaseMetadata):
    """Points at a prompt by name (what to complete arguments for)."""

    type: Literal["ref/prompt"] = "ref/prompt"


class ResourceTemplateReference(MCPModel):
    """Points at a resource or resource template by URI (template)."""

    type: Literal["ref/resource"] = "ref/resource"
    uri: str


class CompletionArgument(MCPModel):
    """The argument being completed: its name and what the user typed so far."""

    name: str
    value: str


class CompletionContext(MCPModel):
    """Extra context for a completion: arguments already resolved."""

    arguments: dict[str, str] | None = None


class CompleteRequestParams(RequestParams):
    """Params of ``completion/complete``."""

    ref: Annotated[PromptReference | ResourceTemplateReference, Field(discriminator="type")]
    argument: CompletionArgument
    context: CompletionContext | None = None


class CompleteRequest(_RequestBase):
    """Asks the server for completion options of a prompt or resource-template argument."""

    method: Literal["completion/complete"] = "completion/complete"
    params: CompleteRequestParams


class Completion(MCPModel):
    """Completion values (at most 100), with the total and whether more exist."""

    values: list[str]
    total: int | None = None
    has_more: bool | None = Field(default=None, alias="hasMore")


class CompleteResult(Result):
    """Answer to ``completion/complete``."""

    completion: Completion
