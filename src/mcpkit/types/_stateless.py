"""Stateless MCP (2026-07-28): per-request ``_meta``, ``server/discover``, subscriptions, errors.

There is no ``initialize`` handshake any more: every request names its protocol revision
and the client's capabilities in ``_meta`` (:class:`RequestMetaObject`), results name the
server (:class:`ResultMetaObject`), and a client learns what a server offers with
``server/discover``. Change notifications flow on the stream a ``subscriptions/listen``
request opens. The key names are in :mod:`._metakeys`.
"""

from typing import Literal, TypeAlias

from pydantic import Field
from typing_extensions import TypeAliasType

from ._base import (
    MCPModel,
    Meta,
    NotificationParams,
    RequestId,
    RequestMeta,
    RequestParams,
    Result,
    _CacheHints,
    _NotificationBase,
    _RequestBase,
)
from ._jsonrpc import Error
from ._lifecycle import ClientCapabilities, Implementation, ServerCapabilities
from ._logging import LoggingLevel
from ._metakeys import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
)

__all__ = [
    "HEADER_MISMATCH",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "CacheableResult",
    "DiscoverRequest",
    "DiscoverResult",
    "HeaderMismatchError",
    "HeaderMismatchErrorDetail",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONArray",
    "JSONObject",
    "JSONValue",
    "MetaObject",
    "MethodNotFoundError",
    "MissingRequiredClientCapabilityError",
    "MissingRequiredClientCapabilityErrorData",
    "MissingRequiredClientCapabilityErrorDetail",
    "NotificationMetaObject",
    "ParseError",
    "RequestMetaObject",
    "ResultMetaObject",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotification",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequest",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
    "SubscriptionsListenResultMetaObject",
    "UnsupportedProtocolVersionError",
    "UnsupportedProtocolVersionErrorData",
    "UnsupportedProtocolVersionErrorDetail",
]

# --- JSON values ------------------------------------------------------------------

#: Any JSON value. (The published schema lists string, integer and boolean leaves; JSON
#: numbers and ``null`` are accepted too, as every JSON text may hold them.)
JSONValue = TypeAliasType(
    "JSONValue", "dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None"
)
#: A JSON object: string keys, any JSON values.
JSONObject = TypeAliasType("JSONObject", "dict[str, JSONValue]")
#: A JSON array of any JSON values.
JSONArray = TypeAliasType("JSONArray", "list[JSONValue]")

# --- _meta ------------------------------------------------------------------------

#: The contents of a ``_meta`` member: keys in the format :mod:`._metakeys` checks, values
#: of any kind. Models keep ``_meta`` as such a dict; the ``*MetaObject`` models below give
#: typed access to the keys MCP reserves (``ResultMetaObject.model_validate(result.meta)``).
MetaObject: TypeAlias = Meta


class RequestMetaObject(RequestMeta):
    """The ``_meta`` of a 2026-07-28 request: revision, client capabilities and identity.

    ``protocol_version`` and ``client_capabilities`` are required (capabilities are stated
    on each request, ``{}`` meaning none); ``log_level`` opts in to log messages for this
    request, and ``progress_token`` asks for progress notifications. It may be given as the
    ``meta`` of any request params. Other keys are kept.
    """

    protocol_version: str = Field(alias=PROTOCOL_VERSION_META_KEY)
    client_capabilities: ClientCapabilities = Field(alias=CLIENT_CAPABILITIES_META_KEY)
    client_info: Implementation | None = Field(default=None, alias=CLIENT_INFO_META_KEY)
    log_level: LoggingLevel | None = Field(default=None, alias=LOG_LEVEL_META_KEY)


class ResultMetaObject(MCPModel):
    """The ``_meta`` of a 2026-07-28 result: who the server is (``server_info``).

    Results keep ``_meta`` as a dict; read it with ``ResultMetaObject.model_validate(meta)``
    and write it with ``ResultMetaObject(...).to_wire()``.
    """

    server_info: Implementation | None = Field(default=None, alias=SERVER_INFO_META_KEY)


class NotificationMetaObject(MCPModel):
    """The ``_meta`` of a notification: the subscription stream it was delivered on.

    ``subscription_id`` is the id of the ``subscriptions/listen`` request; it is absent on
    notifications that belong to one request (progress, log messages).
    """

    subscription_id: RequestId | None = Field(default=None, alias=SUBSCRIPTION_ID_META_KEY)


class SubscriptionsListenResultMetaObject(ResultMetaObject):
    """The ``_meta`` of a :class:`SubscriptionsListenResult`: the stream it closes."""

    subscription_id: RequestId = Field(alias=SUBSCRIPTION_ID_META_KEY)


# --- cacheable results and server/discover ----------------------------------------


class CacheableResult(_CacheHints, Result):
    """A result the client may cache: for ``ttl_ms`` milliseconds, shared or not (``cache_scope``).

    ``cache_scope="public"`` lets shared intermediaries serve the answer to anyone;
    ``"private"`` keeps it to one authorization context. The list and read results of
    earlier revisions have no such hints: they carry them as optional members.
    """

    result_type: Literal["complete"] = Field(default="complete", alias="resultType")
    ttl_ms: int = Field(alias="ttlMs", ge=0)
    cache_scope: Literal["private", "public"] = Field(alias="cacheScope")


class DiscoverRequest(_RequestBase):
    """Asks the server for its protocol revisions, capabilities and identity.

    Servers must implement it; clients may call it first to choose a revision (or to probe
    an stdio server for 2026-07-28 support).
    """

    method: Literal["server/discover"] = "server/discover"
    params: RequestParams


class DiscoverResult(CacheableResult):
    """Answer to ``server/discover``: supported revisions, capabilities, instructions.

    The server's identity travels in ``_meta`` (see :class:`ResultMetaObject`).
    """

    supported_versions: list[str] = Field(alias="supportedVersions")
    capabilities: ServerCapabilities
    instructions: str | None = None


# --- subscriptions ----------------------------------------------------------------


class SubscriptionFilter(MCPModel):
    """Which change notifications a listener opts in to (none unless asked for)."""

    tools_list_changed: bool | None = Field(default=None, alias="toolsListChanged")
    prompts_list_changed: bool | None = Field(default=None, alias="promptsListChanged")
    resources_list_changed: bool | None = Field(default=None, alias="resourcesListChanged")
    resource_subscriptions: list[str] | None = Field(default=None, alias="resourceSubscriptions")


class SubscriptionsListenRequestParams(RequestParams):
    """Params of ``subscriptions/listen``: the request ``_meta`` and the notifications wanted."""

    meta: RequestMetaObject = Field(alias="_meta")
    notifications: SubscriptionFilter


class SubscriptionsListenRequest(_RequestBase):
    """Opens a long-lived stream of change notifications (replaces resources/subscribe and
    the HTTP GET stream); its id tags every notification of the stream."""

    method: Literal["subscriptions/listen"] = "subscriptions/listen"
    params: SubscriptionsListenRequestParams


class SubscriptionsAcknowledgedNotificationParams(NotificationParams):
    """Params of ``notifications/subscriptions/acknowledged``: what the server will send."""

    notifications: SubscriptionFilter


class SubscriptionsAcknowledgedNotification(_NotificationBase):
    """The first message of a subscription stream: which requested notifications the server
    honours (those it does not support are left out)."""

    method: Literal["notifications/subscriptions/acknowledged"] = (
        "notifications/subscriptions/acknowledged"
    )
    params: SubscriptionsAcknowledgedNotificationParams


class SubscriptionsListenResult(Result):
    """Answer to ``subscriptions/listen``, sent only when the server ends the stream gracefully.

    ``meta`` is required and names the stream under the subscription-id key (see
    :class:`SubscriptionsListenResultMetaObject`).
    """

    result_type: Literal["complete"] = Field(default="complete", alias="resultType")
    meta: Meta = Field(alias="_meta")


# --- errors -----------------------------------------------------------------------

#: The HTTP headers of a request disagree with its body, or required ones are missing.
HEADER_MISMATCH = -32020
#: The request needs a client capability it did not declare.
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
#: The request's protocol revision is unknown to (or not supported by) the server.
UNSUPPORTED_PROTOCOL_VERSION = -32022


class ParseError(Error):
    """The ``error`` member for text that is not valid JSON (-32700)."""

    code: Literal[-32700] = -32700


class InvalidRequestError(Error):
    """The ``error`` member for a message that is not a valid JSON-RPC request (-32600)."""

    code: Literal[-32600] = -32600


class MethodNotFoundError(Error):
    """The ``error`` member for a method the receiver does not have or offer (-32601)."""

    code: Literal[-32601] = -32601


class InvalidParamsError(Error):
    """The ``error`` member for invalid params: unknown tool or prompt, bad arguments,
    bad cursor, missing resource (2026-07-28), ... (-32602)."""

    code: Literal[-32602] = -32602


class InternalError(Error):
    """The ``error`` member for an unexpected failure of the receiver (-32603)."""

    code: Literal[-32603] = -32603


class HeaderMismatchErrorDetail(Error):
    """The ``error`` member of a -32020 error (HTTP headers disagree with the body)."""

    code: Literal[-32020] = -32020


class HeaderMismatchError(MCPModel):
    """An error response: the request's HTTP headers do not match its body (HTTP 400)."""

    _mcp_keep_none = frozenset({"id"})

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | None = None
    error: HeaderMismatchErrorDetail


class MissingRequiredClientCapabilityErrorData(MCPModel):
    """``data`` of a -32021 error: the capabilities the request needs."""

    required_capabilities: ClientCapabilities = Field(alias="requiredCapabilities")


class MissingRequiredClientCapabilityErrorDetail(Error):
    """The ``error`` member of a -32021 error."""

    code: Literal[-32021] = -32021
    data: MissingRequiredClientCapabilityErrorData


class MissingRequiredClientCapabilityError(MCPModel):
    """An error response: serving the request needs a capability the client did not declare."""

    _mcp_keep_none = frozenset({"id"})

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | None = None
    error: MissingRequiredClientCapabilityErrorDetail


class UnsupportedProtocolVersionErrorData(MCPModel):
    """``data`` of a -32022 error: the revision asked for and those the server supports."""

    requested: str
    supported: list[str]


class UnsupportedProtocolVersionErrorDetail(Error):
    """The ``error`` member of a -32022 error."""

    code: Literal[-32022] = -32022
    data: UnsupportedProtocolVersionErrorData


class UnsupportedProtocolVersionError(MCPModel):
    """An error response: the server does not support the request's protocol revision
    (HTTP 400); the client may retry with one of ``error.data.supported``."""

    _mcp_keep_none = frozenset({"id"})

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | None = None
    error: UnsupportedProtocolVersionErrorDetail
