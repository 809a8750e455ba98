"""How a :class:`~mcpkit.Server` is served: as an ASGI app, over stdio, or blocking with
uvicorn; the typed keywords its entry points take."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from typing_extensions import Unpack

from .. import _env
from . import _shared

if TYPE_CHECKING:
    from .._app import StreamableHTTPApp
    from .._app._options import HTTPAppKeywords
    from ._face import ServerLike

logger = logging.getLogger("mcpkit.server")


# Only read by the type checker (``Unpack[...]`` of the entry points): at run time these
# would import the whole HTTP stack (``mcpkit._app``) into every stdio server's start.
if TYPE_CHECKING:

    class ServerAppKeywords(HTTPAppKeywords, total=False):
        """The keywords of ``Server.http_app``: those of :func:`mcpkit.create_http_app`, and
        ``redis`` (a URL: sessions, events and tasks shared by many workers in Redis)."""

        redis: str | None

    class RunKeywords(ServerAppKeywords, total=False):
        """The keywords of ``Server.run`` over HTTP: the HTTP server (``http_server``:
        ``"uvicorn"``, the default, or ``"granian"``; unset: ``MCPKIT_HTTP_SERVER``), where
        and how it serves (``host``, ``port``, ``log_level``, ``header_timeout``,
        ``uvicorn_options``), the endpoint (``path``; ``sse_path`` and ``message_path`` for
        the legacy transport), and the app's."""

        http_server: str | None

        host: str
        port: int
        log_level: str
        header_timeout: float | None
        uvicorn_options: dict[str, Any] | None
        path: str | None
        sse_path: str
        message_path: str


def http_app(server: ServerLike, path: str | None, options: ServerAppKeywords) -> StreamableHTTPApp:
    """``server`` as a Streamable HTTP ASGI app (see ``Server.http_app``)."""
    from .._app import create_http_app

    kw: dict[str, Any] = _shared.shared_options(dict(options))
    return create_http_app(server, path=path, **kw)


def run(server: ServerLike, transport: str, **options: Unpack[RunKeywords]) -> None:
    """Serve ``server`` blocking (see ``Server.run``)."""
    if transport == "stdio":
        if options:
            raise TypeError(f"the stdio transport takes no options (got {sorted(options)})")
        from .._transports._loop import run as run_loop

        run_loop(server.serve_stdio)
        return
    from .._app import run as run_http
    from ._port import check_port

    kw: dict[str, Any] = dict(options)
    check_port(kw)  # a busy port in one line naming port=, before uvicorn logs [Errno 98]
    if transport == "sse":
        _legacy_keeps_sessions_here(kw.pop("redis", None))
    else:
        kw = _shared.shared_options(kw)
    run_http(server, transport, **kw)


def _legacy_keeps_sessions_here(redis: str | None) -> None:
    """Say so when Redis is set (``redis=``, ``--redis`` or the environment) for the legacy
    transport, which does not use it: not an error, the same settings may serve both."""
    from .._redis._backend import redis_where

    url = redis or _env.REDIS_URL.value()
    if url:
        logger.warning(
            "legacy HTTP+SSE keeps its sessions in this process: %s is not used "
            "(the 'http' transport shares sessions between workers)",
            redis_where(url),
        )
