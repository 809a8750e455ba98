"""What the client and server roles share: the negotiated context and the dispatch table."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .._exceptions import CapabilityError
from .._incoming import IncomingRequest
from .._transports._base import LOCAL, TransportInfo
from ..types._metakeys import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from ..types._revisions import STATELESS_PROTOCOL_VERSIONS

logger = logging.getLogger("mcpkit.session")

#: Keys of ``_meta`` through which revision 2026-07-28 carries, per request, what
#: ``initialize`` used to negotiate once per session (named once, in ``types._metakeys``).
META_PROTOCOL_VERSION = PROTOCOL_VERSION_META_KEY
META_CLIENT_CAPABILITIES = CLIENT_CAPABILITIES_META_KEY
META_CLIENT_INFO = CLIENT_INFO_META_KEY


@dataclass
class Negotiated:
    """What both sides agreed on: the protocol revision and the peer's declarations.

    Stateful revisions fix it once per session at ``initialize``; the stateless revision
    (2026-07-28) sends it with every request, so the engine resolves it per request and
    handlers only ever look here.
    """

    protocol_version: str
    peer_capabilities: dict[str, Any] = field(default_factory=dict)
    peer_info: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None
    #: The log level the request asked for in ``_meta`` (stateless revisions only; a
    #: handshake session keeps its level from ``logging/setLevel`` in the layer above).
    log_level: str | None = None
    #: The capabilities we declared to this peer when its ``initialize`` settled them (a
    #: handshake session keeps them for its life); None: what the server declares now.
    declared: dict[str, Any] | None = None
    #: The methods the kernel lets this peer call, with the spec they were computed from
    #: (the kernel's cache; not part of what was negotiated).
    served: tuple[Any, frozenset[str]] | None = field(default=None, repr=False, compare=False)

    @property
    def stateless(self) -> bool:
        """True for a context read from one request's ``_meta`` (no handshake, no session)."""
        return self.protocol_version in STATELESS_PROTOCOL_VERSIONS


RequestHandlerFn = Callable[["RequestContext", "dict[str, Any] | None"], Awaitable[Any]]
NotificationHandlerFn = Callable[["dict[str, Any] | None"], Awaitable[None]]
#: ``sink(method, params)``: where the notifications of a request served without a session
#: go (its response stream). Never blocks, and may be called from any thread (a sync tool's
#: worker thread, a bridged log record): a slow or gone client drops what it cannot take.
SinkFn = Callable[[str, "dict[str, Any] | None"], None]


class RequestContext:
    """A request being served, with the context negotiated for it.

    ``session`` is the role object (:class:`ServerSession` or :class:`ClientSession`) that
    received the request, or None for a 2026-07-28 request an HTTP app served on its own
    (no session exists then; its notifications go to ``sink``, its response stream).
    ``transport`` says what the transport knows of the request: the caller's verified
    identity and the HTTP request, where there are any.
    """

    __slots__ = ("_transport", "negotiated", "request", "session", "sink", "state")

    def __init__(
        self,
        session: Any,
        request: IncomingRequest,
        negotiated: Negotiated | None,
        *,
        transport: TransportInfo | None = None,
        sink: SinkFn | None = None,
    ) -> None:
        self.session = session
        self.request = request
        self.negotiated = negotiated
        self._transport = transport
        self.sink = sink
        #: What the layer above keeps for this one request (``mcpkit.Server``: its input
        #: rounds under a stateless revision).
        self.state: Any = None

    @property
    def transport(self) -> TransportInfo:
        """What the transport knows of this request (:class:`~mcpkit.lowlevel.TransportInfo`):
        the verified caller, the HTTP request, the session id."""
        info = self._transport
        if info is None:
            session = self.session
            info = LOCAL if session is None else session.peer.transport_info(self.request.id)
            self._transport = info
        return info

    @property
    def request_id(self) -> str | int:
        """The JSON-RPC id of the request."""
        return self.request.id

    @property
    def method(self) -> str:
        """The JSON-RPC method of the request."""
        return self.request.method

    @property
    def protocol_version(self) -> str | None:
        """The protocol revision this request is served under."""
        return self.negotiated.protocol_version if self.negotiated else None

    @property
    def meta(self) -> dict[str, Any] | None:
        """The request's ``params._meta``."""
        return self.request.meta

    @property
    def progress_token(self) -> str | int | None:
        """The progress token of the request, if the peer asked for progress."""
        return self.request.progress_token

    @property
    def cancelled(self) -> bool:
        """True once the peer cancelled this request."""
        return self.request.cancelled

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification tied to this request (HTTP routes it on the request's stream)."""
        if self.sink is not None:
            self.sink(method, params)
            return
        await self.session.notify(method, params, related_request_id=self.request.id)

    async def send_request(
        self, method: str, params: dict[str, Any] | None = None, **kw: Any
    ) -> Any:
        """Send a request to the peer on behalf of this one (sampling, elicitation, roots).

        A stateless revision has no server-to-client requests: the server answers with an
        ``InputRequiredResult`` instead (``mcpkit.Context`` does that for its helpers).
        """
        if self.negotiated is not None and self.negotiated.stateless:
            raise CapabilityError(
                f"cannot send {method!r}: protocol revision {self.negotiated.protocol_version} "
                "has no server-to-client requests (answer with an InputRequiredResult)"
            )
        if self.session is None:
            raise CapabilityError(f"cannot send {method!r}: this request has no session")
        return await self.session.send_request(
            method, params, related_request_id=self.request.id, **kw
        )

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` if the peer gave a progress token; else do nothing.

        The spec requires progress to increase and to stop once the request is answered:
        a value that does not increase, or a report after completion, is dropped (and
        logged) rather than sent.
        """
        req = self.request
        token = req.progress_token
        if token is None:
            return
        if req.done:
            logger.warning(
                "progress %s for request %r dropped: it already completed", progress, req.id
            )
            return
        if req.last_progress is not None and progress <= req.last_progress:
            logger.warning(
                "progress %s for request %r dropped: it must increase (last was %s)",
                progress,
                req.id,
                req.last_progress,
            )
            return
        req.last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)
