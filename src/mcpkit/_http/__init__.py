"""MCP over HTTP: the Streamable HTTP transport (2025-03-26 and later) and the legacy
HTTP+SSE transport (2024-11-05), server and client.

For the server SDK (``Server.http_app()``, ``mcpkit run FILE --transport http|sse``):

- :func:`create_http_app` ``(server, *, path="/mcp", json_response=False, stateless=False,
  allowed_hosts=None, allowed_origins=None, event_store=None, ...)`` -> ASGI app; ``server``
  is anything with ``create_session(transport) -> ServerSession``.
- :func:`serve_http` ``(server, host="127.0.0.1", port=8000, **app_kwargs)``: uvicorn, blocking.
- :func:`run` ``(server, transport="http"|"sse", **options)``: what ``mcpkit run`` calls.
- :func:`create_sse_app` / :func:`serve_sse`: the legacy transport (``GET /sse`` +
  ``POST /messages/?session_id=...``).
- :func:`serve_app` ``(app, host=, port=)``: async; serve any of these apps with uvicorn.
- :func:`close_sse_stream` ``(ctx, retry_ms=None)``: from a request handler, end the HTTP
  connection of the request's SSE stream so the client resumes (SSE polling; the
  conformance tool ``test_reconnection`` uses it).

For the client SDK (``mcpkit.Client(url)``):

- :func:`open_http` ``(url, *, headers=None, auth=None, timeout=30, sse_read_timeout=300)``:
  async context manager yielding a Transport; Streamable HTTP with fallback to HTTP+SSE.
- :func:`open_streamable_http`, :func:`open_sse`: one transport each, no fallback.
- :class:`SessionExpired` (a ``ConnectionClosed``): the server answered 404 for our
  session and no new session could be started; connect again.
"""

from typing import TYPE_CHECKING, Any

from ._errors import HTTPStatusFailure, SessionExpired
from ._events import EventStore, InMemoryEventStore
from ._legacy import SSEApp, create_sse_app
from ._serve import run, serve_app, serve_http, serve_sse
from ._server import StreamableHTTPApp, close_sse_stream, create_http_app
from ._transport import HTTPServerTransport

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
    # The client needs h11 (and httpx2 on request); a server never imports them.
    if name in _CLIENT_NAMES:
        from . import _client

        return getattr(_client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EventStore",
    "HTTPServerTransport",
    "HTTPStatusFailure",
    "InMemoryEventStore",
    "SSEApp",
    "SSEClientTransport",
    "SessionExpired",
    "StreamableHTTPApp",
    "StreamableHTTPClientTransport",
    "close_sse_stream",
    "create_http_app",
    "create_sse_app",
    "open_http",
    "open_sse",
    "open_streamable_http",
    "run",
    "serve_app",
    "serve_http",
    "serve_sse",
]
