"""The Streamable HTTP server: a bare ASGI application (no framework on the hot path).

One endpoint answers POST (client messages), GET (the standalone stream, or resumption
with ``Last-Event-ID``) and DELETE (end of session). The app is the frame; its parts do the
work: a :class:`~mcpkit.lowlevel.SessionRegistry` (sessions created by ``initialize``,
identified by a CSPRNG id, ended by DELETE, by an idle timeout or by the session cap), the
POST handler and the stream handler, configured by one :class:`HTTPAppOptions`. Sessions run
in a task group owned by the app (opened by the ASGI lifespan, by ``async with app``, or
lazily on asyncio when neither happened, e.g. when mounted in a framework that does not
forward lifespan events).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextlib import AsyncExitStack
from functools import partial
from typing import Any

import anyio
from anyio.abc import TaskGroup

from .._auth._resource import ResourceServer
from .._backend import start_detached
from .._exceptions import INVALID_REQUEST, BackendUnavailable
from .._http._asgi import (
    BODY_TIMEOUT,
    Answer,
    Receive,
    Scope,
    Send,
    route_path,
    same_path,
)
from .._http._events import EventStore, InMemoryEventStore
from .._http._security import HostOriginPolicy, SessionOwnership
from .._http._transport import HTTPServerTransport
from ._auth import AuthGate, owner_fn
from ._common import (
    allow_header,
    named_session,
    serve_lifespan,
)
from ._edge import exchange_of, serve_exchange, write_answer
from ._legacy import SSEApp
from ._options import DRAIN_TIMEOUT, HTTPAppOptions, stateless_keyword
from ._pipelining import PipelinedRequests
from ._post import PostHandler
from ._registry import (
    MemorySessionRegistry,
    SessionBackend,
    SessionEntry,
    SessionFactory,
    SessionRegistry,
    hosting_of,
)
from ._rsgi import rsgi_del, rsgi_init, serve_rsgi
from ._stateless import StatelessEraHandler
from ._streams import StreamHandler

logger = logging.getLogger("mcpkit.http")


class StreamableHTTPApp:
    """The ASGI application serving an MCP server over Streamable HTTP.

    Create it with :func:`create_http_app`. Mount it in Starlette/FastAPI like any ASGI app;
    when the framework does not forward lifespan events to mounted apps, either enter the
    app in your lifespan (``async with mcp_app:``) or rely on the lazy start (asyncio only).
    """

    def __init__(self, server: SessionFactory, options: HTTPAppOptions | None = None) -> None:
        self.server = server
        #: What the app asks of the server beyond sessions (None: a low-level factory).
        self.hosting = hosting_of(server)
        self.options = opts = options if options is not None else HTTPAppOptions()
        self.policy = HostOriginPolicy(opts.allowed_hosts, opts.allowed_origins)
        backend: SessionBackend | None = opts.backend
        self.event_store: EventStore | None = None
        if opts.resumable and not opts.sessionless:
            self.event_store = opts.event_store or (
                backend.event_store() if backend is not None else InMemoryEventStore()
            )
        #: Checks bearer tokens when the app is protected (``options.auth``).
        self.gate = AuthGate(opts.auth, self.hosting) if opts.auth is not None else None
        self.ownership = SessionOwnership(owner_fn(opts.auth, opts.session_owner))
        self.registry: SessionRegistry = (
            backend.registry(server, opts, self.event_store, self.ownership)
            if backend is not None and not opts.sessionless
            else MemorySessionRegistry(server, opts, self.event_store, self.ownership)
        )
        self.streams = StreamHandler(opts, self.registry)
        #: Serves the stateless era's requests (no session), each in its own POST's task.
        self.stateless_era = StatelessEraHandler(server, opts, self.hosting)
        self.posts = PostHandler(
            server,
            opts,
            self.registry,
            self.ownership,
            self.streams,
            self.ensure_host,
            self.stateless_era,
            gate=self.gate,
        )
        self.legacy: SSEApp | None = None
        if opts.legacy_sse:
            self.legacy = SSEApp(
                server,
                allowed_hosts=opts.allowed_hosts,
                allowed_origins=opts.allowed_origins,
                max_body_size=opts.max_body_size,
                max_sessions=opts.max_sessions,
                session_owner=opts.session_owner,
                auth=opts.auth,
            )
        #: The pipelined requests of each HTTP/1.x connection (``_pipelining.py``: what
        #: bounds a client that pipelines and never reads).
        self.pipelined = PipelinedRequests()
        self._tg: TaskGroup | None = None
        self._host_started: anyio.Event | None = None
        self._stop: anyio.Event | None = None
        self._lazy_task: Any = None
        self._closing = False
        self._stack: AsyncExitStack[bool | None] | None = None

    @property
    def sessions(self) -> OrderedDict[str, SessionEntry]:
        """The live sessions of this process by id, most recently active last."""
        return self.registry.sessions

    # ------------------------------------------------------------------ running

    async def check_backend(self) -> None:
        """Reach the shared backend once (Redis: a ``PING``, the shared ``requestState``
        keys read); nothing to do without one. A backend that cannot be reached raises
        :class:`~mcpkit.BackendUnavailable`, one line naming it: ``mcpkit run`` and
        ``Server.run`` call this before listening, and exit with that line. Entered by an
        ASGI server's lifespan, the app logs that line and serves on (what needs the
        backend is answered 503 until it answers; 2026-07-28 requests are served)."""
        check = getattr(self.options.backend, "check", None)
        if check is not None and not self.options.sessionless:
            await check()

    def describe_state(self) -> str:
        """Where the sessions live, for the startup line: ``sessions in Redis
        10.0.0.5:6379/0``, ``sessions in this process``, or ``no sessions (sessionless)``."""
        if self.options.sessionless:
            return "no sessions (sessionless)"
        backend = self.options.backend
        if backend is None:
            return "sessions in this process"
        where = getattr(backend, "where", None)
        return f"sessions in {where}" if isinstance(where, str) else "sessions shared"

    async def __aenter__(self) -> StreamableHTTPApp:
        try:
            await self.check_backend()
        except BackendUnavailable as e:
            logger.error("%s; serving on (requests that need it are answered 503)", e)
        self._closing = False
        self._stack = stack = AsyncExitStack()
        # The server's own lifespan (mcpkit.Server.running) spans the app's.
        if self.hosting is not None:
            await stack.enter_async_context(self.hosting.running())
        self._tg = tg = anyio.create_task_group()
        await tg.__aenter__()
        tg.start_soon(self.registry.reap_forever)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
        tg, self._tg = self._tg, None
        try:
            if tg is not None:
                tg.cancel_scope.cancel()
                await tg.__aexit__(None, None, None)
        finally:
            stack, self._stack = self._stack, None
            if stack is not None:
                await stack.aclose()

    async def aclose(self) -> None:
        """Graceful shutdown: end every session and every open stream."""
        self._closing = True
        if self.hosting is not None:
            self.hosting.end_streams()  # 2026 listen streams end with their result
        await self.registry.aclose()
        if self.legacy is not None:
            await self.legacy.aclose()
        if self._stop is not None:
            self._stop.set()  # a lazily started host exits too

    async def drain(self, timeout: float) -> None:
        """After :meth:`aclose` (a shutdown): wait up to ``timeout`` seconds for the
        stateless requests in flight, then cancel the rest, each answered with an error
        (none is cut off mid-stream)."""
        await self.stateless_era.drain(timeout)

    async def ensure_host(self) -> TaskGroup:
        """The task group hosting the sessions (the server's lifespan runs in it)."""
        if self._tg is not None:
            return self._tg
        # No lifespan and no `async with`: host the sessions in a task of our own, which
        # only asyncio allows (a task outliving the request that started it).
        if self._host_started is None:
            self._host_started = anyio.Event()
            self._stop = anyio.Event()
            self._lazy_task = start_detached(
                self._lazy_host,
                why="the MCP app needs its lifespan on this event loop: "
                "enter it with `async with app:`",
            )
        await self._host_started.wait()
        assert self._tg is not None
        return self._tg

    async def _lazy_host(self) -> None:
        async with self:
            assert self._host_started is not None and self._stop is not None
            self._host_started.set()
            await self._stop.wait()

    # ------------------------------------------------------------------ ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            return
        # A thin adapter: the request read into an Exchange, served by the one edge, its
        # Answer written. The legacy HTTP+SSE transport (an ASGI app of its own) is mounted
        # beside the endpoint.
        conn = self.pipelined.begin(scope)  # before the first await (see _pipelining.py)
        legacy = self.legacy
        if (
            legacy is not None
            and legacy.handles(scope)
            and not self.on_path(route_path(scope))
            and (self.gate is None or not self.gate.is_metadata(scope))
        ):
            await self.ensure_host()  # the server's lifespan covers legacy clients too
            await self.pipelined.write(conn, send, partial(legacy, scope, receive))
            return
        answer = await serve_exchange(self, exchange_of(scope, receive))
        writer = partial(write_answer, answer, method=scope["method"], path=self.options.path or "")
        await self.pipelined.write(conn, send, writer)

    # ------------------------------------------------------------------ RSGI

    # granian's RSGI (``granian --interface rsgi``; the [granian] extra): the spec's way for
    # an application speaking both interfaces. The same edge serves it (``_rsgi.py``).

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        rsgi_init(self, loop)

    async def __rsgi__(self, scope: Any, protocol: Any) -> None:
        await serve_rsgi(self, scope, protocol)

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        rsgi_del(self, loop, self._lazy_task, DRAIN_TIMEOUT)

    def on_path(self, path: str) -> bool:
        """Whether ``path`` (below the mount point) is the endpoint's."""
        endpoint = self.options.path
        return endpoint is None or same_path(path, endpoint)

    @property
    def closing(self) -> bool:
        """True once the app is shutting down (new requests get 503)."""
        return self._closing

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await serve_lifespan(receive, send, lambda: self)

    # ------------------------------------------------------------------ DELETE

    async def end_session(self, headers: dict[str, str]) -> Answer:
        """The answer to a DELETE of the handshake era: the session it names ended."""
        if self.options.sessionless:
            return Answer.error(
                405,
                INVALID_REQUEST,
                "Method Not Allowed: no sessions (sessionless mode)",
                headers=[(b"allow", allow_header(self.options))],
            )
        entry = await named_session(self.registry, headers)
        if isinstance(entry, Answer):
            return entry
        await self.registry.terminate(entry)
        return Answer(200)


def create_http_app(
    server: SessionFactory,
    *,
    options: HTTPAppOptions | None = None,
    path: str | None = "/mcp",
    json_response: bool = False,
    sessionless: bool = False,
    allowed_hosts: Iterable[str] | None = None,
    allowed_origins: Iterable[str] | None = None,
    event_store: EventStore | None = None,
    resumable: bool = True,
    get_stream: bool = True,
    session_idle_timeout: float | None = 1800.0,
    max_sessions: int = 10_000,
    max_body_size: int = 4 * 1024 * 1024,
    body_timeout: float = BODY_TIMEOUT,
    retry_ms: int = 1000,
    sse_ping_interval: float | None = 15.0,
    session_owner: Callable[[dict[str, str]], str | None] | None = None,
    legacy_sse: bool = False,
    auth: ResourceServer | None = None,
    backend: SessionBackend | None = None,
    max_stateless_requests: int = 4096,
    max_stateless_requests_per_principal: int = 512,
    max_listen_streams: int = 1024,
    max_listen_streams_per_principal: int = 64,
    stateless: bool | None = None,
) -> StreamableHTTPApp:
    """An ASGI application serving ``server`` over Streamable HTTP at ``path``.

    Args:
        server: an :class:`mcpkit.Server` (or anything with ``create_session(transport)
            -> ServerSession``); it serves 2025 sessions and 2026-07-28 stateless requests
            on the same endpoint.
        options: all of the settings below as one :class:`HTTPAppOptions` (then the
            keywords must be left out).
        path: the MCP endpoint (None: answer on any path, e.g. when mounted).
        json_response: answer each request with one JSON body instead of an SSE stream
            (then notifications tied to a request go on the GET stream).
        sessionless: handshake-era HTTP without sessions: each POST is served by a fresh
            session, none is kept; no GET/DELETE. (The stateless era, 2026-07-28, is
            served on the same endpoint either way.)
        allowed_hosts: accepted ``Host`` values (``host`` or ``host:port``; ``"*"`` for any).
            Default: loopback names only (DNS-rebinding protection).
        allowed_origins: accepted ``Origin`` values (``scheme://host[:port|:*]``; ``"*"``).
            Default: the allowed hosts over http and https, any port.
        event_store: where events are kept for resumption (default: bounded, in memory).
        resumable: give events ids and keep them for ``Last-Event-ID`` replay.
        get_stream: offer the standalone GET stream (else GET answers 405).
        session_idle_timeout: seconds without traffic after which a session ends
            (None: never; sessions then end only by DELETE or the cap).
        max_sessions: sessions held at once; the least recently active idle one is
            dropped to make room, and new ones get 503 when all are busy.
        max_body_size: largest POST body accepted (413 above).
        body_timeout: seconds a POST body may take to arrive in full (408 after).
        retry_ms: the SSE ``retry`` sent to clients (reconnection delay).
        sse_ping_interval: comment lines sent on idle GET streams to detect dead peers.
        session_owner: ``fn(request headers) -> user identity``: binds each session to the
            user who created it (e.g. the subject of the bearer token); another user's
            requests with that session id get 404, as for an unknown session.
        legacy_sse: also serve the 2024-11-05 HTTP+SSE transport (``GET /sse``,
            ``POST /messages/``) beside the endpoint, for old clients.
        auth: check bearer tokens (an OAuth 2.1 resource server, see :mod:`mcpkit.auth`):
            requests without a valid token for this server get 401 with the challenge
            naming the Protected Resource Metadata (served at its well-known path),
            missing scopes 403; sessions are bound to the token's principal. Default: the
            server's own ``auth`` (``Server(auth=...)``).
        backend: keep sessions, their events and the routing between workers in a store
            shared by many workers (see ``mcpkit.RedisBackend``), so any worker serves any
            request of any session. Default: this process only.
        max_stateless_requests: 2026-07-28 requests served at once (listen streams
            aside); each is served in the task of its own POST, and past this bound new
            ones get 503 with ``Retry-After``.
        max_stateless_requests_per_principal: of those, how many one verified principal
            may hold (429 past it); requests without a principal count app-wide only.
        max_listen_streams: open ``subscriptions/listen`` streams, a budget of their own
            (a listen stream never holds a call's place); 503 past it.
        max_listen_streams_per_principal: of those, how many one client may hold (429
            past it): one verified principal, or, for requests without one, one client
            address (as the ASGI server reports it: behind a proxy, let it read
            ``X-Forwarded-For``).
        stateless: deprecated, the old name of ``sessionless`` (a DeprecationWarning;
            removed in the next release).

    Example::

        app = create_http_app(server, json_response=True)
        # uvicorn.run(app, host="127.0.0.1", port=8000)
    """
    if stateless is not None:  # the deprecated spelling, for one release
        sessionless = sessionless or stateless_keyword(stateless)
    built = HTTPAppOptions(
        path=path,
        json_response=json_response,
        sessionless=sessionless,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        event_store=event_store,
        resumable=resumable,
        get_stream=get_stream,
        session_idle_timeout=session_idle_timeout,
        max_sessions=max_sessions,
        max_body_size=max_body_size,
        body_timeout=body_timeout,
        retry_ms=retry_ms,
        sse_ping_interval=sse_ping_interval,
        session_owner=session_owner,
        legacy_sse=legacy_sse,
        auth=auth,
        backend=backend,
        max_stateless_requests=max_stateless_requests,
        max_stateless_requests_per_principal=max_stateless_requests_per_principal,
        max_listen_streams=max_listen_streams,
        max_listen_streams_per_principal=max_listen_streams_per_principal,
    )
    chosen = _one_of(options, built)
    if chosen.auth is None and getattr(server, "auth", None) is not None:
        chosen = dataclasses.replace(chosen, auth=server.auth)  # type: ignore[attr-defined]
    return StreamableHTTPApp(server, chosen)


def _one_of(options: HTTPAppOptions | None, built: HTTPAppOptions) -> HTTPAppOptions:
    """``options=``, or the options the keywords built; refused when both were given."""
    if options is None:
        return built
    defaults = HTTPAppOptions()
    changed = [
        f.name
        for f in dataclasses.fields(HTTPAppOptions)
        if getattr(built, f.name) != getattr(defaults, f.name)
    ]
    if changed:
        raise TypeError(f"pass either options= or keywords, not both (got {', '.join(changed)})")
    return options


async def close_sse_stream(ctx: Any, *, retry_ms: int | None = None) -> bool:
    """From a request handler: end the HTTP connection of this request's SSE stream.

    The request goes on; its later messages (and result) are kept, and the client
    reconnects after ``retry_ms`` with ``GET`` + ``Last-Event-ID`` to get them (SSE
    polling). Returns False where that is not possible (not HTTP, JSON responses, no event
    store).
    """
    rc = getattr(ctx, "request_context", ctx)  # a Context, or a low-level RequestContext
    transport = rc.transport.stream
    if not isinstance(transport, HTTPServerTransport):
        return False
    return await transport.close_stream_connection(rc.request_id, retry_ms)


__all__ = ["HTTPAppOptions", "StreamableHTTPApp", "close_sse_stream", "create_http_app"]
