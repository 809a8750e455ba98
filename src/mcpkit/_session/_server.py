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
from .._exceptions import CapabilityError, InvalidParams, InvalidRequest
from .._incoming import IncomingRequest
from .._transports._base import RequestId, Transport
from ..types._revisions import SUPPORTED_PROTOCOL_VERSIONS, adapt_result
from ._base import (
    Negotiated,
    NotificationHandlerFn,
    RequestContext,
    RequestHandlerFn,
)
from ._capabilities import CLIENT_METHOD_CAPABILITY
from ._keepalive import check_keepalive
from ._kernel import Kernel, ServerSpec
from ._peer import Peer
from ._stateless import is_stateless

logger = logging.getLogger("mcpkit.server")

# Requests we may send before the client said `initialized` (lifecycle: pings only).
_PRE_INITIALIZED_SEND_OK = frozenset({"ping"})


class ServerSession:
    """One client connection, served.

    The session keeps the connection's lifecycle (``initialize``, ``ping``, what may come
    before the handshake) and its engine; every other request goes to the
    :class:`~mcpkit.lowlevel.Kernel`, which serves both eras.

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
        kernel: serve with this kernel (shared by every session of a server, its spec
            replaced when the server's offer changes) instead of one built from the
            arguments above. With ``supported_versions`` other than its spec's, the session
            serves a copy of that spec as it is now, and later changes pass it by.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        server_info: Mapping[str, Any] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        handlers: Mapping[str, RequestHandlerFn] | None = None,
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
        kernel: Kernel | None = None,
    ) -> None:
        check_keepalive(keepalive_interval, keepalive_timeout)
        #: What the layer above keeps per connection (an ``mcpkit.Server``: the client's log
        #: level, subscriptions, outbox), handed in rather than added by subclassing.
        self.state = state
        self._around_run = around_run
        self.keepalive_interval = keepalive_interval
        self.keepalive_timeout = keepalive_timeout
        if kernel is None:
            kernel = Kernel(
                ServerSpec(
                    server_info=dict(server_info or {"name": "mcpkit-server", "version": "0"}),
                    capabilities=dict(capabilities or {}),
                    handlers=handlers or {},
                    instructions=instructions,
                    supported_versions=supported_versions,
                    stateless_capabilities=None
                    if stateless_capabilities is None
                    else dict(stateless_capabilities),
                    extension_methods=extension_methods,
                    handshake_extension_methods=handshake_extension_methods,
                )
            )
        elif supported_versions != kernel.spec.supported_versions:
            kernel = Kernel(kernel.spec.replace(supported_versions=supported_versions))
        #: What serves every request past the lifecycle (its ``spec``: what is served).
        self.kernel = kernel
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
        self.engine.serves_at_once = kernel.at_once
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

    @property
    def server_info(self) -> dict[str, Any]:
        """The ``serverInfo`` served."""
        return self.kernel.spec.server_info

    @property
    def instructions(self) -> str | None:
        """The ``instructions`` served."""
        return self.kernel.spec.instructions

    @property
    def supported_versions(self) -> tuple[str, ...]:
        """The revisions served, newest first."""
        return self.kernel.spec.supported_versions

    @property
    def stateless_versions(self) -> frozenset[str]:
        """The revisions served per request from ``_meta``, with no handshake."""
        return self.kernel.spec.stateless_versions

    @stateless_versions.setter
    def stateless_versions(self, versions: frozenset[str]) -> None:
        self.update_spec(stateless_versions=frozenset(versions))

    @property
    def capabilities(self) -> dict[str, Any]:
        """What this session declares: fixed at ``initialize``, else what the server
        declares now."""
        n = self.negotiated
        if n is not None and n.declared is not None:
            return n.declared
        return self.kernel.spec.capabilities

    def update_capabilities(
        self,
        capabilities: Mapping[str, Any],
        stateless_capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        """Declare ``capabilities`` from now on (to stateless requests, and to an
        ``initialize`` still to come), on this session only.

        A session opened with ``initialize`` keeps what that declared: the client fixed its
        view of us then.
        """
        if stateless_capabilities is None:
            self.update_spec(capabilities=dict(capabilities))
        else:
            self.update_spec(
                capabilities=dict(capabilities), stateless_capabilities=dict(stateless_capabilities)
            )

    def update_spec(self, **changes: Any) -> None:
        """Serve this session with a copy of its spec changed by ``changes``
        (``server_info``, ``instructions``, ...; see :class:`~mcpkit.lowlevel.ServerSpec`)."""
        self.kernel = Kernel(self.kernel.spec.replace(**changes))

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
                    "network.transport": self.peer.transport_info("").network,
                }
                _telemetry.record_session("server", time.perf_counter() - start, attrs)

    async def wait_initialized(self) -> None:
        """Wait for ``notifications/initialized`` (bound it with a timeout of your own)."""
        await self._initialized_event.wait()

    # ------------------------------------------------------------------ incoming

    def _on_request(self, req: IncomingRequest) -> Awaitable[Any]:
        # What serves the request, to await: the kernel's coroutine itself on the path of
        # every call, with no coroutine of ours around it (each is one more object kept
        # while the request waits). What this raises, the engine answers as it answers
        # what the awaiting raises.
        negotiated = self.negotiated
        if negotiated is None:
            return self._before_handshake(req)
        method = req.method
        if method == "ping":
            return _pong()
        if method == "initialize":
            raise InvalidRequest(message="Invalid Request: the session is already initialized")
        return self.kernel.serve(RequestContext(self, req, negotiated))

    async def _before_handshake(self, req: IncomingRequest) -> Any:
        # No initialize yet: the era is decided per request (is_stateless).
        method = req.method
        kernel = self.kernel
        spec = kernel.spec
        if is_stateless(
            method,
            req.meta,
            handshake_versions=spec.handshake_versions,
            stateless_versions=spec.stateless_versions,
        ):
            negotiated = kernel.negotiate(req.meta)
            return await kernel.serve(RequestContext(self, req, negotiated))
        if method == "ping":
            return {}
        if method == "initialize":
            return self._initialize(req.params)
        raise InvalidRequest(
            message=f"Invalid Request: {method!r} before initialization; send 'initialize' "
            "first (or name a stateless revision in the request's _meta)"
        )

    def _initialize(self, params: dict[str, Any] | None) -> dict[str, Any]:
        spec = self.kernel.spec
        if params is None:
            raise InvalidParams(message="Invalid params: initialize needs params")
        requested = params.get("protocolVersion")
        caps = params.get("capabilities")
        info = params.get("clientInfo")
        if not isinstance(requested, str):
            raise InvalidParams(
                message="Invalid params: protocolVersion must be a string",
                data={"supported": list(spec.supported_versions), "requested": requested},
            )
        if not isinstance(caps, dict):
            raise InvalidParams(message="Invalid params: capabilities must be an object")
        if not isinstance(info, dict) or not isinstance(info.get("name"), str):
            raise InvalidParams(message="Invalid params: clientInfo must be an object with a name")
        versions = spec.handshake_versions
        if not versions:
            raise InvalidRequest(
                message="Invalid Request: this server has no initialize; it speaks "
                f"{', '.join(spec.supported_versions)} with version and capabilities in each "
                "request's _meta"
            )
        version = requested if requested in versions else versions[0]
        self.negotiated = Negotiated(
            version, caps, info, spec.instructions, declared=spec.capabilities_in(version)
        )
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": dict(spec.capabilities),
            "serverInfo": spec.server_info,
        }
        if spec.instructions is not None:
            result["instructions"] = spec.instructions
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


async def _pong() -> dict[str, Any]:
    """The answer to ``ping``."""
    return {}
