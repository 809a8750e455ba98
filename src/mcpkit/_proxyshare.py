"""One upstream connection (one child process, for a command) shared by every client of a
proxy: ``Proxy(target, share_child=True)``, ``mcpkit proxy ... --share-child``.

The clients' requests go out on the one upstream connection (its own request ids, so two
clients' ids never meet). What the upstream server sends back is routed:

* its requests (sampling, elicitation, roots) go to the one client that can be meant: the
  owner of the task they name, else the one client with requests in flight (on that
  request's stream when it has just one), else the only client connected. Over stdio a
  server's request names no request of ours, so with several clients busy at once none
  can be told apart: it is refused with -32603 rather than shown to a client it may not be
  meant for;
* ``resources/updated`` goes to the clients subscribed to the resource; subscriptions are
  counted per resource (subscribed upstream by the first client, unsubscribed when the
  last one unsubscribes or leaves);
* log messages go to the one busy client, else to every client; each client gets only the
  levels it asked for, upstream is set to the most verbose level any client asked for;
* task status and URL elicitation completion go to the client that owns them; list
  changes go to every client.

A child that dies is started again (at most ``max_restarts`` times in ``restart_window``
seconds); the requests it was serving fail with an error saying so. It ends once no client
has been connected for ``linger`` seconds.
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ._exceptions import ConnectionClosed, InvalidParams, MCPError, ProtocolError
from ._session._base import RequestContext
from ._session._client import ClientSession
from ._session._server import ServerSession
from ._transports._base import Transport
from .types._appconst import APP_MIME_TYPE, APPS_EXTENSION, callable_by
from .types._levels import LOG_LEVELS

logger = logging.getLogger("mcpkit.proxy")

#: Requests a client may send, forwarded as they are (the upstream server answers what it
#: does not serve; the proxy declares only what upstream declared).
CLIENT_REQUESTS = (
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
)
#: Requests the upstream server may send to the client.
SERVER_REQUESTS = ("sampling/createMessage", "elicitation/create", "roots/list")
SERVER_NOTIFICATIONS = (
    "notifications/message",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/tasks/status",
    "notifications/elicitation/complete",
)
TOOLS_CHANGED = "notifications/tools/list_changed"
CLIENT_NOTIFICATIONS = ("notifications/roots/list_changed", "notifications/tasks/status")
#: What the proxy declares upstream: all a client can do (a request the proxy's own client
#: cannot answer is refused by that client's session, with the reason), MCP Apps included:
#: an apps server then lists its app-only tools, which ``_proxy`` keeps from the clients
#: that are not hosts (the upstream connection opens before a client says what it is).
UPSTREAM_CAPABILITIES: dict[str, Any] = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
    "extensions": {APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}},
}
#: Pages of upstream's tools/list read at most to know its app-only tools.
MAX_LIST_PAGES = 100
#: Deaths of the shared child within ``RESTART_WINDOW`` seconds past which it is not started
#: again until the oldest falls out of the window: a server that crashes at once must not
#: be forked in a loop.
MAX_RESTARTS = 5
RESTART_WINDOW = 60.0
#: Bound on one notification to one client: a client that reads nothing must not hold up
#: what the shared upstream tells the others.
NOTIFY_TIMEOUT = 5.0
RELATED_TASK = "io.modelcontextprotocol/related-task"

OpenUpstream = Callable[[AsyncExitStack[bool | None]], Awaitable[Transport]]


def without_progress_token(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The client's params, minus its progress token (upstream gets one of ours)."""
    if params is None:
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict) or "progressToken" not in meta:
        return dict(params)
    rest = {k: v for k, v in meta.items() if k != "progressToken"}
    out = {k: v for k, v in params.items() if k != "_meta"}
    if rest:
        out["_meta"] = rest
    return out


class SharedUpstream:
    """The one upstream connection of a proxy serving all its clients (see the module)."""

    def __init__(
        self,
        open_upstream: OpenUpstream,
        *,
        what: str,
        name: str,
        init_timeout: float,
        request_timeout: float,
        linger: float | None,
        max_restarts: int = MAX_RESTARTS,
        restart_window: float = RESTART_WINDOW,
    ) -> None:
        self._open_upstream = open_upstream
        self.what = what
        self.name = name
        self.init_timeout = init_timeout
        self.request_timeout = request_timeout
        #: Seconds the child outlives its last client (None: as long as it is hosted).
        self.linger = linger
        self.max_restarts = max_restarts
        self.restart_window = restart_window
        self.links: set[SharedLink] = set()
        #: The upstream session, once initialized (None while starting or down).
        self.client: ClientSession | None = None
        self.init: dict[str, Any] = {}
        #: Times the child started (the first start included).
        self.starts = 0
        self._tg: TaskGroup | None = None
        self._running = False
        self._run_scope: anyio.CancelScope | None = None
        self._run_done = anyio.Event()
        self._starting: anyio.Event | None = None
        self._failure = "the upstream server is not running"
        self._deaths: deque[float] = deque()
        self._changed = anyio.Event()
        #: uri -> the clients subscribed to it (subscribed upstream while not empty).
        self.subscriptions: dict[str, set[SharedLink]] = {}
        self._subscribing = anyio.Lock()
        #: The level set upstream (None: never set).
        self.level: str | None = None
        #: taskId / elicitationId -> the client that owns it.
        self.owners: dict[str, SharedLink] = {}
        self.app_only = AppOnlyTools()

    @contextlib.asynccontextmanager
    async def hosted(self) -> AsyncIterator[None]:
        """Host the shared child (it runs in a task of this context, which ends it)."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield
            finally:
                self._tg = None
                tg.cancel_scope.cancel()

    @property
    def is_hosted(self) -> bool:
        """True inside :meth:`hosted`."""
        return self._tg is not None

    # ------------------------------------------------------------------ the child

    def _changes(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def join(self, link: SharedLink) -> None:
        """A client starts using the shared upstream."""
        self.links.add(link)
        self._changes()

    async def connect(self) -> ClientSession:
        """The upstream session, the child started (or restarted) first if need be."""
        if self.client is not None:
            return self.client
        if not self._running:
            if self._tg is None:
                raise ConnectionClosed(
                    "a proxy sharing one upstream must be served by Proxy.http_app() or "
                    "Proxy.serve() (they host the shared connection)"
                )
            if self._spent():
                raise ConnectionClosed(
                    f"the upstream server {self.what} ended {len(self._deaths)} times in "
                    f"{self.restart_window:g} s; it is not started again for now"
                )
            self._running = True
            self._starting = anyio.Event()
            self._tg.start_soon(self._run)
        starting = self._starting
        if starting is not None:
            await starting.wait()  # bounded: the start is bounded by init_timeout
        if self.client is None:
            raise ConnectionClosed(self._failure)
        return self.client

    def _spent(self) -> bool:
        """True when the child died ``max_restarts`` times within the window."""
        now = anyio.current_time()
        while self._deaths and self._deaths[0] < now - self.restart_window:
            self._deaths.popleft()
        return len(self._deaths) >= self.max_restarts

    async def stop(self) -> None:
        """End the child, if one runs, and wait until it has (an ASGI server ends the
        lifespan's task soon after the lifespan's end is announced)."""
        if self._run_scope is not None:
            self._run_scope.cancel()
            await self._run_done.wait()

    async def _run(self) -> None:
        self._run_done = anyio.Event()
        try:
            with anyio.CancelScope() as self._run_scope:
                while await self._serve_once() == "died" and self._starting is not None:
                    logger.warning("proxy: the shared upstream %s ended; started again", self.what)
        finally:
            self._run_scope = None
            self._run_done.set()
            self._running = False
            if self._starting is not None:
                self._starting.set()
                self._starting = None

    async def _serve_once(self) -> str:
        """Start the child, serve until it dies ("died") or is unused ("stopped");
        "failed" when it did not start."""
        starting = self._starting
        assert starting is not None
        self.starts += 1
        async with AsyncExitStack() as stack:
            try:
                client = await self._start(stack)
            except (ProtocolError, ConnectionClosed, TimeoutError, OSError) as e:
                self._failure = f"the upstream server {self.what} did not start: {e}"
                self._deaths.append(anyio.current_time())
                return "failed"
            finally:
                starting.set()
                self._starting = None
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._stop_when_unused, tg)
                    await client.engine.wait_closed()
                    tg.cancel_scope.cancel()
            finally:
                self.client = None
            if not client.engine.closed:
                return "stopped"
            self._failure = f"the upstream server {self.what} ended"
            self._deaths.append(anyio.current_time())
            if self.links and not self._spent():
                # Set before the dead child is reaped: a request arriving meanwhile waits
                # for the new one instead of failing.
                self._starting = anyio.Event()
            return "died"

    async def _start(self, stack: AsyncExitStack[bool | None]) -> ClientSession:
        transport = await self._open_upstream(stack)
        client = ClientSession(
            transport,
            client_info={"name": self.name, "version": "0"},
            capabilities=UPSTREAM_CAPABILITIES,
            handlers={m: self.ask_client for m in SERVER_REQUESTS},
            notification_handlers={m: self._tell(m) for m in SERVER_NOTIFICATIONS},
        )
        await stack.enter_async_context(client)
        self.init = await client.initialize(timeout=self.init_timeout)
        # A restarted child knows nothing of what the clients asked of the last one.
        self.level = None
        for uri in list(self.subscriptions):
            with contextlib.suppress(MCPError):
                await client.send_request(
                    "resources/subscribe", {"uri": uri}, timeout=self.request_timeout
                )
        self.client = client
        await self._apply_level()
        return client

    async def _stop_when_unused(self, tg: TaskGroup) -> None:
        while True:
            while self.links:
                await self._changed.wait()
            if self.linger is None:
                await self._changed.wait()
                continue
            with anyio.move_on_after(self.linger):
                await self._changed.wait()
            if not self.links:
                tg.cancel_scope.cancel()
                return

    async def leave(self, link: SharedLink) -> None:
        """A client is gone: its subscriptions and log level are given up."""
        self.links.discard(link)
        self._changes()
        for key in [k for k, owner in self.owners.items() if owner is link]:
            del self.owners[key]
        with anyio.move_on_after(NOTIFY_TIMEOUT):
            for uri in list(link.subscriptions):
                with contextlib.suppress(MCPError):
                    await self.unsubscribe(link, uri)
            link.level = None
            with contextlib.suppress(MCPError):
                await self._apply_level()

    # ------------------------------------------------------------------ clients' state

    async def set_level(self, link: SharedLink, params: Mapping[str, Any] | None) -> Any:
        """``logging/setLevel`` of one client: kept for it, upstream gets the most verbose."""
        level = (params or {}).get("level")
        if level not in LOG_LEVELS:
            raise InvalidParams(message=f"unknown log level {level!r}")
        await self.connect()
        link.level = level
        await self._apply_level()
        return {}

    async def _apply_level(self) -> None:
        asked = [LOG_LEVELS.index(x.level) for x in self.links if x.level is not None]
        wanted = LOG_LEVELS[min(asked)] if asked else None
        client = self.client
        if wanted is None or wanted == self.level or client is None:
            return
        await client.send_request(
            "logging/setLevel", {"level": wanted}, timeout=self.request_timeout
        )
        self.level = wanted

    async def subscribe(self, link: SharedLink, uri: str) -> Any:
        """One client's subscription: upstream subscribes for the first one only."""
        async with self._subscribing:
            holders = self.subscriptions.get(uri)
            if not holders:
                client = await self.connect()
                await client.send_request(
                    "resources/subscribe", {"uri": uri}, timeout=self.request_timeout
                )
                holders = self.subscriptions[uri] = set()
            holders.add(link)
            link.subscriptions.add(uri)
        return {}

    async def unsubscribe(self, link: SharedLink, uri: str) -> Any:
        """One client's unsubscription: upstream unsubscribes when the last one leaves."""
        async with self._subscribing:
            link.subscriptions.discard(uri)
            holders = self.subscriptions.get(uri)
            if holders is None or link not in holders:
                return {}
            holders.discard(link)
            if not holders:
                del self.subscriptions[uri]
                if self.client is not None:
                    await self.client.send_request(
                        "resources/unsubscribe", {"uri": uri}, timeout=self.request_timeout
                    )
        return {}

    # ------------------------------------------------------------------ upstream -> clients

    def _busy(self) -> SharedLink | None:
        """The one client the upstream's message can be about, or None."""
        busy = [x for x in self.links if x.in_flight]
        if len(busy) == 1:
            return busy[0]
        if not busy and len(self.links) == 1:
            return next(iter(self.links))
        return None

    def _owner(self, params: Mapping[str, Any] | None) -> SharedLink | None:
        meta = (params or {}).get("_meta")
        task = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
        if isinstance(task, dict) and isinstance(task.get("taskId"), str):
            return self.owners.get(task["taskId"])
        return None

    async def ask_client(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        """The upstream server's request, asked of the one client it can be meant for."""
        method = rc.request.method
        link = self._owner(params) or self._busy()
        if link is None or link.downstream is None:
            raise ProtocolError(
                -32603,
                f"{method}: this server is shared by {len(self.links)} clients of the proxy "
                "and the request names none of their requests; refused",
            )
        if method == "elicitation/create" and isinstance((params or {}).get("elicitationId"), str):
            self.owners[(params or {})["elicitationId"]] = link
        return await link.ask(method, params, self.request_timeout)

    def _tell(self, method: str) -> Callable[[dict[str, Any] | None], Awaitable[None]]:
        async def tell(params: dict[str, Any] | None) -> None:
            if method == TOOLS_CHANGED:
                self.app_only.changed()
            await self._send_all(method, params, self._audience(method, params))

        return tell

    def _audience(self, method: str, params: Mapping[str, Any] | None) -> list[SharedLink]:
        p = params or {}
        if method == "notifications/resources/updated":
            return list(self.subscriptions.get(str(p.get("uri")), ()))
        if method == "notifications/tasks/status":
            owner = self.owners.get(str(p.get("taskId")))
            return [owner] if owner is not None else []
        if method == "notifications/elicitation/complete":
            owner = self.owners.get(str(p.get("elicitationId")))
            return [owner] if owner is not None else []
        if method == "notifications/message":
            level = p.get("level")
            rank = LOG_LEVELS.index(level) if level in LOG_LEVELS else len(LOG_LEVELS)
            busy = self._busy()
            return [
                x
                for x in ([busy] if busy is not None else self.links)
                if x.level is None or rank >= LOG_LEVELS.index(x.level)
            ]
        return list(self.links)

    async def _send_all(
        self, method: str, params: dict[str, Any] | None, links: list[SharedLink]
    ) -> None:
        async def send(link: SharedLink) -> None:
            session = link.downstream
            if session is None or session.negotiated is None:
                return
            related = next(iter(link.in_flight.values())) if len(link.in_flight) == 1 else None
            with anyio.move_on_after(NOTIFY_TIMEOUT), contextlib.suppress(MCPError):
                if related is not None and method == "notifications/message":
                    await related.notify(method, params)  # over HTTP: on the call's stream
                else:
                    await session.notify(method, params)

        async with anyio.create_task_group() as tg:
            for link in links:
                tg.start_soon(send, link)


class AppOnlyTools:
    """The names of an upstream's app-only tools (``visibility: ["app"]``), which the proxy
    refuses to clients that are not hosts: read from its whole tools/list once per upstream
    session, and again after it says its tools changed (not on every tools/call)."""

    def __init__(self) -> None:
        self._changes = 0
        #: (the upstream session, ``_changes`` when its list was asked, the names)
        self._known: tuple[ClientSession, int, frozenset[str]] | None = None

    def changed(self) -> None:
        """Upstream said its tools changed: the names are asked again when next needed."""
        self._changes += 1

    async def names(self, upstream: ClientSession, timeout: float | None) -> frozenset[str]:
        """The app-only tools of ``upstream``, its list asked only if not known yet."""
        known, changes = self._known, self._changes
        if known is not None and known[0] is upstream and known[1] == changes:
            return known[2]
        names: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await upstream.send_request(
                "tools/list", {"cursor": cursor} if cursor else None, timeout=timeout
            )
            for tool in page.get("tools") or ():
                if isinstance(tool, dict) and not callable_by(tool.get("_meta"), "model"):
                    names.add(str(tool.get("name")))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        # Kept only if upstream's tools did not change while its list was read.
        self._known = (upstream, changes, frozenset(names))
        return self._known[2]


class LinkBase:
    """What a proxy's link to one client is, however its upstream is held: its transport,
    its requests being forwarded, and the end of its connection once idle."""

    def __init__(self, transport: Transport, idle: float | None) -> None:
        self.transport = transport
        self.idle_timeout = idle
        #: When the last forwarded request ended (or the connection opened).
        self.last_active = 0.0
        self.downstream: ServerSession | None = None
        #: The downstream requests being forwarded (to tie server requests to one).
        self.in_flight: dict[Any, RequestContext] = {}

    def waiting(self) -> bool:
        """Whether the client waits for something (then it is not idle)."""
        return bool(self.in_flight)

    async def ask(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> Any:
        """An upstream server's request (sampling, elicitation, roots) asked of this client:
        as part of its one request in flight when there is one (what the client's SDK ties
        it to), else on its connection. A failure that is not the client's answer says why."""
        downstream = self.downstream
        assert downstream is not None
        related = next(iter(self.in_flight.values())) if len(self.in_flight) == 1 else None
        try:
            if related is not None:
                return await related.send_request(method, params, timeout=timeout)
            return await downstream.send_request(method, params, timeout=timeout)
        except ProtocolError:
            raise
        except Exception as e:  # the client cannot answer (no capability, gone): say why
            raise ProtocolError(
                -32603, f"the proxy's client could not answer {method}: {e}"
            ) from None

    @contextlib.asynccontextmanager
    async def idle_watch(self) -> AsyncIterator[None]:
        """While in it, the connection ends once idle for :attr:`idle_timeout` (if set)."""
        async with anyio.create_task_group() as tg:
            if self.idle_timeout is not None:
                tg.start_soon(self._end_when_idle, self.idle_timeout)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    async def _end_when_idle(self, timeout: float) -> None:
        """End the client's connection once it has gone ``timeout`` seconds without a
        request in flight or anything else it waits for."""
        self.last_active = anyio.current_time()
        while True:
            left = self.last_active + timeout - anyio.current_time()
            if self.waiting():
                left = timeout
            if left <= 0:
                logger.info("proxy: a client idle for %g s; its connection ends", timeout)
                await self.transport.aclose()
                return
            await anyio.sleep(left)

    async def relay(
        self,
        rc: RequestContext,
        params: dict[str, Any] | None,
        client: ClientSession,
        timeout: float | None,
    ) -> Any:
        """Send the client's request on ``client``, its progress reported back as its own."""
        key = rc.request.id
        self.in_flight[key] = rc

        async def progress(value: float, total: float | None, message: str | None) -> None:
            await rc.report_progress(value, total, message)

        try:
            return await client.send_request(
                rc.request.method,
                without_progress_token(params),
                timeout=timeout,
                on_progress=progress if rc.request.progress_token is not None else None,
                reset_timeout_on_progress=True,
            )
        finally:
            self.in_flight.pop(key, None)
            self.last_active = anyio.current_time()


class SharedLink(LinkBase):
    """One client of a proxy sharing its upstream: what it asked, and its requests in flight."""

    def __init__(self, shared: SharedUpstream, transport: Transport, idle: float | None) -> None:
        super().__init__(transport, idle)
        self.shared = shared
        self.subscriptions: set[str] = set()
        #: The level this client asked for (None: never asked; it gets every level).
        self.level: str | None = None

    def waiting(self) -> bool:
        """A client holding subscriptions waits for their updates: not idle."""
        return bool(self.in_flight or self.subscriptions)

    @contextlib.asynccontextmanager
    async def running(self, session: ServerSession) -> AsyncIterator[None]:
        """Join the shared upstream, adopt its identity, serve; leave when the client does."""
        shared = self.shared
        shared.join(self)
        try:
            await shared.connect()
            session.update_spec(
                server_info=dict(shared.init.get("serverInfo") or session.server_info),
                instructions=shared.init.get("instructions"),
                capabilities=dict(shared.init.get("capabilities") or {}),
            )
            async with self.idle_watch():
                yield
        finally:
            with anyio.CancelScope(shield=True):
                await shared.leave(self)

    async def forward(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        """A client's request: kept here (subscriptions, log level) or sent upstream."""
        method = rc.request.method
        shared = self.shared
        try:
            if method == "logging/setLevel":
                return await shared.set_level(self, params)
            if method in ("resources/subscribe", "resources/unsubscribe"):
                uri = (params or {}).get("uri")
                if not isinstance(uri, str):
                    raise InvalidParams(message=f"{method}: uri must be a string")
                if method == "resources/subscribe":
                    return await shared.subscribe(self, uri)
                return await shared.unsubscribe(self, uri)
            return await self._send(rc, params, await shared.connect())
        except ConnectionClosed as e:
            raise ProtocolError(
                -32603,
                f"{method}: the upstream server {shared.what} is gone ({e}); it is started "
                "again for the next request",
            ) from None

    async def _send(
        self, rc: RequestContext, params: dict[str, Any] | None, client: ClientSession
    ) -> Any:
        result = await self.relay(rc, params, client, self.shared.request_timeout)
        task = result.get("task") if isinstance(result, dict) else None
        if isinstance(task, dict) and isinstance(task.get("taskId"), str):
            self.shared.owners[task["taskId"]] = self  # its status goes to this client only
        return result

    def notify_upstream(self, method: str) -> Callable[[dict[str, Any] | None], Awaitable[None]]:
        """A client's notification (roots changed, task status), sent upstream."""

        async def forward(params: dict[str, Any] | None) -> None:
            client = self.shared.client
            if client is not None:
                with contextlib.suppress(ConnectionClosed):
                    await client.notify(method, params)

        return forward
