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

from ._client import Client, ClientGroup, ServerRequestContext, SyncClient
from ._exceptions import (
    CapabilityError,
    ConnectionClosed,
    InternalError,
    InvalidParams,
    InvalidRequest,
    InvalidResponse,
    MCPError,
    MethodNotFound,
    ParseError,
    ProtocolError,
    RequestTimeout,
    TransportError,
    URLElicitationRequired,
    VersionError,
)
from ._http import (
    EventStore,
    InMemoryEventStore,
    SessionExpired,
    close_sse_stream,
    create_http_app,
    create_sse_app,
    serve_http,
)
from ._server import Context, ElicitationResult, ResourceNotFound, Server, ToolError

__all__ = [
    "CapabilityError",
    "Client",
    "ClientGroup",
    "ConnectionClosed",
    "Context",
    "ElicitationResult",
    "EventStore",
    "InMemoryEventStore",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "InvalidResponse",
    "MCPError",
    "MethodNotFound",
    "ParseError",
    "ProtocolError",
    "RequestTimeout",
    "ResourceNotFound",
    "Server",
    "ServerRequestContext",
    "SessionExpired",
    "SyncClient",
    "ToolError",
    "TransportError",
    "URLElicitationRequired",
    "VersionError",
    "close_sse_stream",
    "create_http_app",
    "create_sse_app",
    "serve_http",
]
