"""The layers under :class:`mcpkit.Server` and :class:`mcpkit.Client`, for hosts, proxies and
tests that need them: the session roles, the transports and the JSON-RPC engine.

Most programs never need this module. Use it to drive a connection by hand::

    import anyio
    from mcpkit.lowlevel import ClientSession, spawn_stdio

    async def main() -> None:
        async with spawn_stdio(["python", "server.py"]) as transport:
            async with ClientSession(transport, client_info={"name": "me", "version": "1"}) as s:
                await s.initialize()
                print(await s.send_request("tools/list"))

    anyio.run(main)

Every name here is public and documented; the modules they live in are not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._incoming import IncomingRequest
from ._jsonrpc import JSONRPCEngine
from ._server._hosting import ServerHosting
from ._session import ClientSession, Kernel, Negotiated, RequestContext, ServerSession, ServerSpec
from ._transports import (
    InvalidIncoming,
    LineTransport,
    MemoryTransport,
    StdioClientTransport,
    Transport,
    TransportInfo,
    memory_pair,
    spawn_stdio,
    stdio_server,
)

if TYPE_CHECKING:
    from ._app import (
        HTTPAppOptions,
        MemorySessionRegistry,
        SessionBackend,
        SessionEntry,
        SessionRegistry,
        StreamableHTTPApp,
    )
    from ._http import (
        ASGIClient,
        HTTPClient,
        HTTPResponse,
        open_http,
        open_sse,
        open_streamable_http,
    )
    from ._redis import RedisEventStore, RedisSessionRegistry, RedisTaskStore

#: Public names of this module, and where the lazily imported ones live (the HTTP client's
#: and the HTTP app's modules load only when one of them is used).
_LAZY = {
    "ASGIClient": "_http",
    "HTTPClient": "_http",
    "HTTPResponse": "_http",
    "open_http": "_http",
    "open_sse": "_http",
    "open_streamable_http": "_http",
    "HTTPAppOptions": "_app",
    "MemorySessionRegistry": "_app",
    "SessionBackend": "_app",
    "SessionEntry": "_app",
    "RedisEventStore": "_redis",
    "RedisSessionRegistry": "_redis",
    "RedisTaskStore": "_redis",
    "SessionRegistry": "_app",
    "StreamableHTTPApp": "_app",
}

__all__ = [
    "ASGIClient",
    "ClientSession",
    "HTTPAppOptions",
    "HTTPClient",
    "HTTPResponse",
    "IncomingRequest",
    "InvalidIncoming",
    "JSONRPCEngine",
    "Kernel",
    "LineTransport",
    "MemorySessionRegistry",
    "MemoryTransport",
    "Negotiated",
    "RedisEventStore",
    "RedisSessionRegistry",
    "RedisTaskStore",
    "RequestContext",
    "ServerHosting",
    "ServerSession",
    "ServerSpec",
    "SessionBackend",
    "SessionEntry",
    "SessionRegistry",
    "StdioClientTransport",
    "StreamableHTTPApp",
    "Transport",
    "TransportInfo",
    "memory_pair",
    "open_http",
    "open_sse",
    "open_streamable_http",
    "spawn_stdio",
    "stdio_server",
]


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where == "_http":
        from . import _http

        value = getattr(_http, name)
    elif where == "_app":
        from . import _app

        value = getattr(_app, name)
    elif where == "_redis":
        from . import _redis

        value = getattr(_redis, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
