"""Lifecycle: ``initialize``, capabilities, implementation info, ``ping``."""

from typing import Any, Literal

from pydantic import Field

from ._base import (
    BaseMetadata,
    Icons,
    MCPModel,
    NotificationParams,
    RequestParams,
    Result,
    _NotificationBase,
    _RequestBase,
)

__all__ = [
    "ClientCapabilities",
    "ClientTaskRequestsCapability",
    "ClientTasksCapability",
    "ElicitationCapability",
    "Implementation",
    "InitializeRequest",
    "InitializeRequestParams",
    "InitializeResult",
    "InitializedNotification",
    "PingRequest",
    "PromptsCapability",
    "ResourcesCapability",
    "RootsCapability",
    "SamplingCapability",
    "ServerCapabilities",
    "ServerTaskRequestsCapability",
    "ServerTasksCapability",
    "TaskElicitationCapability",
    "TaskSamplingCapability",
    "TaskToolsCapability",
    "ToolsCapability",
]

_Flag = dict[str, Any]


class Implementation(BaseMetadata, Icons):
    """Who is speaking: name and version of a client or server, and how to show it."""

    version: str
    description: str | None = None
    website_url: str | None = Field(default=None, alias="websiteUrl")


class RootsCapability(MCPModel):
    """The client can list roots (and may notify when they change)."""

    list_changed: bool | None = Field(default=None, alias="listChanged")


class SamplingCapability(MCPModel):
    """The client can sample its LLM; ``tools`` and ``context`` widen what it accepts."""

    context: _Flag | None = None
    tools: _Flag | None = None


class ElicitationCapability(MCPModel):
    """The client can elicit user input; an empty object means form mode only."""

    form: _Flag | None = None
    url: _Flag | None = None


class TaskElicitationCapability(MCPModel):
    """Elicitation requests the client can run as tasks."""

    create: _Flag | None = None


class TaskSamplingCapability(MCPModel):
    """Sampling requests the client can run as tasks."""

    create_message: _Flag | None = Field(default=None, alias="createMessage")


class ClientTaskRequestsCapability(MCPModel):
    """Which server-to-client requests the client can run as tasks."""

    elicitation: TaskElicitationCapability | None = None
    sampling: TaskSamplingCapability | None = None


class ClientTasksCapability(MCPModel):
    """The client supports tasks: listing, cancelling, and which requests."""

    list_: _Flag | None = Field(default=None, alias="list")
    cancel: _Flag | None = None
    requests: ClientTaskRequestsCapability | None = None


class ClientCapabilities(MCPModel):
    """What a client supports; the set is open, extra capabilities are kept.

    ``extensions`` (2026-07-28) maps extension ids (``io.modelcontextprotocol/ui``) to
    their settings; ``tasks`` is 2025-11-25 only.
    """

    experimental: dict[str, _Flag] | None = None
    extensions: dict[str, _Flag] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: ClientTasksCapability | None = None


class PromptsCapability(MCPModel):
    """The server offers prompts (and may notify when the list changes)."""

    list_changed: bool | None = Field(default=None, alias="listChanged")


class ResourcesCapability(MCPModel):
    """The server offers resources; it may support subscriptions and list-change notices."""

    subscribe: bool | None = None
    list_changed: bool | None = Field(default=None, alias="listChanged")


class ToolsCapability(MCPModel):
    """The server offers tools (and may notify when the list changes)."""

    list_changed: bool | None = Field(default=None, alias="listChanged")


class TaskToolsCapability(MCPModel):
    """Tool requests the server can run as tasks."""

    call: _Flag | None = None


class ServerTaskRequestsCapability(MCPModel):
    """Which client-to-server requests the server can run as tasks."""

    tools: TaskToolsCapability | None = None


class ServerTasksCapability(MCPModel):
    """The server supports tasks: listing, cancelling, and which requests."""

    list_: _Flag | None = Field(default=None, alias="list")
    cancel: _Flag | None = None
    requests: ServerTaskRequestsCapability | None = None


class ServerCapabilities(MCPModel):
    """What a server supports; the set is open, extra capabilities are kept.

    ``extensions`` (2026-07-28) maps extension ids to their settings; ``tasks`` is
    2025-11-25 only.
    """

    experimental: dict[str, _Flag] | None = None
    extensions: dict[str, _Flag] | None = None
    logging: _Flag | None = None
    completions: _Flag | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: ServerTasksCapability | None = None


class InitializeRequestParams(RequestParams):
    """Params of ``initialize``: the client's newest revision, capabilities and identity."""

    protocol_version: str = Field(alias="protocolVersion")
    capabilities: ClientCapabilities
    client_info: Implementation = Field(alias="clientInfo")


class InitializeRequest(_RequestBase):
    """The client's first request: proposes a revision and states its capabilities."""

    method: Literal["initialize"] = "initialize"
    params: InitializeRequestParams


class InitializeResult(Result):
    """Answer to ``initialize``: the revision to use, server capabilities and identity."""

    protocol_version: str = Field(alias="protocolVersion")
    capabilities: ServerCapabilities
    server_info: Implementation = Field(alias="serverInfo")
    instructions: str | None = None


class InitializedNotification(_NotificationBase):
    """Sent by the client once initialization is done; normal operation starts."""

    method: Literal["notifications/initialized"] = "notifications/initialized"
    params: NotificationParams | None = None


class PingRequest(_RequestBase):
    """Checks the peer is alive; it must answer promptly with an empty result."""

    method: Literal["ping"] = "ping"
    params: RequestParams | None = None
