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

# The one table of public names: each name and the module it comes from. Names are imported
# on first use (PEP 562): `import mcpkit` stays cheap, and a program only pays for the layers
# it touches. The imports type checkers read and __all__ are written from this table by
# scripts/public_names.py (tests/test_namespace.py checks they are current).
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
    "InputFailed": "._exceptions",
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

# --- generated from _LAZY by scripts/public_names.py: do not edit ---
if _TYPE_CHECKING:
    from ._app import HTTPAppOptions as HTTPAppOptions
    from ._app import close_sse_stream as close_sse_stream
    from ._app import create_http_app as create_http_app
    from ._app import create_sse_app as create_sse_app
    from ._app import serve_http as serve_http
    from ._client import Client as Client
    from ._client import ClientExtension as ClientExtension
    from ._client import ClientGroup as ClientGroup
    from ._client import ElicitationCompleteHandler as ElicitationCompleteHandler
    from ._client import ElicitationHandler as ElicitationHandler
    from ._client import ExtensionTaskHandle as ExtensionTaskHandle
    from ._client import HTTPTarget as HTTPTarget
    from ._client import ListChangedHandler as ListChangedHandler
    from ._client import LoadedApp as LoadedApp
    from ._client import LoadedSkill as LoadedSkill
    from ._client import LoggingHandler as LoggingHandler
    from ._client import ProgressHandler as ProgressHandler
    from ._client import ResourceUpdatedHandler as ResourceUpdatedHandler
    from ._client import SamplingHandler as SamplingHandler
    from ._client import ServerRequestContext as ServerRequestContext
    from ._client import StdioTarget as StdioTarget
    from ._client import Subscription as Subscription
    from ._client import SyncClient as SyncClient
    from ._client import TaskHandle as TaskHandle
    from ._client import URLElicitationHandler as URLElicitationHandler
    from ._client import http as http
    from ._client import stdio as stdio
    from ._exceptions import AuthError as AuthError
    from ._exceptions import AuthServerError as AuthServerError
    from ._exceptions import BackendUnavailable as BackendUnavailable
    from ._exceptions import CapabilityError as CapabilityError
    from ._exceptions import ConnectionClosed as ConnectionClosed
    from ._exceptions import HeaderMismatch as HeaderMismatch
    from ._exceptions import HTTPConnectError as HTTPConnectError
    from ._exceptions import HTTPError as HTTPError
    from ._exceptions import HTTPProtocolError as HTTPProtocolError
    from ._exceptions import HTTPReadTimeout as HTTPReadTimeout
    from ._exceptions import HTTPStatusError as HTTPStatusError
    from ._exceptions import InputFailed as InputFailed
    from ._exceptions import InsufficientScope as InsufficientScope
    from ._exceptions import InternalError as InternalError
    from ._exceptions import InvalidApp as InvalidApp
    from ._exceptions import InvalidParams as InvalidParams
    from ._exceptions import InvalidRequest as InvalidRequest
    from ._exceptions import InvalidResponse as InvalidResponse
    from ._exceptions import InvalidToken as InvalidToken
    from ._exceptions import MCPError as MCPError
    from ._exceptions import MethodNotFound as MethodNotFound
    from ._exceptions import MissingRequiredClientCapability as MissingRequiredClientCapability
    from ._exceptions import ParseError as ParseError
    from ._exceptions import ProtocolError as ProtocolError
    from ._exceptions import RequestTimeout as RequestTimeout
    from ._exceptions import ResourceNotFound as ResourceNotFound
    from ._exceptions import SessionExpired as SessionExpired
    from ._exceptions import SkillVerificationError as SkillVerificationError
    from ._exceptions import ToolError as ToolError
    from ._exceptions import TransportError as TransportError
    from ._exceptions import UnsupportedProtocolVersion as UnsupportedProtocolVersion
    from ._exceptions import URLElicitationRequired as URLElicitationRequired
    from ._exceptions import VersionError as VersionError
    from ._http import EventStore as EventStore
    from ._http import InMemoryEventStore as InMemoryEventStore
    from ._http._request_info import HTTPRequestInfo as HTTPRequestInfo
    from ._proxy import Proxy as Proxy
    from ._redis import RedisBackend as RedisBackend
    from ._server import Ask as Ask
    from ._server import Context as Context
    from ._server import Depends as Depends
    from ._server import ElicitationResult as ElicitationResult
    from ._server import Extension as Extension
    from ._server import MemoryTaskStore as MemoryTaskStore
    from ._server import Server as Server
    from ._server import SQLiteTaskStore as SQLiteTaskStore
    from ._server import StatelessSettings as StatelessSettings
    from ._server import TaskRecord as TaskRecord
    from ._server import TaskSettings as TaskSettings
    from ._server import TaskStore as TaskStore
    from ._server._media import Audio as Audio
    from ._server._media import File as File
    from ._server._media import Image as Image
    from ._server._openapi import RouteMap as RouteMap
    from ._server._transform import ArgTransform as ArgTransform
    from ._server._transform import forward as forward
    from ._server._transform import forward_raw as forward_raw

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
    "InputFailed",
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
# --- end of generated ---


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
