"""The server role: lifecycle, version negotiation and capability enforcement.

It sits on a :class:`~mcpkit._jsonrpc.JSONRPCEngine`, answers ``initialize`` and ``ping``
itself, and hands every other request to the handler registered for its method. The
high-level :class:`mcpkit.Server` fills the handler table; this layer knows no tools.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio

from .. import _telemetry
from .._exceptions import (
    CapabilityError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ProtocolError,
)
from .._jsonrpc import IncomingRequest
from .._transports._base import RequestId, Transport
from ..types._revisions import (
    NATIVE_PROTOCOL_VERSION,
    STATELESS_PROTOCOL_VERSIONS,
    SUPPORTED_PROTOCOL_VERSIONS,
    adapt_result,
    request_methods_for,
)
from ._base import (
    Negotiated,
    NotificationHandlerFn,
    RequestContext,
    RequestHandlerFn,
)
from ._capabilities import CLIENT_METHOD_CAPABILITY, SERVER_METHOD_CAPABILITY, has_capability
from ._keepalive import check_keepalive
from ._peer import Peer
from ._stateless import (
    CACHEABLE_METHODS,
    DEFAULT_CACHE_HINTS,
    capabilities_for_stateless,
    finish_result,
    read_request_meta,
    request_version,
    translate_error,
)

logger = logging.getLogger("mcpkit.server")

#: Methods only the stateless revisions have: without ``_meta`` they are refused as a
#: stateless request missing it (-32602), not as a request before ``initialize``.
_STATELESS_ONLY = frozenset({"server/discover", "subscriptions/listen"})
# Requests we may send before the client said `initialized` (lifecycle: pings only).
_PRE_INITIALIZED_SEND_OK = frozenset({"ping"})


def _not_found(method: str, version: str) -> str:
    """The -32601 message of a stateless request, saying why when the revision removed it."""
    if method in _REMOVED:
        return f"Method not found: {method} (revision {version} {_REMOVED[method]})"
    return f"Method not found: {method}"


#: Requests of the handshake revisions that the stateless ones dropped, and why.
_REMOVED = {
    "initialize": "has no handshake; the request's _meta carries what it settled",
    "ping": "removed ping",
    "logging/setLevel": "sets the log level per request, in _meta",
    "resources/subscribe": "subscribes with subscriptions/listen",
    "resources/unsubscribe": "ends a subscription by closing the subscriptions/listen stream",
}


class ServerSession:
    """One client connection, served.

    Args:
        transport: the connection.
        server_info: the ``serverInfo`` object (``name``, ``version``, ``title``, ...).
        capabilities: the server capabilities to declare.
        handlers: method -> ``async fn(ctx, params) -> result``; methods without a handler
            (or whose capability is not declared) are answered -32601.
        notification_handlers: method -> ``async fn(params)`` for client notifications.
        instructions: the ``instructions`` string of the initialize result.
        supported_versions: revisions we speak, newest first.
        keepalive_interval: ping the client this often (seconds) once it is initialized; a
            ping unanswered within ``keepalive_timeout`` closes the connection. Off by default.
        state: per-connection state of the layer above, kept as :attr:`state`.
        around_run: ``fn(session)`` -> an async context manager :meth:`run` serves inside
            (the layer above starts and stops what the connection needs).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        server_info: Mapping[str, Any],
        capabilities: Mapping[str, Any],
        handlers: Mapping[str, RequestHandlerFn],
        notification_handlers: Mapping[str, NotificationHandlerFn] | None = None,
        instructions: str | None = None,
        supported_versions: tuple[str, ...] = SUPPORTED_PROTOCOL_VERSIONS,
        max_concurrency: int = 256,
        keepalive_interval: float | None = None,
        keepalive_timeout: float = 10.0,
        state: Any = None,
        around_run: Callable[[ServerSession], AbstractAsyncContextManager[Any]] | None = None,
        stateless_capabilities: Mapping[str, Any] | None = None,
        extension_methods: frozenset[str] = frozenset(),
        handshake_extension_methods: frozenset[str] = frozenset(),
    ) -> None:
        check_keepalive(keepalive_interval, keepalive_timeout)
        #: What the layer above keeps per connection (an ``mcpkit.Server``: the client's log
        #: level, subscriptions, outbox), handed in rather than added by subclassing.
        self.state = state
        self._around_run = around_run
        self.keepalive_interval = keepalive_interval
        self.keepalive_timeout = keepalive_timeout
        self.server_info = dict(server_info)
        self.capabilities = dict(capabilities)
        self.instructions = instructions
        self.supported_versions = supported_versions
        self._handlers = dict(handlers)
        #: Revisions this session serves per request from ``_meta``, with no handshake.
        self.stateless_versions: tuple[str, ...] | frozenset[str] = tuple(
            v for v in supported_versions if v in STATELESS_PROTOCOL_VERSIONS
        )
        #: Revisions ``initialize`` may settle on, newest first.
        self.handshake_versions = tuple(
            v for v in supported_versions if v not in STATELESS_PROTOCOL_VERSIONS
        )
        #: Serve every request statelessly, ``initialize`` included (refused): the one
        #: shared session an HTTP app serves stateless requests through.
        self.stateless_only = False
        #: The caching hints cacheable stateless results get when their handler set none.
        self.cache_hints: Mapping[str, Any] = DEFAULT_CACHE_HINTS
        #: Our capabilities as the stateless revisions declare them.
        self._stateless_caps = (
            dict(stateless_capabilities)
            if stateless_capabilities is not None
            else capabilities_for_stateless(self.capabilities)
        )
        #: Methods protocol extensions add: served in any revision whose requests reach a
        #: handler for them (the extension's handler decides, per era and per client).
        self.extension_methods = extension_methods
        #: Those of them also served on sessions opened with ``initialize``.
        self.handshake_extension_methods = handshake_extension_methods
        #: Methods whose stateless results carry caching hints (the layer above adds its
        #: extensions' to the core's).
        self.cacheable_methods: frozenset[str] = CACHEABLE_METHODS
        #: Our capabilities as each older revision can express them (computed once each).
        self._caps_by_version: dict[str, dict[str, Any]] = {}
        #: True once the client sent ``notifications/initialized``.
        self.initialized = False
        self._initialized_event = anyio.Event()
        #: The engine, the negotiated context and everything we send (shared with the client role).
        self.peer = Peer(
            transport,
            other="client",
            needs=CLIENT_METHOD_CAPABILITY,
            on_request=self._on_request,
            uncancellable=frozenset({"initialize"}),
            max_concurrency=max_concurrency,
            name="server",
        )
        self.peer.set_notification_handlers(notification_handlers or {})
        self.peer.on_initialized(self._client_initialized)
        self.engine = self.peer.engine
        #: Called when the layer above changed what it keeps for this session (log level,
        #: subscriptions): a shared registry saves the session for the other workers.
        self.on_state_change: Callable[[], Awaitable[None]] | None = None

    # ------------------------------------------------------------------ properties

    @property
    def negotiated(self) -> Negotiated | None:
        """What ``initialize`` settled (None before it)."""
        return self.peer.negotiated

    @negotiated.setter
    def negotiated(self, value: Negotiated | None) -> None:
        self.peer.negotiated = value

    @property
    def protocol_version(self) -> str | None:
        """The negotiated revision (None before ``initialize``)."""
        return self.peer.protocol_version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """What the client declared at ``initialize``."""
        return self.peer.peer_capabilities

    @property
    def client_info(self) -> dict[str, Any]:
        """The client's ``clientInfo``."""
        return self.peer.peer_info

    def update_capabilities(
        self,
        capabilities: Mapping[str, Any],
        stateless_capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        """Declare ``capabilities`` from now on, to stateless requests (each reads them
        afresh; ``stateless_capabilities`` when they differ by more than core tasks) and
        to an ``initialize`` still to come.

        A session opened with ``initialize`` keeps what that declared: the client fixed its
        view of us then, so the layer above calls this only before the handshake.
        """
        self.capabilities = dict(capabilities)
        self._stateless_caps = (
            dict(stateless_capabilities)
            if stateless_capabilities is not None
            else capabilities_for_stateless(self.capabilities)
        )
        self._caps_by_version.clear()

    def set_notification_handler(self, method: str, handler: NotificationHandlerFn) -> None:
        """Serve client notification ``method`` with ``handler(params)``."""
        self.peer.set_notification_handler(method, handler)

    async def run(self) -> None:
        """Serve until the client disconnects (inside ``around_run(self)``, when given)."""
        start = time.perf_counter()
        try:
            if self._around_run is None:
                await self.engine.run()
                return
            async with self._around_run(self):
                await self.engine.run()
        finally:
            if self.negotiated is not None:  # a handshake session (stateless ones have none)
                attrs = {
                    "mcp.protocol.version": self.negotiated.protocol_version,
                    "network.transport": getattr(self.engine.transport, "network_transport", None),
                }
                _telemetry.record_session("server", time.perf_counter() - start, attrs)

    async def wait_initialized(self) -> None:
        """Wait for ``notifications/initialized`` (bound it with a timeout of your own)."""
        await self._initialized_event.wait()

    # ------------------------------------------------------------------ incoming

    async def _on_request(self, req: IncomingRequest) -> Any:
        if _telemetry.active():  # an application configured OpenTelemetry
            return await _telemetry.operation(
                "server",
                req.method,
                req.params,
                lambda: self._handle(req),
                extra=self._span_attributes(req),
                parent_meta=req.meta,
            )
        return await self._handle(req)

    def _span_attributes(self, req: IncomingRequest) -> dict[str, Any]:
        transport = self.engine.transport
        negotiated = self.negotiated
        return {
            "jsonrpc.request.id": str(req.id),
            "mcp.session.id": getattr(transport, "session_id", None),
            "mcp.protocol.version": negotiated.protocol_version
            if negotiated is not None
            else (req.params or {}).get("protocolVersion")
            if req.method == "initialize"
            else request_version(req.meta),
            "network.transport": getattr(transport, "network_transport", None),
        }

    async def _handle(self, req: IncomingRequest) -> Any:
        negotiated = self.negotiated
        if negotiated is None:
            return await self._before_handshake(req)
        method = req.method
        if method == "ping":
            return {}
        if method == "initialize":
            return self._initialize(req.params)
        return await self._serve(req, negotiated)

    async def _before_handshake(self, req: IncomingRequest) -> Any:
        # No initialize yet: a request naming a revision in its _meta is a stateless one
        # (versioning.mdx: "a request carrying modern per-request _meta is served
        # statelessly"); otherwise only the handshake (and ping) may come first.
        method = req.method
        named = request_version(req.meta)
        if (
            self.stateless_only
            or method in _STATELESS_ONLY
            # A handshake revision named in _meta does not bypass initialize.
            or (
                named is not None
                and (named in self.stateless_versions or named not in self.handshake_versions)
            )
        ):
            return await self._serve_stateless(req)
        if method == "ping":
            return {}
        if method == "initialize":
            return self._initialize(req.params)
        raise InvalidRequest(
            message=f"Invalid Request: {method!r} before initialization; send 'initialize' "
            "first (or name a stateless revision in the request's _meta)"
        )

    async def _serve_stateless(self, req: IncomingRequest) -> Any:
        negotiated = read_request_meta(
            req.meta,
            stateless_versions=self.stateless_versions,
            supported_versions=self.supported_versions,
        )
        method = req.method
        if method == "server/discover":
            result: Any = self._discover()
        else:
            handler = self._handlers.get(method)
            cap = SERVER_METHOD_CAPABILITY.get(method)
            if handler is None or (
                # The core's gates first: extension methods are asked about only on a miss.
                (
                    method not in request_methods_for(negotiated.protocol_version)
                    or (cap is not None and not has_capability(self._stateless_caps, cap))
                )
                and method not in self.extension_methods
            ):
                raise MethodNotFound(message=_not_found(method, negotiated.protocol_version))
            try:
                result = await handler(RequestContext(self, req, negotiated), req.params)
            except ProtocolError as e:
                raise translate_error(e) from None
            if negotiated.protocol_version not in STATELESS_PROTOCOL_VERSIONS:
                result = adapt_result(method, result, negotiated.protocol_version)
        return finish_result(
            method, result, self.server_info, self.cache_hints, self.cacheable_methods
        )

    def _discover(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(self.supported_versions),
            "capabilities": self._stateless_caps,
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    async def _serve(self, req: IncomingRequest, negotiated: Negotiated) -> Any:
        method = req.method
        version = negotiated.protocol_version
        latest = version == NATIVE_PROTOCOL_VERSION
        handler = self._handlers.get(method)
        cap = SERVER_METHOD_CAPABILITY.get(method)
        capabilities = self.capabilities if latest else self._capabilities_in(version)
        if (
            handler is None
            or method in _STATELESS_ONLY
            or (
                (
                    (cap is not None and not has_capability(capabilities, cap))
                    or (not latest and method not in request_methods_for(version))
                )
                and method not in self.handshake_extension_methods
            )
        ):
            # Gated by the negotiated revision too: tasks/* do not exist before 2025-11-25.
            raise MethodNotFound(message=f"Method not found: {method}")
        if (
            not latest
            and req.params is not None
            and "task" in req.params
            and not has_capability(capabilities, ("tasks",))
        ):
            # A revision without tasks: the call is processed normally, as the spec says of
            # a server that does not offer them.
            req.params = {k: v for k, v in req.params.items() if k != "task"}
        result = await handler(RequestContext(self, req, negotiated), req.params)
        return result if latest else adapt_result(method, result, version)

    def _capabilities_in(self, version: str) -> dict[str, Any]:
        """Our capabilities as revision ``version`` knows them (what its initialize said)."""
        caps = self._caps_by_version.get(version)
        if caps is None:
            init = {"protocolVersion": version, "capabilities": self.capabilities}
            caps = self._caps_by_version[version] = adapt_result("initialize", init, version)[
                "capabilities"
            ]
        return caps

    def _initialize(self, params: dict[str, Any] | None) -> dict[str, Any]:
        if self.negotiated is not None:
            raise InvalidRequest(message="Invalid Request: the session is already initialized")
        if params is None:
            raise InvalidParams(message="Invalid params: initialize needs params")
        requested = params.get("protocolVersion")
        caps = params.get("capabilities")
        info = params.get("clientInfo")
        if not isinstance(requested, str):
            raise InvalidParams(
                message="Invalid params: protocolVersion must be a string",
                data={"supported": list(self.supported_versions), "requested": requested},
            )
        if not isinstance(caps, dict):
            raise InvalidParams(message="Invalid params: capabilities must be an object")
        if not isinstance(info, dict) or not isinstance(info.get("name"), str):
            raise InvalidParams(message="Invalid params: clientInfo must be an object with a name")
        if not self.handshake_versions:
            raise InvalidRequest(
                message="Invalid Request: this server has no initialize; it speaks "
                f"{', '.join(self.supported_versions)} with version and capabilities in each "
                "request's _meta"
            )
        version = requested if requested in self.handshake_versions else self.handshake_versions[0]
        self.negotiated = Negotiated(version, caps, info, self.instructions)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return dict(adapt_result("initialize", result, version))

    async def state_changed(self) -> None:
        """The layer above changed its per-session state: tell whoever shares the session."""
        if self.on_state_change is not None:
            await self.on_state_change()

    def mark_initialized(self) -> None:
        """Take the client as initialized (it said so to another worker of a shared
        session); nothing happens before ``initialize`` or a second time."""
        self._client_initialized()

    def _client_initialized(self) -> None:
        # Only after a successful initialize, and only once.
        if self.negotiated is not None and not self.initialized:
            self.initialized = True
            self._initialized_event.set()
            self.peer.start_keepalive(self.keepalive_interval, self.keepalive_timeout)

    # ------------------------------------------------------------------ outgoing

    def check_client_capability(self, method: str) -> None:
        """Raise :class:`CapabilityError` unless the client can serve ``method``."""
        self.peer.check_capability(method)

    async def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request_id: RequestId | None = None,
        **kw: Any,
    ) -> Any:
        """Send a request to the client (sampling, elicitation, roots, ping).

        Raises :class:`CapabilityError` at once when the client did not declare what the
        method needs. Other keyword arguments go to :meth:`JSONRPCEngine.request`.
        """
        if (
            method not in _PRE_INITIALIZED_SEND_OK
            and not self.initialized
            and related_request_id is None
        ):
            raise CapabilityError(
                f"cannot send {method!r} before the client sent notifications/initialized"
            )
        return await self.peer.send_request(
            method, params, related_request_id=related_request_id, **kw
        )

    async def notify(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request_id: RequestId | None = None,
    ) -> None:
        """Send a notification to the client (fitted to the negotiated revision)."""
        await self.peer.notify(method, params, related_request_id=related_request_id)

    async def ping(self, timeout: float = 10.0) -> None:
        """Ping the client; raises :class:`RequestTimeout` if it does not answer in time."""
        await self.peer.ping(timeout)
