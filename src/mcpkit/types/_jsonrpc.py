"""JSON-RPC 2.0 envelopes: requests, notifications, responses, errors."""

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, SerializeAsAny, Tag

from ._base import MCPModel, RequestId, Result
from ._elicitation import ElicitRequestURLParams

__all__ = [
    "JSONRPC_VERSION",
    "URL_ELICITATION_REQUIRED",
    "Error",
    "JSONRPCErrorResponse",
    "JSONRPCMessage",
    "JSONRPCNotification",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "JSONRPCResultResponse",
    "URLElicitationRequiredError",
    "URLElicitationRequiredErrorData",
    "URLElicitationRequiredErrorDetail",
]

JSONRPC_VERSION = "2.0"
#: Error code telling the client it must finish a URL-mode elicitation first.
URL_ELICITATION_REQUIRED = -32042


class JSONRPCRequest(MCPModel):
    """Any request: expects a response carrying the same ``id``."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    method: str
    params: dict[str, Any] | None = None


class JSONRPCNotification(MCPModel):
    """Any notification: has no ``id`` and gets no response."""

    jsonrpc: Literal["2.0"] = "2.0"
    method: str
    params: dict[str, Any] | None = None


class JSONRPCResultResponse(MCPModel):
    """A successful response: the ``result`` of the request with this ``id``."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: SerializeAsAny[Result]


class Error(MCPModel):
    """The ``error`` member of an error response: code, short message, optional data."""

    code: int
    message: str
    data: Any = None


class JSONRPCErrorResponse(MCPModel):
    """A failed request. ``id`` may be missing (or null) when the request could not be read."""

    _mcp_keep_none = frozenset({"id"})

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | None = None
    error: SerializeAsAny[Error]


class URLElicitationRequiredErrorData(MCPModel):
    """``data`` of a -32042 error: the URL elicitations the user must complete."""

    elicitations: list[ElicitRequestURLParams]


class URLElicitationRequiredErrorDetail(Error):
    """The ``error`` member of a -32042 error."""

    code: Literal[-32042] = -32042
    data: URLElicitationRequiredErrorData


class URLElicitationRequiredError(MCPModel):
    """An error response saying the request needs URL-mode elicitation to happen first."""

    _mcp_keep_none = frozenset({"id"})

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | None = None
    error: URLElicitationRequiredErrorDetail


def _response_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "error" if "error" in value else "result"
    return "error" if isinstance(value, JSONRPCErrorResponse) else "result"


def _message_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        if "method" in value:
            return "request" if "id" in value else "notification"
        return "error" if "error" in value else "result"
    if isinstance(value, JSONRPCRequest):
        return "request"
    if isinstance(value, JSONRPCNotification):
        return "notification"
    if isinstance(value, JSONRPCErrorResponse):
        return "error"
    if isinstance(value, JSONRPCResultResponse):
        return "result"
    return None


#: A response: the result, or the error, of one request.
JSONRPCResponse: TypeAlias = Annotated[
    Annotated[JSONRPCResultResponse, Tag("result")] | Annotated[JSONRPCErrorResponse, Tag("error")],
    Discriminator(_response_tag),
]

#: Anything that can travel on the wire, told apart by its members (no trial parsing).
JSONRPCMessage: TypeAlias = Annotated[
    Annotated[JSONRPCRequest, Tag("request")]
    | Annotated[JSONRPCNotification, Tag("notification")]
    | Annotated[JSONRPCResultResponse, Tag("result")]
    | Annotated[JSONRPCErrorResponse, Tag("error")],
    Discriminator(_message_tag),
]
