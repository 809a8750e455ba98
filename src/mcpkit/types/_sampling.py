"""Sampling: the server asks the client's LLM for a message (optionally with tools)."""

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field

from ._base import MCPModel, Meta, Result, Role, _InputRequestBase
from ._content import AudioContent, ContentBlock, ImageContent, TextContent
from ._tasks import TaskAugmentedRequestParams
from ._tooldefs import Tool

__all__ = [
    "CreateMessageRequest",
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "ModelHint",
    "ModelPreferences",
    "SamplingMessage",
    "SamplingMessageContentBlock",
    "ToolChoice",
    "ToolResultContent",
    "ToolUseContent",
]

_Priority: TypeAlias = Annotated[int | float, Field(ge=0, le=1)]


class ToolUseContent(MCPModel):
    """The model asks to call a tool (sampling with tools)."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]
    meta: Meta | None = Field(default=None, alias="_meta")


class ToolResultContent(MCPModel):
    """The outcome of a tool call, handed back to the model (sampling with tools).

    ``structured_content`` is an object in 2025-11-25, any JSON value from 2026-07-28.
    """

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str = Field(alias="toolUseId")
    content: list[ContentBlock]
    structured_content: Any | None = Field(default=None, alias="structuredContent")
    is_error: bool | None = Field(default=None, alias="isError")
    meta: Meta | None = Field(default=None, alias="_meta")


#: Content allowed in sampling messages, told apart by ``type``.
SamplingMessageContentBlock: TypeAlias = Annotated[
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent,
    Field(discriminator="type"),
]


class SamplingMessage(MCPModel):
    """A message sent to or received from an LLM: a role and one or more content blocks."""

    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    meta: Meta | None = Field(default=None, alias="_meta")


class ModelHint(MCPModel):
    """A hint for model choice; ``name`` is matched as a substring of model names."""

    name: str | None = None


class ModelPreferences(MCPModel):
    """What the server cares about when the client picks a model (all advisory).

    The three priorities range from 0 (unimportant) to 1 (most important); hints are
    tried in order.
    """

    hints: list[ModelHint] | None = None
    cost_priority: _Priority | None = Field(default=None, alias="costPriority")
    speed_priority: _Priority | None = Field(default=None, alias="speedPriority")
    intelligence_priority: _Priority | None = Field(default=None, alias="intelligencePriority")


class ToolChoice(MCPModel):
    """How the model may use the offered tools: ``auto``, ``required`` or ``none``."""

    mode: Literal["auto", "required", "none"] | None = None


class CreateMessageRequestParams(TaskAugmentedRequestParams):
    """Params of ``sampling/createMessage``."""

    messages: list[SamplingMessage]
    model_preferences: ModelPreferences | None = Field(default=None, alias="modelPreferences")
    system_prompt: str | None = Field(default=None, alias="systemPrompt")
    include_context: Literal["none", "thisServer", "allServers"] | None = Field(
        default=None, alias="includeContext"
    )
    temperature: int | float | None = None
    max_tokens: int = Field(alias="maxTokens")
    stop_sequences: list[str] | None = Field(default=None, alias="stopSequences")
    metadata: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = Field(default=None, alias="toolChoice")


class CreateMessageRequest(_InputRequestBase):
    """Asks the client to sample its LLM; the client chooses the model and may involve the user.

    A JSON-RPC request up to 2025-11-25; from 2026-07-28 an entry of
    ``InputRequiredResult.inputRequests`` without ``jsonrpc`` and ``id``.
    """

    method: Literal["sampling/createMessage"] = "sampling/createMessage"
    params: CreateMessageRequestParams


class CreateMessageResult(Result):
    """Answer to ``sampling/createMessage``: the generated message and which model made it."""

    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    model: str
    stop_reason: str | None = Field(default=None, alias="stopReason")
