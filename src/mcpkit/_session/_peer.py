"""One end of an MCP connection, whichever role it plays.

A :class:`Peer` owns what both roles share: the JSON-RPC engine, the negotiated context
(revision, the other side's capabilities and info), adaptation of what we send to that
revision, the capability check on what we ask of the other side, and ``ping``. The roles
(:class:`~mcpkit.lowlevel.ClientSession`, :class:`~mcpkit.lowlevel.ServerSession`) compose
one and keep only the handshake and the checks on what they receive, so sending is written
once and the two sides cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import anyio

from .._exceptions import CapabilityError
from .._incoming import IncomingRequest
from .._jsonrpc import JSONRPCEngine
from .._transports._base import LOCAL, RequestId, Transport, TransportInfo
from ..types._revisions import adapt_params
from ._base import Negotiated, NotificationHandlerFn
from ._capabilities import has_capability
from ._keepalive import keepalive

#: Requests answered even when every handler slot is busy (ping.mdx: answer promptly).
PROMPT_METHODS = frozenset({"ping"})


class Peer:
    """The engine and the negotiated context of one connection, seen from our side.

    Args:
        transport: the connection.
        other: what the other side is called in messages (``"client"`` or ``"server"``).
        needs: method -> the capability path the *other* side must have declared before we
            may send it (e.g. ``sampling/createMessage`` -> ``("sampling",)``).
        on_request: serves the other side's requests (the role's dispatcher).
        max_concurrency: handler slots for incoming requests.
        uncancellable: incoming methods the other side may not cancel.
        name: the engine's name in logs.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        other: str,
        needs: Mapping[str, tuple[str, ...]],
        on_request: Callable[[IncomingRequest], Awaitable[Any]],
        max_concurrency: int,
        uncancellable: frozenset[str] = frozenset(),
        name: str,
    ) -> None:
        self.other = other
        #: method -> capability path the other side must have declared (the client's
        #: session swaps in the stateless revision's table after ``server/discover``).
        self.needs: Mapping[str, tuple[str, ...]] = needs
        self.negotiated: Negotiated | None = None
        self._notification_handlers: dict[str, NotificationHandlerFn] = {}
        self._on_initialized: Callable[[], None] | None = None
        # The transport's optional hook describing each request it delivered (the one
        # place it is looked up); a transport without it delivers local requests.
        self._describe: Callable[[RequestId], TransportInfo] | None = getattr(
            transport, "info_for", None
        )
        self.engine = JSONRPCEngine(
            transport,
            on_request=on_request,
            on_notification=self._on_notification,
            allow_batch=self._batch_allowed,
            prompt=PROMPT_METHODS,
            uncancellable=uncancellable,
            max_concurrency=max_concurrency,
            name=name,
        )

    # ------------------------------------------------------------------ context

    @property
    def protocol_version(self) -> str | None:
        """The negotiated revision (None before the handshake)."""
        return self.negotiated.protocol_version if self.negotiated else None

    @property
    def peer_capabilities(self) -> dict[str, Any]:
        """What the other side declared."""
        return self.negotiated.peer_capabilities if self.negotiated else {}

    @property
    def peer_info(self) -> dict[str, Any]:
        """The other side's ``clientInfo`` / ``serverInfo``."""
        return self.negotiated.peer_info if self.negotiated else {}

    def _batch_allowed(self) -> bool:
        # JSON-RPC batches exist in 2025-03-26 only.
        return self.negotiated is not None and self.negotiated.protocol_version == "2025-03-26"

    def transport_info(self, request_id: RequestId) -> TransportInfo:
        """What the transport knows of incoming request ``request_id``."""
        describe = self._describe
        return LOCAL if describe is None else describe(request_id)

    # ------------------------------------------------------------------ notifications in

    def set_notification_handler(self, method: str, handler: NotificationHandlerFn) -> None:
        """Serve notification ``method`` with ``handler(params)`` (replacing any earlier one)."""
        self._notification_handlers[method] = handler

    def set_notification_handlers(self, handlers: Mapping[str, NotificationHandlerFn]) -> None:
        """Add several notification handlers at once."""
        self._notification_handlers.update(handlers)

    def on_initialized(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` when ``notifications/initialized`` arrives (the server role's gate)."""
        self._on_initialized = fn

    async def _on_notification(self, method: str, params: dict[str, Any] | None) -> None:
        if method == "notifications/initialized" and self._on_initialized is not None:
            self._on_initialized()
            return
        handler = self._notification_handlers.get(method)
        if handler is not None:
            await handler(params)

    # ------------------------------------------------------------------ sending

    def check_capability(self, method: str) -> None:
        """Raise :class:`CapabilityError` unless the other side declared what ``method`` needs."""
        cap = self.needs.get(method)
        if cap is not None and not has_capability(self.peer_capabilities, cap):
            raise CapabilityError(
                f"the {self.other} did not declare the {'.'.join(cap)!r} capability, "
                f"so it {'does not' if self.other == 'server' else 'cannot'} serve {method!r}"
            )

    def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request_id: RequestId | None = None,
        **kw: Any,
    ) -> Coroutine[Any, Any, Any]:
        """Check the capability, fit ``params`` to the revision; await the result to send
        and wait for the answer (a :class:`CapabilityError` is raised at the call).

        Other keywords go to :meth:`JSONRPCEngine.request` (``timeout``, ``on_progress``, ...).
        """
        # Not a coroutine itself: the engine's is handed back, one frame less per request
        # on the hot path (every request of a client goes through here).
        self.check_capability(method)
        params = adapt_params(method, params, self.protocol_version)
        return self.engine.request(method, params, related_request_id=related_request_id, **kw)

    async def notify(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request_id: RequestId | None = None,
    ) -> None:
        """Send a notification, fitted to the negotiated revision."""
        params = adapt_params(method, params, self.protocol_version)
        await self.engine.notify(method, params, related_request_id=related_request_id)

    async def ping(self, timeout: float = 10.0) -> None:
        """Ping the other side; :class:`RequestTimeout` if it does not answer in time.

        Bounded twice: by the request's timeout, and by a scope a little longer, so not even
        a stuck transport can hold the caller.
        """
        with anyio.fail_after(timeout + 1):
            await self.engine.request("ping", None, timeout=timeout)

    def start_keepalive(self, interval: float | None, timeout: float) -> None:
        """Ping every ``interval`` seconds from now on (nothing when ``interval`` is None)."""
        if interval is not None:
            engine = self.engine
            engine.start_background(lambda: keepalive(engine, interval, timeout))
