"""``Proxy``: serve any MCP server (a command, a URL, a server file) over another transport.

Each client of the proxy gets its own connection upstream, opened before the client's first
message is read, so the proxy declares exactly the upstream server's capabilities, info and
instructions. Then everything is forwarded, both ways and unchanged apart from request ids:

* the client's requests go upstream; progress comes back as the client's own progress;
  cancelling one (``notifications/cancelled``) cancels it upstream;
* the server's requests (sampling, elicitation, roots) go to the client, tied to the client's
  request they serve when there is just one in flight (over HTTP they then ride its stream);
* notifications go through in both directions (log messages, list changes, resource
  updates, task status, roots changes, elicitation completion).

Downstream the proxy speaks the handshake revisions: a client of the stateless revision falls
back to ``initialize`` (mcpkit's Client does by itself), since a server's requests need the
back-channel only a session has. Upstream it uses the latest handshake revision.

A command upstream is one child process per client, so children are bounded apart from
sessions: at most ``max_children`` at once (past it a new client is refused; over HTTP with
``503`` and ``Retry-After`` when served by :meth:`Proxy.http_app`), and a client whose
connection has had no request for ``child_idle_timeout`` seconds is ended, its child with it
(an HTTP client then gets ``404`` and starts a new session, as the spec has it).

With ``share_child=True`` one upstream connection (one child) serves every client instead,
for an upstream server that keeps no state per client; the routing of what it sends back
is described in ``_proxyshare``.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import anyio
import orjson

from ._client._cli import parse_pairs
from ._client._targets import HTTPTarget, StdioTarget, describe, open_target, target_of
from ._exceptions import ConnectionClosed, InvalidParams, ProtocolError
from ._proxyshare import (
    CLIENT_NOTIFICATIONS,
    CLIENT_REQUESTS,
    SERVER_NOTIFICATIONS,
    SERVER_REQUESTS,
    TOOLS_CHANGED,
    UPSTREAM_CAPABILITIES,
    AppOnlyTools,
    LinkBase,
    SharedLink,
    SharedUpstream,
)
from ._server._extensions import client_supports
from ._session._base import RequestContext
from ._session._client import ClientSession
from ._session._server import ServerSession
from ._transports._base import Transport
from .types._appconst import APPS_EXTENSION, callable_by
from .types._revisions import HANDSHAKE_PROTOCOL_VERSIONS

logger = logging.getLogger("mcpkit.proxy")

#: Bound on one forwarded request (reset by each progress report).
REQUEST_TIMEOUT = 600.0
#: Child processes (one per client of a command upstream) at once, by default. Each is a
#: whole server process (tens of MB): a handful of concurrent clients is what a local proxy
#: serves, and an unauthenticated flood of ``initialize`` must not fork the host to death.
MAX_CHILDREN = 16
#: Seconds a client's connection may go without a request before it and its child end:
#: far below the HTTP session's 30 min, since an idle child holds a process, not a dict.
CHILD_IDLE_TIMEOUT = 300.0
#: ``Retry-After`` (seconds) of the 503 answering a client past ``max_children``.
RETRY_AFTER = 5
#: Seconds a new client waits for the child of the idle client ended to make room for it.
EVICT_WAIT = 5.0


class ProxyBusy(ConnectionClosed):
    """Every child process the proxy may run is taken: the new client is refused."""


class _Admission:
    """A new client's first POST being served by :class:`_ChildGate`. Its client's link is
    made in the POST's own task (the app makes the session there), so the link finds it in
    :data:`_ADMITTING` and is never taken for idle before ``answered``: ended while its
    child starts, it would leave the POST with no answer at all (a bare 500)."""

    __slots__ = ("answered",)

    def __init__(self) -> None:
        self.answered = False


#: The admission of the first POST the current task serves (None outside :class:`_ChildGate`).
_ADMITTING: contextvars.ContextVar[_Admission | None] = contextvars.ContextVar(
    "mcpkit_proxy_admitting", default=None
)


class Proxy:
    """A server that forwards everything to ``target`` (anything :class:`mcpkit.Client`
    accepts: a command line, a ``.py`` file, an ``http(s)`` URL, ``stdio(...)``/``http(...)``).

    Serve it like a :class:`~mcpkit.Server`: ``create_http_app(Proxy("python server.py"))``,
    or ``await Proxy(url).serve(transport)``. ``mcpkit proxy TARGET --transport http`` runs it.

    Example::

        app = create_http_app(Proxy("python weather.py"))   # the stdio server, over HTTP
    """

    def __init__(
        self,
        target: Any,
        *,
        name: str = "mcpkit-proxy",
        init_timeout: float = 30.0,
        request_timeout: float = REQUEST_TIMEOUT,
        max_children: int = MAX_CHILDREN,
        child_idle_timeout: float | None = CHILD_IDLE_TIMEOUT,
        share_child: bool = False,
    ) -> None:
        if max_children < 1:
            raise ValueError(f"max_children must be at least 1, not {max_children}")
        if isinstance(target, (StdioTarget, HTTPTarget)):
            self.target: object = target
        else:
            # A command the user gave runs as if they ran it: with their environment.
            self.target = target_of(
                target, env=None, cwd=None, inherit_env=True, on_stderr=None, headers=None,
                auth=None, timeout=None,
            )  # fmt: skip
        self.name = name
        self.init_timeout = init_timeout
        self.request_timeout = request_timeout
        #: Upstream connections (child processes, for a command) open at most at once.
        self.max_children = max_children
        #: Seconds without a request before a client's connection (and child) ends; None:
        #: never (serving one client over stdio, the proxy lives as long as it).
        self.child_idle_timeout = child_idle_timeout
        #: Upstream connections open now.
        self.children = 0
        #: The clients holding one now (each with its child).
        self.links: set[_Link] = set()
        #: New clients' first POSTs being served by :meth:`http_app` (each may open one).
        self.admitting = 0
        #: The one upstream connection every client shares (``share_child``), else None.
        self.shared: SharedUpstream | None = None
        if share_child:
            self.shared = SharedUpstream(
                self._open_upstream,
                what=describe(self.target),
                name=name,
                init_timeout=init_timeout,
                request_timeout=request_timeout,
                linger=child_idle_timeout,
            )

    async def _open_upstream(self, stack: AsyncExitStack[bool | None]) -> Transport:
        return await open_target(stack, self.target)

    def full(self) -> bool:
        """True when a new client would need a child past ``max_children`` (never when
        the clients share one)."""
        return self.shared is None and self.children >= self.max_children

    async def make_room(self) -> bool:
        """End the client idle the longest (nothing in flight, no subscription: a client
        that left without saying so, most often) and wait, bounded, for its child to exit;
        False when every client is busy. Its client, if it comes back, gets 404 and starts
        a new session, as after the idle timeout."""
        idle = [link for link in self.links if not link.waiting() and not link.ending]
        if not idle:
            return False
        link = min(idle, key=lambda candidate: candidate.last_active)
        link.ending = True
        logger.info(
            "proxy: all %d children in use; the longest idle client ends", self.max_children
        )
        await link.transport.aclose()
        with anyio.move_on_after(EVICT_WAIT):
            await link.ended.wait()
        return link.ended.is_set()

    def http_app(self, **kwargs: Any) -> Any:
        """The Streamable HTTP app serving this proxy (``kwargs``: as for
        :func:`mcpkit.create_http_app`), answering ``503`` with ``Retry-After`` to a new
        client while every child is taken (before any session is made for it). With
        ``share_child``, the app's lifespan (or ``async with app``) hosts the shared child."""
        from ._app import create_http_app

        return _ChildGate(create_http_app(self, **kwargs), self)

    # ------------------------------------------------------------------ SessionFactory

    def create_session(self, transport: Transport, **kw: Any) -> ServerSession:
        """A downstream session whose upstream connection opens when it starts running."""
        return self._session(transport, self.child_idle_timeout, **kw)

    def _session(self, transport: Transport, idle: float | None, **kw: Any) -> ServerSession:
        link: _Link | SharedLink = (
            _Link(self, transport, idle)
            if self.shared is None
            else SharedLink(self.shared, transport, idle)
        )
        kw.setdefault("supported_versions", HANDSHAKE_PROTOCOL_VERSIONS)
        handlers = {m: link.forward for m in CLIENT_REQUESTS}
        apps = _AppsGate(link)
        handlers["tools/list"], handlers["tools/call"] = apps.tools_list, apps.tools_call
        session = ServerSession(
            transport,
            server_info={"name": self.name, "version": "0"},
            capabilities={},
            handlers=handlers,
            notification_handlers={m: link.notify_upstream(m) for m in CLIENT_NOTIFICATIONS},
            around_run=link.running,
            **kw,
        )
        link.downstream = session
        return session

    async def serve(self, transport: Transport) -> None:
        """Serve one client over ``transport`` until it disconnects."""
        # The one client of a connection served this way is never ended for being idle.
        session = self._session(transport, None)
        if self.shared is None or self.shared.is_hosted:
            await session.run()
            return
        async with self.shared.hosted():
            await session.run()


class _AppsGate:
    """MCP Apps through the proxy. Upstream the proxy declares the extension (it cannot wait
    for its client's ``initialize``: the connection opens first, and a shared one serves
    every client), so an apps server lists its app-only tools (``visibility: ["app"]``)
    and serves its views (``ui://`` resources, forwarded as they are). A client that
    declared the extension (a host) gets them all; to one that did not, app-only tools are
    what the apps server itself makes of them: left out of ``tools/list``, and refused on
    ``tools/call`` as unknown (checked against upstream's list, kept until it changes)."""

    def __init__(self, link: _Link | SharedLink) -> None:
        self.link = link

    def _upstream_serves_apps(self) -> bool:
        downstream = self.link.downstream
        caps = downstream.kernel.spec.capabilities if downstream is not None else {}
        exts = caps.get("extensions")
        return isinstance(exts, dict) and APPS_EXTENSION in exts

    def _filtered(self, rc: RequestContext) -> bool:
        return not client_supports(rc, APPS_EXTENSION) and self._upstream_serves_apps()

    async def tools_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        result = await self.link.forward(rc, params)
        if not self._filtered(rc) or not isinstance(result, dict):
            return result
        tools = result.get("tools")
        if not isinstance(tools, list):
            return result
        shown = [
            t for t in tools if not isinstance(t, dict) or callable_by(t.get("_meta"), "model")
        ]
        return {**result, "tools": shown}

    async def tools_call(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        name = params.get("name") if isinstance(params, dict) else None
        if isinstance(name, str) and self._filtered(rc) and name in await self._app_only():
            # Answered as the apps server answers a client that is not a host.
            raise InvalidParams(message=f"Unknown tool: {name}", data={"name": name})
        return await self.link.forward(rc, params)

    async def _app_only(self) -> frozenset[str]:
        """The names of upstream's app-only tools (its list asked once, then again only
        after it says its tools changed)."""
        link = self.link
        if isinstance(link, SharedLink):
            upstream = await link.shared.connect()
            return await link.shared.app_only.names(upstream, link.shared.request_timeout)
        if link.upstream is None:
            raise ConnectionClosed("the upstream server is not connected")
        return await link.app_only.names(link.upstream, link.proxy.request_timeout)


class _ChildGate:
    """ASGI: a client's first POST (no session yet) answered ``503`` while every child
    process is taken, so no session is made that could only fail."""

    def __init__(self, app: Any, proxy: Proxy) -> None:
        self.app = app
        self.proxy = proxy

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)  # the app's own (aclose, options, ...)

    async def __aenter__(self) -> _ChildGate:
        self._stack = stack = AsyncExitStack()
        async with stack:
            if self.proxy.shared is not None:
                await stack.enter_async_context(self.proxy.shared.hosted())
            await stack.enter_async_context(self.app)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stack.aclose()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        proxy = self.proxy
        shared = proxy.shared
        if shared is not None:
            if scope.get("type") == "lifespan" and not shared.is_hosted:

                async def announce(message: Any) -> None:
                    if message.get("type", "").startswith("lifespan.shutdown."):
                        # The ASGI server may end this task once told: end the child first.
                        with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                            await shared.stop()
                    await send(message)

                # The shared child lives in a task of the app's whole life.
                async with shared.hosted():
                    await self.app(scope, receive, announce)
                return
            await self.app(scope, receive, send)  # one child whatever the clients: no gate
            return
        if (
            scope.get("type") != "http"
            or scope.get("method") != "POST"
            or any(k.lower() == b"mcp-session-id" for k, _ in scope.get("headers", ()))
        ):
            await self.app(scope, receive, send)
            return
        # Counted from here, not from when the child starts: a flood of first POSTs all
        # pass a check of the children alone before any of them has started one.
        while proxy.children + proxy.admitting >= proxy.max_children:
            if await proxy.make_room():
                continue
            body = orjson.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32000,
                        "message": f"Service Unavailable: all {proxy.max_children} "
                        "upstream server processes are in use; retry later",
                    },
                }
            )
            headers = [
                (b"content-type", b"application/json"),
                (b"retry-after", str(RETRY_AFTER).encode()),
                (b"content-length", str(len(body)).encode()),
            ]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        proxy.admitting += 1
        admission = _Admission()
        token = _ADMITTING.set(admission)
        try:
            await self.app(scope, receive, send)
        finally:
            _ADMITTING.reset(token)
            admission.answered = True
            proxy.admitting -= 1


class _Link(LinkBase):
    """One client's pair of sessions: downstream (we serve it) and upstream (we are its client)."""

    def __init__(self, proxy: Proxy, transport: Transport, idle: float | None) -> None:
        super().__init__(transport, idle)
        self.proxy = proxy
        #: The client subscribed to resources: its connection is not idle while it waits.
        self.subscribed = False
        self.upstream: ClientSession | None = None
        self.app_only = AppOnlyTools()
        #: Being ended to make room for a new client; set once its child is gone.
        self.ending = False
        self.ended = anyio.Event()
        #: The first POST that made this link, when :class:`_ChildGate` admitted it.
        self.admission = _ADMITTING.get()

    def waiting(self) -> bool:
        """Not idle: its client's first POST is not answered yet (its child may still be
        starting), it has requests in flight, or it holds subscriptions and waits for
        their updates."""
        admission = self.admission
        opening = admission is not None and not admission.answered
        return bool(opening or self.in_flight or self.subscribed)

    @contextlib.asynccontextmanager
    async def running(self, session: ServerSession) -> AsyncIterator[None]:
        """Open upstream, adopt its identity, serve; close upstream when the client leaves."""
        proxy = self.proxy
        if proxy.full():
            raise ProxyBusy(
                f"all {proxy.max_children} upstream connections of the proxy are in use"
            )
        proxy.children += 1
        proxy.links.add(self)
        self.last_active = anyio.current_time()
        try:
            async with AsyncExitStack() as stack:
                await self._open(stack, session)
                async with self.idle_watch():
                    yield
        finally:
            proxy.children -= 1
            proxy.links.discard(self)
            self.ended.set()

    async def _open(self, stack: AsyncExitStack, session: ServerSession) -> None:
        """Open upstream (a child, for a command) and adopt its identity."""
        transport = await open_target(stack, self.proxy.target)
        upstream = ClientSession(
            transport,
            client_info={"name": self.proxy.name, "version": "0"},
            capabilities=UPSTREAM_CAPABILITIES,
            handlers={m: self.ask_client for m in SERVER_REQUESTS},
            notification_handlers={m: self.tell_client(m) for m in SERVER_NOTIFICATIONS},
        )
        await stack.enter_async_context(upstream)
        try:
            init = await upstream.initialize(timeout=self.proxy.init_timeout)
        except (ProtocolError, ConnectionClosed, TimeoutError) as e:
            raise ConnectionClosed(
                f"the upstream server {describe(self.proxy.target)} did not start: {e}"
            ) from None
        session.update_spec(
            server_info=dict(init.get("serverInfo") or session.server_info),
            instructions=init.get("instructions"),
            capabilities=dict(init.get("capabilities") or {}),
        )
        self.upstream = upstream

    async def forward(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        """A client's request, sent upstream; its progress reported back as the client's."""
        upstream = self.upstream
        if upstream is None:
            raise ConnectionClosed("the upstream server is not connected")
        if rc.request.method == "resources/subscribe":
            self.subscribed = True
        return await self.relay(rc, params, upstream, self.proxy.request_timeout)

    async def ask_client(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        """The upstream server's request (sampling, elicitation, roots), asked of the client."""
        return await self.ask(rc.request.method, params, self.proxy.request_timeout)

    def notify_upstream(self, method: str) -> Any:
        """A client's notification, sent upstream."""

        async def forward(params: dict[str, Any] | None) -> None:
            if self.upstream is not None:
                await self.upstream.notify(method, params)

        return forward

    def tell_client(self, method: str) -> Any:
        async def forward(params: dict[str, Any] | None) -> None:
            if method == TOOLS_CHANGED:
                self.app_only.changed()
            downstream = self.downstream
            if downstream is None or downstream.negotiated is None:
                return
            related = next(iter(self.in_flight.values())) if len(self.in_flight) == 1 else None
            if related is not None and method == "notifications/message":
                await related.notify(method, params)  # over HTTP: on the call's own stream
            else:
                await downstream.notify(method, params)

        return forward


def _parser(command: str) -> Any:
    import argparse

    from ._server._cli import add_http_options

    p = argparse.ArgumentParser(
        prog=f"mcpkit {command}",
        description="Serve any MCP server (a command, a .py file or a URL) over another transport.",
    )
    p.add_argument("target", help="the server: a command line (one quoted string), a file or a URL")
    p.add_argument("--transport", "-t", choices=("stdio", "http", "sse"), default="stdio")
    add_http_options(p, whose="the proxy's")
    p.add_argument(
        "--sessionless",
        action="store_true",
        help="HTTP: keep no sessions (each POST served on its own, with its own upstream)",
    )
    # The old spelling of --sessionless, for one release (warns; not in --help).
    p.add_argument("--stateless", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="an HTTP header sent to an http(s) upstream (repeatable)",
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable of a command upstream (repeatable)",
    )
    p.add_argument(
        "--max-children",
        type=int,
        default=MAX_CHILDREN,
        metavar="N",
        help=f"upstream connections (child processes) at once; past it 503 (default {MAX_CHILDREN})",
    )
    p.add_argument(
        "--child-idle-timeout",
        type=float,
        default=CHILD_IDLE_TIMEOUT,
        metavar="SECONDS",
        help=f"HTTP: end a client (and its child) idle this long (default {CHILD_IDLE_TIMEOUT:g})",
    )
    p.add_argument(
        "--share-child",
        action="store_true",
        help="HTTP: one upstream connection (one child) serves every client; only for a "
        "server that keeps no per-client state",
    )
    return p


def _proxy_of(ns: Any) -> Proxy:
    headers = parse_pairs(ns.header, ":", "--header")
    env = parse_pairs(ns.env, "=", "--env")
    # A command the user gave runs as if they ran it: with their environment, plus --env.
    target = target_of(
        ns.target, env=env or None, cwd=None, inherit_env=True, on_stderr=None,
        headers=headers or None, auth=None, timeout=None,
    )  # fmt: skip
    if headers and not isinstance(target, HTTPTarget):
        raise ValueError("--header applies to an http(s) upstream only")
    if env and not isinstance(target, StdioTarget):
        raise ValueError("--env applies to a command upstream only")
    return Proxy(
        target,
        max_children=ns.max_children,
        child_idle_timeout=ns.child_idle_timeout,
        share_child=ns.share_child,
    )


def _serve_http(proxy: Proxy, ns: Any) -> None:
    from ._app._serve import options_from_env, require_uvicorn, serve_app
    from ._transports._loop import run

    require_uvicorn()
    options: dict[str, Any] = {"sessionless": bool(ns.sessionless)}
    if ns.path is not None:
        options["path"] = ns.path
    if ns.json_response:
        options["json_response"] = True
    if ns.max_sessions is not None:
        options["max_sessions"] = ns.max_sessions
    if ns.allowed_host:
        options["allowed_hosts"] = list(ns.allowed_host)
    if ns.allowed_origin:
        options["allowed_origins"] = list(ns.allowed_origin)
    app = proxy.http_app(**options_from_env(options))
    host = ns.host or "127.0.0.1"
    where = (f"Streamable HTTP proxy of {describe(proxy.target)}", ns.path or "/mcp")
    port = 8000 if ns.port is None else ns.port  # 0: any free port, as `mcpkit run` takes it
    level = ns.log_level or "warning"
    run(lambda: serve_app(app, host=host, port=port, log_level=level, announce=where))


def main(command: str, argv: list[str]) -> int:
    """``mcpkit proxy TARGET [--transport stdio|http|sse] [--host H] [--port N] ...``."""
    import sys

    try:
        ns = _parser(command).parse_args(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2
    if ns.stateless:
        print(
            f"mcpkit {command}: --stateless is deprecated, use --sessionless (the same "
            'setting; "stateless" names the 2026-07-28 era only)',
            file=sys.stderr,
        )
        ns.sessionless = True
    http_only = [
        flag
        for flag, given in (
            ("--path", ns.path is not None),
            ("--sessionless", ns.sessionless),
            ("--allowed-host", bool(ns.allowed_host)),
            ("--allowed-origin", bool(ns.allowed_origin)),
            ("--share-child", ns.share_child),
            ("--json-response", ns.json_response),
            ("--max-sessions", ns.max_sessions is not None),
        )
        if given
    ]
    if http_only and ns.transport != "http":
        print(f"mcpkit {command}: {', '.join(http_only)} apply to -t http only", file=sys.stderr)
        return 2
    try:
        proxy = _proxy_of(ns)
    except (TypeError, ValueError) as e:
        print(f"mcpkit {command}: {e}", file=sys.stderr)
        return 2
    if ns.log_level is not None:
        from ._server._cli import configure_logging

        configure_logging(ns.log_level)
    if ns.transport == "http":
        from ._app._serve import allow_list_problem

        lists = {"allowed_hosts": ns.allowed_host, "allowed_origins": ns.allowed_origin}
        problem = allow_list_problem({k: v for k, v in lists.items() if v})
        if problem is not None:
            print(f"mcpkit {command}: {problem}", file=sys.stderr)
            return 2
    try:
        if ns.transport == "stdio":
            from ._transports._loop import run
            from ._transports._stdio import stdio_server

            async def serve_stdio() -> None:
                async with stdio_server() as transport:
                    await proxy.serve(transport)

            run(serve_stdio)
        elif ns.transport == "http":
            _serve_http(proxy, ns)
        else:
            from ._app import run as run_http

            given = (("host", ns.host), ("port", ns.port), ("log_level", ns.log_level))
            options = {k: v for k, v in given if v is not None}
            run_http(proxy, ns.transport, **options)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # one line, never a traceback
        cause: BaseException = e
        while isinstance(getattr(cause, "exceptions", None), tuple) and cause.exceptions:  # type: ignore[attr-defined]
            cause = cause.exceptions[0]  # type: ignore[attr-defined]  # an ExceptionGroup
        print(f"mcpkit {command}: {cause}", file=sys.stderr)
        return 1
    return 0
