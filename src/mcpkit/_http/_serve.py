"""Serving the ASGI apps with uvicorn (the ``mcpkit run --transport http|sse`` path)."""

from __future__ import annotations

import ipaddress
import logging
import os
from typing import Any

from .._transports._loop import run as run_loop
from ._server import SessionFactory, StreamableHTTPApp, create_http_app

logger = logging.getLogger("mcpkit.http")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def serve_app(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    **uvicorn_kw: Any,
) -> None:
    """Serve an ASGI app with uvicorn until cancelled or signalled (asyncio)."""
    require_uvicorn()
    import uvicorn

    class _Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # uvicorn waits for open connections before the lifespan shutdown; SSE
            # streams never end on their own, so end the sessions (and their streams) first.
            closer = getattr(app, "aclose", None)
            if closer is not None:
                await closer()
            await super().shutdown(sockets)

    kw: dict[str, Any] = {"timeout_graceful_shutdown": 5, "access_log": False, "lifespan": "on"}
    kw.update(uvicorn_kw)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, **kw)
    await _Server(config).serve()


def serve_http(
    server: SessionFactory,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    log_level: str = "warning",
    uvicorn_options: dict[str, Any] | None = None,
    **app_kwargs: Any,
) -> None:
    """Serve ``server`` over Streamable HTTP with uvicorn (blocking).

    ``app_kwargs`` go to :func:`create_http_app`; ``uvicorn_options`` to ``uvicorn.Config``
    (e.g. ``{"http": "httptools"}``, ``{"ssl_certfile": ...}``).

    Binds 127.0.0.1 unless told otherwise. Binding another interface keeps the loopback
    Host/Origin allow-list until ``allowed_hosts``/``allowed_origins`` are given, so a
    public deployment must name the hosts it answers to.

    Example::

        serve_http(server, port=8000, json_response=True)
    """
    if not _is_loopback(host) and app_kwargs.get("allowed_hosts") is None:
        logger.warning(
            "serving on %s but only loopback Host headers are accepted; pass allowed_hosts=[...] "
            "(and allowed_origins) naming this server's public host",
            host,
        )
    app: StreamableHTTPApp = create_http_app(server, **app_kwargs)
    opts = uvicorn_options or {}
    run_loop(lambda: serve_app(app, host=host, port=port, log_level=log_level, **opts))


def serve_sse(
    server: SessionFactory,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    log_level: str = "warning",
    uvicorn_options: dict[str, Any] | None = None,
    **app_kwargs: Any,
) -> None:
    """Serve ``server`` over the legacy HTTP+SSE transport (2024-11-05) with uvicorn (blocking)."""
    from ._legacy import create_sse_app

    app = create_sse_app(server, **app_kwargs)
    opts = uvicorn_options or {}
    run_loop(lambda: serve_app(app, host=host, port=port, log_level=log_level, **opts))


def require_uvicorn() -> None:
    """Raise a RuntimeError saying which extra brings uvicorn when it is not installed."""
    try:
        import uvicorn  # noqa: F401
    except ModuleNotFoundError as e:
        if e.name != "uvicorn":
            raise
        raise RuntimeError(
            "serving over HTTP needs uvicorn, which the [http] extra brings: "
            "pip install 'mcpkit[http]'"
        ) from None


def options_from_env(options: dict[str, Any]) -> dict[str, Any]:
    """Add the allow-lists from ``MCPKIT_ALLOWED_HOSTS`` / ``MCPKIT_ALLOWED_ORIGINS``
    (comma-separated) unless given: how a deployment configures ``mcpkit run``."""
    out = dict(options)
    for opt, env in (
        ("allowed_hosts", "MCPKIT_ALLOWED_HOSTS"),
        ("allowed_origins", "MCPKIT_ALLOWED_ORIGINS"),
    ):
        value = os.environ.get(env)
        if opt not in out and value:
            out[opt] = [v.strip() for v in value.split(",") if v.strip()]
    return out


def run(server: SessionFactory, transport: str = "http", **options: Any) -> None:
    """Serve ``server`` over ``transport`` (``"http"``: Streamable HTTP, ``"sse"``: legacy
    HTTP+SSE) with uvicorn, blocking; ``options`` go to :func:`serve_http`/:func:`serve_sse`.

    This is what ``mcpkit run FILE --transport http|sse [--host H] [--port P]`` calls.
    """
    require_uvicorn()  # before any loop starts: a missing extra is one clear line
    options = options_from_env(options)
    if transport in ("http", "streamable-http"):
        serve_http(server, **options)
    elif transport == "sse":
        serve_sse(server, **options)
    else:
        raise ValueError(f"unknown HTTP transport {transport!r} (use 'http' or 'sse')")
