"""The Streamable HTTP endpoint served through granian's RSGI (the ``[granian]`` extra).

RSGI (granian's documented interface, spec 1.6: ``docs/spec/RSGI.md`` in granian's
repository) hands an application each request as a scope and a protocol object whose body
and responses are read and written by granian's Rust HTTP server (hyper): no HTTP framing
here, as none in the ASGI path. This is a front end like the ASGI app and nothing more: it
reads the request into an :class:`~mcpkit._app._edge.Exchange`, calls
:func:`~mcpkit._app._edge.serve_exchange`, the one edge (Host/Origin, the bearer token,
sessions, the body's size and speed, the era: all decided there, as for uvicorn), and
writes the :class:`~mcpkit._http._asgi.Answer` it returns: one body through
``response_bytes``, a stream through ``response_stream``.

Two ways in, both optional, neither a default:

- ``granian --interface rsgi module:app`` with ``app = server.http_app()``: a
  :class:`~mcpkit.StreamableHTTPApp` is an RSGI application too (``__rsgi__``, and
  ``__rsgi_init__``/``__rsgi_del__`` running the app's lifespan: the spec's pattern for an
  application speaking both interfaces). granian prefers ``__rsgi__`` when told RSGI.
- ``serve_http(..., http_server="granian")`` (``MCPKIT_HTTP_SERVER=granian`` for ``mcpkit
  run`` and ``Server.run``): :func:`serve_granian`, granian's documented embeddable server
  on this process's event loop, one worker, like ``serve_app`` with uvicorn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from .._backend import asyncio_loop
from .._http._asgi import ASGIMessage, text_header_map
from ._edge import Exchange, serve_exchange, write_answer
from ._options import DRAIN_TIMEOUT, announcement

if TYPE_CHECKING:
    from granian.rsgi import Scope

    from ._streamable import StreamableHTTPApp

logger = logging.getLogger("mcpkit.http")

#: What the ASGI ``receive`` gives once the body was read and the client then left.
_DISCONNECT: ASGIMessage = {"type": "http.disconnect"}


class HTTPProtocol(Protocol):
    """What this front end uses of RSGI's HTTP protocol object (spec 1.6, "HTTP protocol
    interface"): the body whole or in chunks, the client's disconnect, and two of the
    response methods."""

    async def __call__(self) -> bytes: ...
    def __aiter__(self) -> AsyncIterator[bytes]: ...
    async def client_disconnect(self) -> None: ...
    def response_bytes(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None: ...
    def response_stream(self, status: int, headers: list[tuple[str, str]]) -> Any: ...


class _Body:
    """``receive`` over an RSGI protocol: the body as ASGI ``http.request`` messages, then
    ``http.disconnect`` once the client left (what the streams watch for).

    ``whole``: the request declared a length within the app's limit (hyper reads exactly
    that many bytes), so the body is read in one call; otherwise chunk by chunk, and the
    edge's reader refuses it as soon as the chunks pass the limit, as on the ASGI path.
    """

    __slots__ = ("_chunks", "_done", "_proto", "_whole")

    def __init__(self, proto: HTTPProtocol, whole: bool) -> None:
        self._proto = proto
        self._whole = whole
        self._chunks: Any = None
        self._done = False

    async def __call__(self) -> ASGIMessage:
        if self._done:
            # The RSGI spec leaves cancelling this watcher to the application: the task
            # awaiting it (a stream's disconnect watch) is cancelled once the answer ends.
            await self._proto.client_disconnect()
            return _DISCONNECT
        if self._whole:
            self._done = True
            return {"type": "http.request", "body": await self._proto(), "more_body": False}
        if self._chunks is None:
            self._chunks = self._proto.__aiter__()
        try:
            chunk: bytes = await self._chunks.__anext__()
        except StopAsyncIteration:
            self._done = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.request", "body": chunk, "more_body": True}


class _Sender:
    """``send`` (ASGI messages) over an RSGI protocol, for the answers that write
    themselves (:attr:`Answer.stream`): a head and one last body is ``response_bytes``, a
    head and more is ``response_stream``. Once the client left, what is sent is dropped,
    as uvicorn drops it: the stream learns of the departure from ``receive``."""

    __slots__ = ("_headers", "_proto", "_status", "_stream", "done")

    def __init__(self, proto: HTTPProtocol) -> None:
        self._proto = proto
        self._status = 0
        self._headers: list[tuple[str, str]] = []
        self._stream: Any = None
        self.done = False

    async def __call__(self, message: ASGIMessage) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            self._status = message["status"]
            self._headers = _text(message.get("headers", ()))
            return
        if kind != "http.response.body" or self.done:
            return
        body: bytes = message.get("body", b"")
        more = message.get("more_body", False)
        stream = self._stream
        if stream is None:
            if not more:
                self._proto.response_bytes(self._status, self._headers, body)
                self.done = True
                return
            self._stream = stream = self._proto.response_stream(self._status, self._headers)
        if not more:
            self.done = True
        if body:
            try:
                await stream.send_bytes(body)
            except RuntimeError:  # granian's RSGIProtocolClosed: the client left
                self.done = True

    def finish(self) -> None:
        """End the exchange: RSGI wants one response per request, even an empty one."""
        if self._stream is None and not self.done:
            # A head without its body, or nothing at all (a client that left: no one reads it).
            self._proto.response_bytes(self._status or 204, self._headers, b"")


def _text(headers: Any) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]


def _client(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of RSGI's ``client`` (``"host:port"``, ``"[v6]:port"``)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


async def serve_rsgi(app: StreamableHTTPApp, scope: Scope, proto: HTTPProtocol) -> None:
    """Serve one RSGI call with ``app``'s endpoint: what ``StreamableHTTPApp.__rsgi__``
    does (see the module docstring)."""
    if scope.proto != "http":
        return  # a websocket: not served, as the ASGI app serves none
    headers = text_header_map(scope.headers.items())
    if "host" not in headers and scope.authority:
        headers["host"] = scope.authority  # HTTP/2 names the host in :authority
    length = headers.get("content-length")
    whole = length is not None and length.isdigit() and int(length) <= app.options.max_body_size
    method = scope.method
    exchange = Exchange(
        method,
        scope.path,
        headers,
        _Body(proto, whole),
        query=scope.query_string,
        scheme=scope.scheme,
        client=_client(scope.client),
    )
    answer = await serve_exchange(app, exchange)
    if answer.stream is None:
        proto.response_bytes(answer.status, _text(answer.headers), answer.body)
        return
    sender = _Sender(proto)
    await write_answer(answer, sender, method, app.options.path or "")
    sender.finish()


def rsgi_init(app: StreamableHTTPApp, loop: asyncio.AbstractEventLoop) -> None:
    """granian is starting a worker: host ``app`` (its lifespan: the server's own, the
    session reaper) on the worker's loop before the first request.

    ``granian --interface rsgi`` calls this before its loop runs. The embeddable server
    calls it on a running loop, whose owner hosts the app (:func:`serve_granian` enters it;
    anyone else embedding granian enters ``async with app:`` likewise), so nothing is done.
    """
    if app.legacy is not None:
        # Mounted beside the endpoint in the ASGI app only: refused at startup rather than
        # its paths answered 404 by this front end.
        raise RuntimeError("legacy_sse is served by the ASGI app (uvicorn) only, not over RSGI")
    if loop.is_running():
        return
    loop.run_until_complete(app.ensure_host())


def rsgi_del(
    app: StreamableHTTPApp, loop: asyncio.AbstractEventLoop, host: Any, drain: float
) -> None:
    """granian stopped a worker: end the sessions and their streams, give the stateless
    requests in flight ``drain`` seconds, and end the app's lifespan, run by ``host`` (the
    task :func:`rsgi_init` started; nothing on a running loop: see there)."""
    if loop.is_running():
        return

    async def close() -> None:
        await app.aclose()  # tells the host to leave
        await app.drain(drain)
        if host is not None:
            await host  # the server's lifespan ends in it

    loop.run_until_complete(close())


def _free_port(host: str) -> int:
    """A port free on ``host`` now: granian binds by number, so ``port=0`` is resolved
    here (the announcement names the port, as uvicorn's path does)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host.strip("[]"), 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def _stop_on_signals(stop: anyio.Event) -> Iterator[None]:
    """SIGINT and SIGTERM stop the server gracefully (the embeddable server leaves signals
    to its host); off the main thread there is nothing to install."""
    loop = asyncio_loop()  # granian runs on asyncio only: None would be another loop
    if loop is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    for signum in signals:
        loop.add_signal_handler(signum, stop.set)
    try:
        yield
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)


async def serve_granian(
    app: StreamableHTTPApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    header_timeout: float | None = None,
    announce: tuple[str, str] | None = None,
    drain_timeout: float = DRAIN_TIMEOUT,
) -> None:
    """Serve ``app`` with granian's embeddable server (RSGI, HTTP/1.1, one worker) on this
    asyncio loop until SIGINT/SIGTERM or cancellation.

    ``header_timeout``: seconds a connection may take to send a request head (granian's
    ``header_read_timeout``; None: granian's 30 s). ``announce``: as ``serve_app``'s, one
    line on stderr once the socket listens. On a stop, the sessions and their streams end,
    the stateless requests in flight get ``drain_timeout`` seconds, then granian stops.
    """
    from granian.constants import HTTPModes, Interfaces, TaskImpl
    from granian.http import HTTP1Settings
    from granian.log import LogLevels
    from granian.server.embed import Server

    await app.check_backend()  # before listening, as serve_app does
    if port == 0:
        port = _free_port(host)
    http1 = HTTP1Settings()
    if header_timeout is not None:
        http1 = HTTP1Settings(header_read_timeout=max(1, int(header_timeout * 1000)))
    line = None
    if announce is not None:
        line = announcement(f"{announce[0]} on granian", host, port, announce[1])
    server: Any = Server(
        _Embedded(app, line),
        address=host.strip("[]"),
        port=port,
        interface=Interfaces.RSGI,
        http=HTTPModes.http1,
        http1_settings=http1,
        websockets=False,
        task_impl=TaskImpl.asyncio,  # anyio needs a current asyncio task
        log_level=LogLevels(log_level.lower()),
        log_access=False,
    )
    stop = anyio.Event()
    async with app:  # the server's lifespan spans the serving
        with _stop_on_signals(stop):
            async with anyio.create_task_group() as tg:
                tg.start_soon(_run_until_stopped, server, stop)
                await stop.wait()
                await app.aclose()
                await app.drain(drain_timeout)
                server.stop()


class _Embedded:
    """What :func:`serve_granian` hands granian: the app's RSGI entry, and an init hook that
    announces ``line`` once the worker listens.

    granian's embeddable worker calls the init hook, then binds its socket and starts its
    runtime, all in one step of the loop: a callback scheduled from the hook runs after it.
    (granian's own startup hooks run before the worker binds: too early to say so.)
    """

    def __init__(self, app: StreamableHTTPApp, line: str | None) -> None:
        self.__rsgi__ = app.__rsgi__
        self._line = line

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._line is not None:
            loop.call_soon(_announce, self._line)


async def _run_until_stopped(server: Any, stop: anyio.Event) -> None:
    try:
        await server.serve()
    finally:
        stop.set()  # granian ended on its own (a failed bind): so does the serving


def _announce(line: str) -> None:
    if sys.stderr is not None:
        with contextlib.suppress(OSError, ValueError):
            print(line, file=sys.stderr, flush=True)
