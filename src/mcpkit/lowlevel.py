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

from ._jsonrpc import IncomingRequest, JSONRPCEngine
from ._session import ClientSession, Negotiated, RequestContext, ServerSession
from ._transports import (
    InvalidIncoming,
    LineTransport,
    MemoryTransport,
    StdioClientTransport,
    Transport,
    memory_pair,
    spawn_stdio,
    stdio_server,
)

if TYPE_CHECKING:
    from ._http import open_http, open_sse, open_streamable_http

#: Public names of this module, and where the lazily imported ones live (the HTTP client's
#: modules load only when one of them is used).
_LAZY = {"open_http": "_http", "open_sse": "_http", "open_streamable_http": "_http"}

__all__ = [
    "ClientSession",
    "IncomingRequest",
    "InvalidIncoming",
    "JSONRPCEngine",
    "LineTransport",
    "MemoryTransport",
    "Negotiated",
    "RequestContext",
    "ServerSession",
    "StdioClientTransport",
    "Transport",
    "memory_pair",
    "open_http",
    "open_sse",
    "open_streamable_http",
    "spawn_stdio",
    "stdio_server",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import _http

        value = getattr(_http, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
