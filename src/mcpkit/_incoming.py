"""A request from the peer as its handler sees it, and the JSON-RPC response made of what
the handler gave: shared by the engine (:mod:`mcpkit._jsonrpc`) and by the transports that
serve a request without one (a 2026-07-28 HTTP request goes to the kernel directly).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from ._exceptions import INTERNAL_ERROR, UNAVAILABLE, BackendUnavailable, ProtocolError

if TYPE_CHECKING:  # annotations only: this module sits below both (docs/architecture.md)
    from ._backend import HandlerTasks
    from ._transports._base import RequestId

# The engine's logger: a handler's failure is the engine's to report, wherever it ran.
logger = logging.getLogger("mcpkit.jsonrpc")


def error_response(rid: RequestId | None, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


class RequestEngine(Protocol):
    """What a request needs of the engine that received it (``JSONRPCEngine``): named
    here so this module does not import the engine back."""

    name: str
    _tasks: HandlerTasks[Any]

    async def notify(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request_id: RequestId | None = None,
    ) -> None: ...

    @property
    def request(self) -> Callable[..., Awaitable[Any]]:
        """``JSONRPCEngine.request``: its keyword options pass through
        :meth:`IncomingRequest.request`."""
        ...


class IncomingRequest:
    """A request from the peer, as seen by the handler that serves it.

    ``cancelled`` turns true when the peer sent ``notifications/cancelled`` for it; the
    handler is cancelled at the same time and no response will be sent.
    """

    __slots__ = (
        "_engine",
        "_handle",
        "cancelled",
        "done",
        "id",
        "last_progress",
        "method",
        "params",
        "state",
    )

    def __init__(
        self,
        engine: RequestEngine | None,
        id: RequestId,
        method: str,
        params: dict[str, Any] | None,
    ) -> None:
        self._engine = engine
        self.id = id
        self.method = method
        self.params = params
        #: Names the handler in the engine's HandlerTasks (set when the request is dispatched).
        self._handle: Any = None
        self.cancelled = False
        #: True once the handler returned (or was cancelled): nothing more may be sent for it.
        self.done = False
        #: The last progress value reported for this request (progress must increase).
        self.last_progress: float | None = None
        #: Free slot for the layer above (the negotiated context of this request, ...).
        self.state: Any = None

    def _cancel(self) -> None:
        self.cancelled = True
        if self._engine is not None:
            self._engine._tasks.cancel(self._handle)

    @property
    def engine(self) -> RequestEngine:
        """The engine (connection) this request came in on (a request a transport served
        without one, a 2026-07-28 HTTP request, has none: RuntimeError)."""
        if self._engine is None:
            raise RuntimeError(f"request {self.id!r} was not received by an engine")
        return self._engine

    @property
    def meta(self) -> dict[str, Any] | None:
        """The request's ``params._meta``, if any."""
        p = self.params
        if p is None:
            return None
        m = p.get("_meta")
        return m if isinstance(m, dict) else None

    @property
    def progress_token(self) -> str | int | None:
        """The ``progressToken`` the peer asked progress to be reported under."""
        m = self.meta
        if m is None:
            return None
        t = m.get("progressToken")
        return t if isinstance(t, (str, int)) and not isinstance(t, bool) else None

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification that belongs to this request (routed with it by HTTP)."""
        await self.engine.notify(method, params, related_request_id=self.id)

    async def request(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        """Send a request to the peer on behalf of this one (e.g. sampling during a tool call)."""
        return await self.engine.request(method, params, related_request_id=self.id, **kw)


def result_response(req: IncomingRequest, result: Any) -> dict[str, Any]:
    """The JSON-RPC response to ``req`` whose handler gave ``result``."""
    return {"jsonrpc": "2.0", "id": req.id, "result": result}


def failure_response(req: IncomingRequest, exc: Exception, name: str) -> dict[str, Any]:
    """The JSON-RPC response to ``req`` whose handler raised ``exc`` (what serves a request,
    the engine or an HTTP front end, awaits the handler itself: one coroutine less per
    request than a wrapper awaiting it): a
    :class:`ProtocolError` as its error, :class:`BackendUnavailable` as -32603
    :data:`UNAVAILABLE`, any other exception as -32603 (logged with its traceback, never
    shown to the peer). Called while ``exc`` is being handled."""
    if isinstance(exc, ProtocolError):
        return {"jsonrpc": "2.0", "id": req.id, "error": exc.to_error()}
    if isinstance(exc, BackendUnavailable):
        logger.warning("%s: %r not served: %s", name, req.method, exc)
        return error_response(req.id, INTERNAL_ERROR, UNAVAILABLE)
    logger.exception("%s: handler for %r failed", name, req.method)
    return error_response(req.id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}")
