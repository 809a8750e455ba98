"""MCP over HTTP, the transport layer: the client ends of Streamable HTTP (2025-03-26 and
later) and of the legacy HTTP+SSE transport (2024-11-05), the server ends the ASGI apps
drive, the resumable event store, and the HTTP/SSE wire helpers. It moves messages and knows
no session: the ASGI applications that serve a :class:`mcpkit.Server` are in ``mcpkit._app``.

For the client SDK (``mcpkit.Client(url)``):

- :func:`open_http` ``(url, *, headers=None, auth=None, timeout=30, sse_read_timeout=300)``:
  async context manager yielding a Transport; Streamable HTTP with fallback to HTTP+SSE.
- :func:`open_streamable_http`, :func:`open_sse`: one transport each, no fallback.
- :class:`SessionExpired` (a ``ConnectionClosed``): the server answered 404 for our
  session and no new session could be started; connect again.
"""

from typing import TYPE_CHECKING, Any

from ._asgi_client import ASGIClient
from ._errors import HTTPStatusFailure, SessionExpired
from ._events import EventStore, InMemoryEventStore
from ._interface import HTTPClient, HTTPResponse
from ._transport import HTTPServerTransport
from ._transport_sse import SSEServerTransport

if TYPE_CHECKING:
    from ._client import (
        SSEClientTransport,
        StreamableHTTPClientTransport,
        open_http,
        open_sse,
        open_streamable_http,
    )

_CLIENT_NAMES = frozenset(
    {
        "SSEClientTransport",
        "StreamableHTTPClientTransport",
        "open_http",
        "open_sse",
        "open_streamable_http",
    }
)


def __getattr__(name: str) -> Any:
    # The client's modules (HTTP/1.1, TLS) load only when a client is opened: a server never
    # imports them. The import is a plain one, visible to the layer test.
    if name in _CLIENT_NAMES:
        from . import _client

        return getattr(_client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ASGIClient",
    "EventStore",
    "HTTPClient",
    "HTTPResponse",
    "HTTPServerTransport",
    "HTTPStatusFailure",
    "InMemoryEventStore",
    "SSEClientTransport",
    "SSEServerTransport",
    "SessionExpired",
    "StreamableHTTPClientTransport",
    "open_http",
    "open_sse",
    "open_streamable_http",
]
