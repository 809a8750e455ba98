"""Every exception mcpkit raises, in one tree.

::

    MCPError                         anything mcpkit raises on purpose
    ├── ProtocolError                a JSON-RPC error: ``code``, ``message``, ``data``
    │   ├── ParseError               -32700  the bytes were not JSON
    │   ├── InvalidRequest           -32600  JSON, but not a valid JSON-RPC message
    │   ├── MethodNotFound           -32601  the peer does not serve this method (or capability)
    │   ├── InvalidParams            -32602  the method exists but its params are wrong
    │   ├── InternalError            -32603  the handler failed
    │   ├── ResourceNotFound         -32002  no resource has this URI (-32602 from 2026-07-28)
    │   ├── URLElicitationRequired   -32042  the server needs the user to visit a URL first
    │   ├── HeaderMismatch           -32020  HTTP headers disagree with the body (2026-07-28)
    │   ├── MissingRequiredClientCapability  -32021  the request needs a capability not declared
    │   └── UnsupportedProtocolVersion       -32022  the server does not speak that revision
    ├── TransportError               bytes could not be moved
    │   ├── ConnectionClosed         the peer went away (or we closed) while we were using it
    │   │   └── SessionExpired       an HTTP server forgot our session and would not start anew
    │   └── HTTPError                an HTTP exchange failed
    │       ├── HTTPConnectError     the server could not be reached
    │       ├── HTTPReadTimeout      the server sent nothing for too long (also a ``TimeoutError``)
    │       ├── HTTPProtocolError    the server broke the connection or HTTP/1.1
    │       └── HTTPStatusError      the server answered an HTTP error status (``status``)
    ├── AuthError                    authorization failed (OAuth 2.1; ``error``, ``description``)
    │   ├── InvalidToken             no usable access token: missing, malformed, expired, forged
    │   │                            or for another resource (HTTP 401)
    │   ├── InsufficientScope        the token lacks scopes the operation needs (HTTP 403,
    │   │                            ``scopes``: the scopes the operation needs)
    │   └── AuthServerError          an authorization server's metadata, keys or answers could
    │                                not be fetched or used (a resource server answers 503)
    ├── RequestTimeout               no answer within the time allowed (also a ``TimeoutError``)
    ├── ToolError                    raised by a tool: its message is the tool's error result
    ├── CapabilityError              we tried to use something the peer did not declare
    ├── InputFailed                  our handler could not answer a server's input request
    │                                under 2026-07-28: the request ends (``method``)
    ├── VersionError                 no protocol revision both sides speak
    ├── InvalidApp                   an MCP App no host could render: a tool naming a view the
    │                                server does not serve, a malformed CSP origin (also a
    │                                ``ValueError``)
    └── InvalidResponse              the peer answered, but not as the protocol (or the
        │                            tool's outputSchema) requires
        └── SkillVerificationError   a skill's file differs from its manifest (size, digest
                                     or frontmatter): the content is not used

A :class:`ProtocolError` raised by a request handler becomes the error response sent to
the peer; one received from the peer is raised from the awaiting call, so handlers and
callers speak the same language.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
URL_ELICITATION_REQUIRED = -32042
RESOURCE_NOT_FOUND = -32002
# Codes the MCP specification reserves for itself (-32020 to -32099), from 2026-07-28.
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: The -32603 message of a request the shared state (Redis) could not serve; over HTTP a
#: one-request answer carrying it is 503 with Retry-After (see BackendUnavailable).
UNAVAILABLE = "Service Unavailable: the shared state is not answering; retry shortly"


class MCPError(Exception):
    """Base class of every exception mcpkit raises on purpose."""


class ProtocolError(MCPError):
    """A JSON-RPC error, sent or received.

    Raise it from a handler to answer with that error::

        raise ProtocolError(-32002, "Resource not found", {"uri": uri})
    """

    code: int = INTERNAL_ERROR

    def __init__(self, code: int | None = None, message: str = "", data: Any = None) -> None:
        if code is not None:
            self.code = code
        self.message = message or type(self).__name__
        self.data = data
        super().__init__(self.message)

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"

    def to_error(self) -> dict[str, Any]:
        """The ``error`` member of a JSON-RPC error response."""
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    @classmethod
    def from_error(cls, error: Any) -> ProtocolError:
        """Build the most specific subclass for an ``error`` member received from a peer."""
        if not isinstance(error, dict):
            return InternalError(message=f"malformed error object: {error!r}")
        code = error.get("code")
        message = error.get("message")
        if not isinstance(code, int) or isinstance(code, bool):
            code = INTERNAL_ERROR
        if not isinstance(message, str):
            message = "error without a message"
        klass = _BY_CODE.get(code, ProtocolError)
        exc = klass(message=message, data=error.get("data"))
        exc.code = code
        return exc


class ParseError(ProtocolError):
    """-32700: the message was not valid JSON (or not UTF-8)."""

    code = PARSE_ERROR


class InvalidRequest(ProtocolError):
    """-32600: valid JSON but not a valid JSON-RPC message."""

    code = INVALID_REQUEST


class MethodNotFound(ProtocolError):
    """-32601: the peer does not offer this method (or the capability behind it)."""

    code = METHOD_NOT_FOUND


class InvalidParams(ProtocolError):
    """-32602: the method exists but the params are wrong."""

    code = INVALID_PARAMS


class InternalError(ProtocolError):
    """-32603: the handler failed."""

    code = INTERNAL_ERROR


class URLElicitationRequired(ProtocolError):
    """-32042: the request needs the user to complete a URL-mode elicitation first."""

    code = URL_ELICITATION_REQUIRED

    @property
    def elicitations(self) -> list[dict[str, Any]]:
        """The URL-mode elicitations (``data.elicitations``) to complete before retrying."""
        items = self.data.get("elicitations") if isinstance(self.data, dict) else None
        return [e for e in items if isinstance(e, dict)] if isinstance(items, list) else []


class ResourceNotFound(ProtocolError):
    """-32002: no resource has this URI (raise it from a resource handler; a client gets it
    from ``read_resource``, whatever code the server's revision used: -32002 before
    2026-07-28, -32602 naming the URI since).

    The URI comes first; the message and ``data`` (``{"uri": uri}``) follow from it::

        raise ResourceNotFound(f"notes://{name}")
    """

    code = RESOURCE_NOT_FOUND

    def __init__(
        self,
        uri: str | None = None,
        message: str = "",
        data: Any = None,
        *,
        code: int | None = None,
    ) -> None:
        if uri is not None:
            message = message or f"Resource not found: {uri}"
            data = {"uri": uri} if data is None else data
        super().__init__(code, message, data)

    @property
    def uri(self) -> str | None:
        """The URI that was not found (``data.uri``), when the error names one."""
        uri = self.data.get("uri") if isinstance(self.data, dict) else None
        return uri if isinstance(uri, str) else None


class HeaderMismatch(ProtocolError):
    """-32020: the HTTP headers of a request (``MCP-Protocol-Version``, ``Mcp-Method``,
    ``Mcp-Name``, ``Mcp-Param-*``) are missing, malformed or disagree with its body
    (revision 2026-07-28; over HTTP the status is 400)."""

    code = HEADER_MISMATCH


class MissingRequiredClientCapability(ProtocolError):
    """-32021: serving the request needs a capability the client did not declare in the
    request's ``_meta`` (revision 2026-07-28).

    Example::

        raise MissingRequiredClientCapability(
            message="this tool asks the user", data={"requiredCapabilities": {"elicitation": {}}}
        )
    """

    code = MISSING_REQUIRED_CLIENT_CAPABILITY

    @property
    def required_capabilities(self) -> dict[str, Any]:
        """The missing capabilities (``data.requiredCapabilities``), keyed by name."""
        caps = self.data.get("requiredCapabilities") if isinstance(self.data, dict) else None
        return caps if isinstance(caps, dict) else {}


class UnsupportedProtocolVersion(ProtocolError):
    """-32022: the server does not speak the revision the request named; ``supported``
    lists the ones it does, to retry with (revision 2026-07-28)."""

    code = UNSUPPORTED_PROTOCOL_VERSION

    @property
    def supported(self) -> list[str]:
        """The revisions the server speaks (``data.supported``)."""
        items = self.data.get("supported") if isinstance(self.data, dict) else None
        return [v for v in items if isinstance(v, str)] if isinstance(items, list) else []

    @property
    def requested(self) -> str | None:
        """The revision the request named (``data.requested``)."""
        value = self.data.get("requested") if isinstance(self.data, dict) else None
        return value if isinstance(value, str) else None


#: Error code -> the class raised for it, both ways: a handler raising one of these sends its
#: code, and a client receiving the code raises the same class.
_BY_CODE: dict[int, type[ProtocolError]] = {
    c.code: c
    for c in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        ResourceNotFound,
        URLElicitationRequired,
        HeaderMismatch,
        MissingRequiredClientCapability,
        UnsupportedProtocolVersion,
    )
}


class TransportError(MCPError):
    """Bytes could not be moved to or from the peer."""


class BackendUnavailable(TransportError):
    """The shared state of a multi-worker server (Redis) did not answer in time or refused:
    the request is answered 503 and may be retried once the backend is back."""


class ConnectionClosed(TransportError):
    """The connection ended (the peer exited, or we closed it) while it was in use."""


class SessionExpired(ConnectionClosed):
    """The server answered 404 for our session and no new session could be started: connect again."""


class HTTPError(TransportError):
    """An HTTP exchange failed (connection, protocol, timeout or status)."""


class HTTPConnectError(HTTPError):
    """The server could not be reached."""


class HTTPReadTimeout(HTTPError, TimeoutError):
    """The server sent nothing for longer than the read timeout."""


class HTTPProtocolError(HTTPError):
    """The server broke the connection or HTTP/1.1."""


class HTTPStatusError(HTTPError):
    """The server answered an HTTP error status (``status``)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status


class AuthError(MCPError):
    """Authorization failed. ``error`` is the OAuth error code (RFC 6750 / RFC 6749, e.g.
    ``invalid_token``), ``description`` a sentence safe to show to the caller: it never
    contains the token."""

    error = "invalid_request"

    def __init__(self, description: str, *, error: str | None = None) -> None:
        super().__init__(description)
        self.description = description
        if error is not None:
            self.error = error


class InvalidToken(AuthError):
    """No usable access token: missing, malformed, expired, not yet valid, wrongly signed,
    from another issuer or for another resource. A resource server answers HTTP 401.

    Raise it from a custom :class:`mcpkit.auth.TokenVerifier`::

        raise InvalidToken("the token was revoked")
    """

    error = "invalid_token"


class InsufficientScope(AuthError):
    """The token is valid but lacks scopes the operation needs (HTTP 403, step-up).

    ``scopes`` lists every scope the operation needs, so a client can ask for all of them
    at once.
    """

    error = "insufficient_scope"

    def __init__(self, description: str, *, scopes: tuple[str, ...] = ()) -> None:
        super().__init__(description)
        self.scopes = tuple(scopes)


class AuthServerError(AuthError):
    """An authorization server's metadata, keys or answers could not be fetched or used:
    unreachable, too slow, not JSON, metadata naming another issuer, no usable signing key.
    Not the caller's fault: a resource server answers 503, a client gets no token."""

    error = "temporarily_unavailable"


class RequestTimeout(MCPError, TimeoutError):
    """The peer did not answer in time. A ``notifications/cancelled`` was sent for it."""


class ToolError(MCPError):
    """Raise it from a tool to report a failure the model should see, worded as you wrote it.

    The call then answers with ``isError: true`` and your message as its text. Any other
    exception is reported too, but without its details (unless the server was created
    with ``mask_errors=False``), so internals do not leak to the client.

    Example::

        @server.tool()
        def divide(a: float, b: float) -> float:
            if b == 0:
                raise ToolError("b must not be zero")
            return a / b
    """


class CapabilityError(MCPError):
    """We tried to use a feature the peer did not declare during initialization."""


class InputFailed(MCPError):
    """Our own handler (sampling, elicitation, roots) raised instead of answering an input
    request the server made under 2026-07-28 (an ``InputRequiredResult``): the revision has
    no way to tell the server, so the request it belongs to is not retried and ends here,
    as the spec lets a client do. ``method`` is the input request's (e.g.
    ``"sampling/createMessage"``); what the handler raised is ``__cause__``. Under the
    handshake era the server is sent that error instead, and its tool decides.

    Example::

        try:
            result = await client.call_tool("summarize", {"text": text})
        except InputFailed as e:
            print(f"our {e.method} handler failed: {e.__cause__!r}")
    """

    def __init__(self, message: str = "", *, method: str = "") -> None:
        super().__init__(message)
        self.method = method


class VersionError(MCPError):
    """The peers share no protocol revision.

    ``supported``: the revisions the peer said it speaks (the list of its
    ``UnsupportedProtocolVersion`` error), empty when it named none.
    """

    def __init__(self, message: str = "", *, supported: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.supported: tuple[str, ...] = tuple(supported)


class InvalidApp(MCPError, ValueError):
    """An MCP App no host could render, refused when registered or when the server starts:
    a tool whose ``_meta.ui.resourceUri`` names a view the server does not serve, or a
    view's ``_meta.ui.csp`` naming something that is not an origin. Also a ``ValueError``.

    Example::

        try:
            server.app_resource("ui://map", html, csp={"connectDomains": ["api.example.com"]})
        except InvalidApp as e:
            print(e)   # ... is not an origin (expected e.g. 'https://api.example.com' ...)
    """


class InvalidResponse(MCPError):
    """The peer's answer is malformed, or a tool's ``structuredContent`` violates its ``outputSchema``."""


class SkillVerificationError(InvalidResponse):
    """A skill's file did not match what its manifest promised (size, SHA-256 digest, or the
    frontmatter of its ``SKILL.md``): the content was not used.

    Example::

        try:
            skill = await client.load_skill(entry)
        except SkillVerificationError as e:
            print("not loading", entry.name, e)
    """
