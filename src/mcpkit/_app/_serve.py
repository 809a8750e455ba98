"""Serving the ASGI apps with uvicorn (the ``mcpkit run --transport http|sse`` path)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import ipaddress
import logging
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from .._env import ALLOWED_HOSTS, ALLOWED_ORIGINS, HTTP_SERVER
from .._http._security import HostOriginPolicy
from .._transports._loop import run as run_loop
from ._options import DRAIN_TIMEOUT, announcement
from ._registry import SessionFactory
from ._rsgi import serve_granian
from ._streamable import StreamableHTTPApp, create_http_app

logger = logging.getLogger("mcpkit.http")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


#: Seconds a new connection may take to send its first request head (slowloris: uvicorn
#: itself waits forever for a head sent a byte at a time).
HEADER_TIMEOUT = 10.0


def head_timeout_protocol(base: type[asyncio.Protocol], timeout: float) -> type[asyncio.Protocol]:
    """``base`` (uvicorn's HTTP protocol), closing connections whose first head is too slow.

    A connection that has not finished its first request head (the blank line after the
    headers) within ``timeout`` seconds gets ``408`` and is closed; after that, uvicorn's own
    keep-alive timeout bounds the idle time between requests.
    """

    class HeadTimeout(base):  # type: ignore[valid-type,misc]
        _mcpkit_head_timer: asyncio.TimerHandle | None = None
        _mcpkit_tail = b""

        def connection_made(self, transport: Any) -> None:
            loop = asyncio.get_running_loop()
            self._mcpkit_head_timer = loop.call_later(timeout, _too_slow, transport)
            super().connection_made(transport)

        def data_received(self, data: bytes) -> None:
            timer = self._mcpkit_head_timer
            if timer is not None:
                seen = self._mcpkit_tail + data
                if b"\r\n\r\n" in seen:
                    timer.cancel()
                    self._mcpkit_head_timer = None
                else:
                    self._mcpkit_tail = seen[-3:]
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._mcpkit_head_timer is not None:
                self._mcpkit_head_timer.cancel()
                self._mcpkit_head_timer = None
            super().connection_lost(exc)

    return HeadTimeout


def _too_slow(transport: Any) -> None:
    if not transport.is_closing():
        transport.write(
            b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
        )
        transport.close()


async def serve_app(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    header_timeout: float | None = HEADER_TIMEOUT,
    announce: tuple[str, str] | None = None,
    **uvicorn_kw: Any,
) -> None:
    """Serve an ASGI app with uvicorn until cancelled or signalled (asyncio).

    ``header_timeout``: seconds a new connection may take to send its first request head
    (None: no limit, uvicorn's own behaviour). ``announce``: ``(what, path)``; once the
    socket listens, one line on stderr names the URL (the port actually bound, so ``port=0``
    works): what a person starting the server reads, and what a supervisor can wait for.
    """
    check_uvicorn_options(uvicorn_kw)
    require_uvicorn()
    import uvicorn

    if isinstance(app, StreamableHTTPApp):
        # Before listening: a Redis that refuses is one line and no server, not a worker
        # that starts sharing nothing (the app's lifespan finds it checked already).
        await app.check_backend()

    class _Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if announce is not None and self.started and sys.stderr is not None:
                # A closed or broken stderr (a daemon without one) must not stop the server.
                with contextlib.suppress(OSError, ValueError):
                    print(_announcement(self, host, *announce), file=sys.stderr, flush=True)

        async def shutdown(self, sockets: Any = None) -> None:
            # uvicorn waits for open connections before the lifespan shutdown; SSE
            # streams never end on their own, so end the sessions (and their streams) first.
            closer = getattr(app, "aclose", None)
            if closer is not None:
                await closer()
            # Then the requests in flight get the same bound uvicorn would give them, but
            # end with an answer instead of uvicorn's cancellation (a traceback, a stream
            # cut without its response).
            drain = getattr(app, "drain", None)
            if drain is not None:
                await drain(self.config.timeout_graceful_shutdown or 0)
            await super().shutdown(sockets)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                graceful.uvicorn_owns_signals = True
                yield

    kw: dict[str, Any] = {
        "timeout_graceful_shutdown": DRAIN_TIMEOUT,
        "access_log": False,
        "lifespan": "on",
    }
    kw.update(uvicorn_kw)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, **kw)
    config.load()
    if header_timeout is not None:
        config.http_protocol_class = head_timeout_protocol(
            config.http_protocol_class, header_timeout
        )
    graceful = _GracefulSigterm()
    with graceful.installed():
        await _Server(config).serve()


class _GracefulSigterm:
    """SIGTERM after a graceful shutdown is a success: the process exits 0.

    uvicorn restores the handlers that were in place before it started and raises each
    signal it caught again once shut down, so a SIGTERM (how supervisors stop a service)
    would kill the process after the shutdown it asked for had completed. Installing this
    handler before uvicorn starts makes it the one restored: it swallows that second
    SIGTERM, and only that one (public ``signal`` API; no uvicorn internals). A SIGTERM
    before uvicorn took over keeps the behaviour the handler replaced.
    """

    def __init__(self) -> None:
        self.uvicorn_owns_signals = False
        self._previous: Any = signal.SIG_DFL

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        if self.uvicorn_owns_signals:
            return  # uvicorn's re-raise after its graceful shutdown
        signal.signal(signal.SIGTERM, self._previous)
        if callable(self._previous):
            self._previous(signum, frame)
        elif self._previous == signal.SIG_DFL:
            signal.raise_signal(signal.SIGTERM)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        # Signal handlers can be set from the main thread only; uvicorn captures none
        # elsewhere either, so there is nothing to undo off it.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        self._previous = signal.signal(signal.SIGTERM, self._on_sigterm)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, self._previous)


def check_uvicorn_options(options: dict[str, Any]) -> None:
    """Refuse ``{"http": "mcpkit"}``, which named mcpkit's own HTTP/1.1 protocol until it
    was removed (issue 42): connections are served by uvicorn's own protocols now
    (httptools when installed, else h11), and silently taking the name for one of them
    would hide that the option means nothing any more."""
    if options.get("http") == "mcpkit":
        raise ValueError(
            'uvicorn_options={"http": "mcpkit"}: mcpkit no longer has an HTTP/1.1 protocol '
            "of its own (removed in issue 42); uvicorn's serves every connection: leave "
            '"http" out (httptools when installed, else h11), or name "httptools" or "h11"'
        )


def _announcement(served: Any, host: str, what: str, path: str) -> str:
    """``mcpkit: serving WHAT at URL (Ctrl-C to stop)``, with the port the listening
    socket got; WHAT says where the sessions live (``Streamable HTTP (sessions in Redis
    10.0.0.5:6379/0)``)."""
    port = None
    for listener in getattr(served, "servers", []):
        for sock in getattr(listener, "sockets", None) or []:
            port = sock.getsockname()[1]
            break
    return announcement(what, host, port, path)


#: The HTTP servers ``serve_http`` can run the app on: uvicorn (the default, ASGI) and
#: granian (RSGI, the ``[granian]`` extra; see docs/dependencies.md for what it measured).
HTTP_SERVERS = ("uvicorn", "granian")


def http_server_choice(given: str | None, environ: Mapping[str, str] | None = None) -> str:
    """``given`` (``http_server=``), else ``MCPKIT_HTTP_SERVER`` (in ``environ``, default
    this process's environment), else uvicorn; refused when it names another server."""
    chosen = (given or HTTP_SERVER.value(environ) or "uvicorn").strip().lower()
    if chosen not in HTTP_SERVERS:
        where = "http_server" if given else HTTP_SERVER.name
        raise ValueError(f"{where}={chosen!r}: use {' or '.join(HTTP_SERVERS)}")
    return chosen


def serve_http(
    server: SessionFactory,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    log_level: str = "warning",
    header_timeout: float | None = HEADER_TIMEOUT,
    uvicorn_options: dict[str, Any] | None = None,
    http_server: str | None = None,
    **app_kwargs: Any,
) -> None:
    """Serve ``server`` over Streamable HTTP with uvicorn, or granian (blocking).

    ``app_kwargs`` go to :func:`create_http_app`; ``uvicorn_options`` to ``uvicorn.Config``
    (e.g. ``{"http": "httptools"}``, ``{"ssl_certfile": ...}``). A connection that does not
    send its first request head within ``header_timeout`` seconds is closed (408).

    ``http_server``: ``"uvicorn"`` (the default) or ``"granian"`` (its RSGI interface, one
    worker; the ``[granian]`` extra; ``uvicorn_options`` then refused). Unset:
    ``MCPKIT_HTTP_SERVER``, else uvicorn.

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
    chosen = http_server_choice(http_server)
    opts = uvicorn_options or {}
    check_uvicorn_options(opts)
    app: StreamableHTTPApp = create_http_app(server, **app_kwargs)
    path = app_kwargs.get("path", "/mcp") or "/"
    announce = (f"Streamable HTTP ({app.describe_state()})", path)
    if chosen == "granian":
        if opts:
            raise ValueError("uvicorn_options apply to uvicorn only, not to http_server='granian'")
        if app.legacy is not None:
            raise ValueError("legacy_sse is served by the ASGI app (uvicorn) only")
    require_http_server(chosen)  # before any loop starts: a missing extra is one clear line
    serve: Callable[..., Awaitable[None]] = (
        serve_granian if chosen == "granian" else functools.partial(serve_app, **opts)
    )
    run_loop(
        lambda: serve(
            app,
            host=host,
            port=port,
            log_level=log_level,
            header_timeout=header_timeout,
            announce=announce,
        )
    )


def serve_sse(
    server: SessionFactory,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    log_level: str = "warning",
    header_timeout: float | None = HEADER_TIMEOUT,
    uvicorn_options: dict[str, Any] | None = None,
    **app_kwargs: Any,
) -> None:
    """Serve ``server`` over the legacy HTTP+SSE transport (2024-11-05) with uvicorn (blocking)."""
    from ._legacy import create_sse_app

    opts = uvicorn_options or {}
    check_uvicorn_options(opts)
    app = create_sse_app(server, **app_kwargs)
    run_loop(
        lambda: serve_app(
            app,
            host=host,
            port=port,
            log_level=log_level,
            header_timeout=header_timeout,
            announce=(
                "HTTP+SSE (legacy; sessions in this process)",
                app_kwargs.get("sse_path", "/sse"),
            ),
            **opts,
        )
    )


def _require(module: str, message: str) -> None:
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:
            raise
        raise RuntimeError(message) from None


def require_uvicorn() -> None:
    """Raise a RuntimeError saying which extra brings uvicorn when it is not installed."""
    _require(
        "uvicorn",
        "serving over HTTP needs uvicorn, which the [http] extra brings: "
        "pip install 'mcpkit[http]'",
    )


def require_http_server(chosen: str) -> None:
    """Raise a RuntimeError saying which extra brings ``chosen`` (an :data:`HTTP_SERVERS`
    name) when it is not installed."""
    if chosen != "granian":
        require_uvicorn()
        return
    _require(
        "granian", "serving with granian needs the [granian] extra: pip install 'mcpkit[granian]'"
    )


def options_from_env(options: dict[str, Any]) -> dict[str, Any]:
    """Add the allow-lists from ``MCPKIT_ALLOWED_HOSTS`` / ``MCPKIT_ALLOWED_ORIGINS``
    (comma-separated) unless given: how a deployment configures ``mcpkit run``."""
    out = dict(options)
    for opt, variable in (("allowed_hosts", ALLOWED_HOSTS), ("allowed_origins", ALLOWED_ORIGINS)):
        items = variable.items()
        if opt not in out and items:
            out[opt] = items
    return out


def allow_list_problem(
    options: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> str | None:
    """What is wrong with the Host/Origin allow-lists an HTTP entry point will use (the
    ``allowed_hosts``/``allowed_origins`` options, else ``MCPKIT_ALLOWED_HOSTS``/
    ``_ORIGINS``), in one line naming the flag or variable; None when they are usable. The
    CLI refuses a wrong one with its other settings (exit 2), not with a traceback once it
    serves."""
    lists = []
    for key, flag, variable in (
        ("allowed_hosts", "--allowed-host", ALLOWED_HOSTS),
        ("allowed_origins", "--allowed-origin", ALLOWED_ORIGINS),
    ):
        given = options.get(key)
        lists.append(
            (flag, given) if given is not None else (variable.name, variable.items(environ))
        )
    (host_source, hosts), (origin_source, origins) = lists
    try:
        HostOriginPolicy(hosts, None)
    except ValueError as e:
        return f"{host_source}: {e}"
    try:
        HostOriginPolicy(hosts, origins)
    except ValueError as e:
        return f"{origin_source}: {e}"
    return None


def run(server: SessionFactory, transport: str = "http", **options: Any) -> None:
    """Serve ``server`` over ``transport`` (``"http"``: Streamable HTTP, ``"sse"``: legacy
    HTTP+SSE) with uvicorn (or granian: ``http_server``), blocking; ``options`` go to
    :func:`serve_http`/:func:`serve_sse`.

    This is what ``mcpkit run FILE --transport http|sse [--host H] [--port P]`` calls.
    """
    options = options_from_env(options)
    if transport in ("http", "streamable-http"):
        serve_http(server, **options)
    elif transport == "sse":
        if options.pop("http_server", None) not in (None, "uvicorn"):
            raise ValueError("http_server: the legacy sse transport is served by uvicorn only")
        require_uvicorn()
        serve_sse(server, **options)
    else:
        raise ValueError(f"unknown HTTP transport {transport!r} (use 'http' or 'sse')")
