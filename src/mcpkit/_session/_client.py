"""The client role: ``initialize``, version checks, capability checks on what we call."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from .._exceptions import CapabilityError, MethodNotFound, ProtocolError, VersionError
from .._jsonrpc import IncomingRequest
from .._transports._base import RequestId, Transport
from ..types._revisions import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    adapt_params,
    adapt_result,
)
from ._base import Negotiated, NotificationHandlerFn, RequestContext, RequestHandlerFn
from ._capabilities import CLIENT_METHOD_CAPABILITY, SERVER_METHOD_CAPABILITY, has_capability
from ._keepalive import check_keepalive
from ._peer import Peer

logger = logging.getLogger("mcpkit.client")

#: Bound on the ``initialize`` exchange unless the caller sets another.
DEFAULT_INIT_TIMEOUT = 30.0


class ClientSession:
    """One connection to a server, from the client's side.

    Run :meth:`run` in a task group (or ``async with``), then :meth:`initialize`.

    Args:
        transport: the connection.
        client_info: our ``clientInfo`` (``name``, ``version``, ...).
        capabilities: the client capabilities to declare (declare exactly what ``handlers`` serve).
        handlers: method -> ``async fn(ctx, params) -> result`` for server->client requests.
        notification_handlers: method -> ``async fn(params)`` for server notifications.
        protocol_version: the revision to ask for (default: the latest we speak).
        keepalive_interval: ping the server this often (seconds) once initialized; a ping
            unanswered within ``keepalive_timeout`` closes the connection. Off by default.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        client_info: Mapping[str, Any],
        capabilities: Mapping[str, Any] | None = None,
        handlers: Mapping[str, RequestHandlerFn] | None = None,
        notification_handlers: Mapping[str, NotificationHandlerFn] | None = None,
        protocol_version: str = LATEST_HANDSHAKE_VERSION,
        supported_versions: tuple[str, ...] = HANDSHAKE_PROTOCOL_VERSIONS,
        max_concurrency: int = 64,
        keepalive_interval: float | None = None,
        keepalive_timeout: float = 10.0,
    ) -> None:
        check_keepalive(keepalive_interval, keepalive_timeout)
        self.keepalive_interval = keepalive_interval
        self.keepalive_timeout = keepalive_timeout
        if protocol_version not in supported_versions:
            raise VersionError(
                f"unsupported protocol version {protocol_version!r}; we speak {supported_versions}"
            )
        self.client_info = dict(client_info)
        self.capabilities = dict(capabilities or {})
        self.requested_version = protocol_version
        self.supported_versions = supported_versions
        self._handlers = dict(handlers or {})
        #: The engine, the negotiated context and everything we send (shared with the server role).
        self.peer = Peer(
            transport,
            other="server",
            needs=SERVER_METHOD_CAPABILITY,
            on_request=self._on_request,
            max_concurrency=max_concurrency,
            name="client",
        )
        self.peer.set_notification_handlers(notification_handlers or {})
        self.engine = self.peer.engine
        #: The whole ``initialize`` result.
        self.initialize_result: dict[str, Any] | None = None

    async def __aenter__(self) -> ClientSession:
        await self.engine.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        return await self.engine.__aexit__(*exc)

    @property
    def negotiated(self) -> Negotiated | None:
        """What the handshake settled (None before :meth:`initialize`)."""
        return self.peer.negotiated

    @negotiated.setter
    def negotiated(self, value: Negotiated | None) -> None:
        self.peer.negotiated = value

    @property
    def protocol_version(self) -> str | None:
        """The negotiated revision (None before :meth:`initialize`)."""
        return self.peer.protocol_version

    @property
    def server_capabilities(self) -> dict[str, Any]:
        """What the server declared."""
        return self.peer.peer_capabilities

    @property
    def server_info(self) -> dict[str, Any]:
        """The server's ``serverInfo``."""
        return self.peer.peer_info

    def set_notification_handler(self, method: str, handler: NotificationHandlerFn) -> None:
        """Serve server notification ``method`` with ``handler(params)``."""
        self.peer.set_notification_handler(method, handler)

    async def initialize(self, *, timeout: float | None = DEFAULT_INIT_TIMEOUT) -> dict[str, Any]:
        """Run the handshake: ``initialize``, check the answer, send ``initialized``.

        Raises :class:`VersionError` (after which the caller should disconnect, as the spec
        asks) when the server answers with a revision we do not speak.
        """
        params: dict[str, Any] | None = {
            "protocolVersion": self.requested_version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        params = adapt_params("initialize", params, self.requested_version)
        result = await self.engine.request("initialize", params, timeout=timeout, cancellable=False)
        if not isinstance(result, dict):
            raise ProtocolError(message=f"malformed initialize result: {result!r}")
        version = result.get("protocolVersion")
        if version not in self.supported_versions:
            raise VersionError(
                f"the server answered protocol version {version!r}, which this client does not speak "
                f"(supported: {', '.join(self.supported_versions)})"
            )
        caps = result.get("capabilities")
        info = result.get("serverInfo")
        if not isinstance(caps, dict) or not isinstance(info, dict):
            raise ProtocolError(
                message="malformed initialize result: capabilities and serverInfo must be objects"
            )
        instructions = result.get("instructions")
        self.peer.negotiated = Negotiated(
            version, caps, info, instructions if isinstance(instructions, str) else None
        )
        self.initialize_result = result
        await self.engine.notify("notifications/initialized")
        self.peer.start_keepalive(self.keepalive_interval, self.keepalive_timeout)
        return result

    # ------------------------------------------------------------------ incoming

    async def _on_request(self, req: IncomingRequest) -> Any:
        method = req.method
        if method == "ping":
            return {}
        handler = self._handlers.get(method)
        cap = CLIENT_METHOD_CAPABILITY.get(method)
        if handler is None or (cap is not None and not has_capability(self.capabilities, cap)):
            raise MethodNotFound(message=f"Method not found: {method}")
        result = await handler(RequestContext(self, req, self.negotiated), req.params)
        return adapt_result(method, result, self.protocol_version)

    # ------------------------------------------------------------------ outgoing

    def check_server_capability(self, method: str) -> None:
        """Raise :class:`CapabilityError` unless the server declared what ``method`` needs."""
        self.peer.check_capability(method)

    async def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request_id: RequestId | None = None,
        **kw: Any,
    ) -> Any:
        """Send a request to the server; see :meth:`JSONRPCEngine.request` for keywords."""
        if self.peer.negotiated is None and method != "ping":
            raise CapabilityError(f"cannot send {method!r} before initialize completed")
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
        """Send a notification to the server (fitted to the negotiated revision)."""
        await self.peer.notify(method, params, related_request_id=related_request_id)

    async def ping(self, timeout: float = 10.0) -> None:
        """Ping the server; raises :class:`RequestTimeout` if it does not answer in time."""
        await self.peer.ping(timeout)
