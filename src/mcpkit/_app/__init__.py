"""The ASGI applications serving an MCP server over HTTP, and running them with uvicorn.

- :func:`create_http_app` ``(server, *, options=None, path="/mcp", json_response=False,
  sessionless=False, ...)`` -> :class:`StreamableHTTPApp`; all settings are one
  :class:`HTTPAppOptions`. ``server`` is anything with ``create_session(transport)``.
- :func:`create_sse_app`: the legacy transport (``GET /sse`` + ``POST /messages/``).
- :func:`serve_http`, :func:`serve_sse` (blocking), :func:`serve_app` (async): uvicorn.
- :func:`run` ``(server, transport="http"|"sse", **options)``: what ``mcpkit run`` calls.
- :func:`close_sse_stream` ``(ctx, retry_ms=None)``: from a request handler, end the HTTP
  connection of the request's SSE stream so the client resumes (SSE polling).
- :class:`SessionRegistry`: where an app's sessions live (:class:`MemorySessionRegistry`
  in one process).
"""

from ._legacy import SSEApp, create_sse_app
from ._options import HTTPAppOptions
from ._registry import (
    MemorySessionRegistry,
    SessionBackend,
    SessionEntry,
    SessionFactory,
    SessionRegistry,
)
from ._serve import run, serve_app, serve_http, serve_sse
from ._streamable import StreamableHTTPApp, close_sse_stream, create_http_app

__all__ = [
    "HTTPAppOptions",
    "MemorySessionRegistry",
    "SSEApp",
    "SessionBackend",
    "SessionEntry",
    "SessionFactory",
    "SessionRegistry",
    "StreamableHTTPApp",
    "close_sse_stream",
    "create_http_app",
    "create_sse_app",
    "run",
    "serve_app",
    "serve_http",
    "serve_sse",
]
