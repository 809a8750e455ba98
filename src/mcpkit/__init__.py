"""mcpkit: the Model Context Protocol for Python, server and client.

Example::

    from mcpkit import Server

    server = Server("demo")

    @server.tool()
    def add(a: int, b: int) -> int:
        'Add two numbers.'
        return a + b

    if __name__ == "__main__":
        server.run()

Protocol types live in :mod:`mcpkit.types`; every exception mcpkit raises is exported here
(the tree is documented in ``mcpkit._exceptions``).
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from ._version import __version__ as __version__

if _TYPE_CHECKING:
    from ._app import (
        HTTPAppOptions,
        close_sse_stream,
        create_http_app,
        create_sse_app,
        serve_http,
    )
    from ._client import (
        Client,
        ClientExtension,
        ClientGroup,
        ElicitationCompleteHandler,
        ElicitationHandler,
        ExtensionTaskHandle,
        HTTPTarget,
        ListChangedHandler,
        LoadedApp,
        LoadedSkill,
        LoggingHandler,
        ProgressHandler,
        ResourceUpdatedHandler,
        SamplingHandler,
        ServerRequestContext,
        StdioTarget,
        Subscription,
        SyncClient,
        TaskHandle,
        URLElicitationHandler,
        http,
        stdio,
    )
    from ._exceptions import (
        AuthError,
        AuthServerError,
        BackendUnavailable,
        CapabilityError,
        ConnectionClosed,
        HeaderMismatch,
        HTTPConnectError,
        HTTPError,
        HTTPProtocolError,
        HTTPReadTimeout,
        HTTPStatusError,
        InsufficientScope,
        InternalError,
        InvalidApp,
        InvalidParams,
        InvalidRequest,
        InvalidResponse,
        InvalidToken,
        MCPError,
        MethodNotFound,
        MissingRequiredClientCapability,
        ParseError,
        ProtocolError,
        RequestTimeout,
        ResourceNotFound,
        SessionExpired,
        SkillVerificationError,
        ToolError,
        TransportError,
        UnsupportedProtocolVersion,
        URLElicitationRequired,
        VersionError,
    )
    from ._http import EventStore, InMemoryEventStore
    from ._http._request_info import HTTPRequestInfo
    from ._proxy import Proxy
    from ._redis import RedisBackend
    from ._server import (
        Ask,
        Context,
        Depends,
        ElicitationResult,
        Extension,
        MemoryTaskStore,
        Server,
        SQLiteTaskStore,
        StatelessSettings,
        TaskRecord,
        TaskSettings,
        TaskStore,
    )
    from ._server._media import Audio, File, Image  # the content models load pydantic
    from ._server._openapi import RouteMap
    from ._server._transform import ArgTransform, forward, forward_raw

# Names are imported on first use (PEP 562): `import mcpkit` stays cheap, and a program
# only pays for the layers it touches.
_LAZY: dict[str, str] = {
    "Client": "._client",
    "ClientGroup": "._client",
    "ServerRequestContext": "._client",
    "ElicitationCompleteHandler": "._client",
    "ElicitationHandler": "._client",
    "HTTPTarget": "._client",
    "ListChangedHandler": "._client",
    "LoggingHandler": "._client",
    "ProgressHandler": "._client",
    "ResourceUpdatedHandler": "._client",
    "SamplingHandler": "._client",
    "StdioTarget": "._client",
    "URLElicitationHandler": "._client",
    "http": "._client",
    "stdio": "._client",
    "SyncClient": "._client",
    "Subscription": "._client",
    "TaskHandle": "._client",
    "ClientExtension": "._client",
    "ExtensionTaskHandle": "._client",
    "LoadedSkill": "._client",
    "LoadedApp": "._client",
    "Extension": "._server",
    "SkillVerificationError": "._exceptions",
    "AuthError": "._exceptions",
    "AuthServerError": "._exceptions",
    "BackendUnavailable": "._exceptions",
    "RedisBackend": "._redis",
    "InsufficientScope": "._exceptions",
    "InvalidToken": "._exceptions",
    "CapabilityError": "._exceptions",
    "InvalidApp": "._exceptions",
    "ConnectionClosed": "._exceptions",
    "InternalError": "._exceptions",
    "InvalidParams": "._exceptions",
    "InvalidRequest": "._exceptions",
    "InvalidResponse": "._exceptions",
    "MCPError": "._exceptions",
    "MethodNotFound": "._exceptions",
    "ParseError": "._exceptions",
    "ProtocolError": "._exceptions",
    "RequestTimeout": "._exceptions",
    "TransportError": "._exceptions",
    "URLElicitationRequired": "._exceptions",
    "VersionError": "._exceptions",
    "EventStore": "._http",
    "InMemoryEventStore": "._http",
    "SessionExpired": "._exceptions",
    "HTTPError": "._exceptions",
    "HTTPConnectError": "._exceptions",
    "HTTPReadTimeout": "._exceptions",
    "HTTPProtocolError": "._exceptions",
    "HTTPStatusError": "._exceptions",
    "HTTPAppOptions": "._app",
    "close_sse_stream": "._app",
    "create_http_app": "._app",
    "create_sse_app": "._app",
    "serve_http": "._app",
    "Ask": "._server",
    "Context": "._server",
    "Depends": "._server",
    "HTTPRequestInfo": "._http._request_info",
    "Proxy": "._proxy",
    "ElicitationResult": "._server",
    "Image": "._server._media",
    "Audio": "._server._media",
    "File": "._server._media",
    "ResourceNotFound": "._exceptions",
    "HeaderMismatch": "._exceptions",
    "MissingRequiredClientCapability": "._exceptions",
    "UnsupportedProtocolVersion": "._exceptions",
    "Server": "._server",
    "RouteMap": "._server._openapi",
    "StatelessSettings": "._server",
    "ToolError": "._exceptions",
    "MemoryTaskStore": "._server",
    "SQLiteTaskStore": "._server",
    "TaskRecord": "._server",
    "TaskSettings": "._server",
    "TaskStore": "._server",
    "ArgTransform": "._server._transform",
    "forward": "._server._transform",
    "forward_raw": "._server._transform",
}

__all__ = [
    "ArgTransform",
    "Ask",
    "Audio",
    "AuthError",
    "AuthServerError",
    "BackendUnavailable",
    "CapabilityError",
    "Client",
    "ClientExtension",
    "ClientGroup",
    "ConnectionClosed",
    "Context",
    "Depends",
    "ElicitationCompleteHandler",
    "ElicitationHandler",
    "ElicitationResult",
    "EventStore",
    "Extension",
    "ExtensionTaskHandle",
    "File",
    "HTTPAppOptions",
    "HTTPConnectError",
    "HTTPError",
    "HTTPProtocolError",
    "HTTPReadTimeout",
    "HTTPRequestInfo",
    "HTTPStatusError",
    "HTTPTarget",
    "HeaderMismatch",
    "Image",
    "InMemoryEventStore",
    "InsufficientScope",
    "InternalError",
    "InvalidApp",
    "InvalidParams",
    "InvalidRequest",
    "InvalidResponse",
    "InvalidToken",
    "ListChangedHandler",
    "LoadedApp",
    "LoadedSkill",
    "LoggingHandler",
    "MCPError",
    "MemoryTaskStore",
    "MethodNotFound",
    "MissingRequiredClientCapability",
    "ParseError",
    "ProgressHandler",
    "ProtocolError",
    "Proxy",
    "RedisBackend",
    "RequestTimeout",
    "ResourceNotFound",
    "ResourceUpdatedHandler",
    "RouteMap",
    "SQLiteTaskStore",
    "SamplingHandler",
    "Server",
    "ServerRequestContext",
    "SessionExpired",
    "SkillVerificationError",
    "StatelessSettings",
    "StdioTarget",
    "Subscription",
    "SyncClient",
    "TaskHandle",
    "TaskRecord",
    "TaskSettings",
    "TaskStore",
    "ToolError",
    "TransportError",
    "URLElicitationHandler",
    "URLElicitationRequired",
    "UnsupportedProtocolVersion",
    "VersionError",
    "close_sse_stream",
    "create_http_app",
    "create_sse_app",
    "forward",
    "forward_raw",
    "http",
    "serve_http",
    "stdio",
]


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
