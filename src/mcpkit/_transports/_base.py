"""The transport interface.

A transport moves JSON-RPC messages. It knows nothing of MCP methods, ids or sessions;
the engine above it does. Incoming items may be raw bytes (the engine parses them, so it
can answer malformed JSON with -32700) or already-decoded JSON values (a transport that
had to parse to route, such as Streamable HTTP).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

#: A JSON-RPC message (or batch) as a decoded JSON value.
Message = dict[str, Any] | list[Any]
RequestId = str | int


class InvalidIncoming(NamedTuple):
    """Something arrived that cannot be a message (too large, broken framing).

    The engine answers it with this JSON-RPC error (``id`` null) and goes on serving.
    """

    code: int
    message: str


#: What a transport hands to the engine: raw bytes of one message, a decoded one, or
#: the report of input that could not be framed.
Incoming = bytes | dict[str, Any] | list[Any] | InvalidIncoming

#: The key under which a transport marks, in the ``data`` of the error it gives a request
#: whose answer it lost on the way (a response stream the server closed first), that the
#: request may be sent again, as a new request.
ANSWER_LOST = "streamBroken"


class _LostMark(str):
    """The mark's value: a ``str`` (it serializes as one, should the error travel on), of a
    type no JSON parser makes, so a peer cannot forge it to make us send a request again."""

    __slots__ = ()


#: The value of :data:`ANSWER_LOST` only a transport can set.
LOST = _LostMark("the response stream ended before the answer")


def answer_lost(error: Exception) -> bool:
    """True for the error of a request whose answer the transport lost (:data:`LOST`)."""
    data = getattr(error, "data", None)
    return isinstance(data, dict) and isinstance(data.get(ANSWER_LOST), _LostMark)


@runtime_checkable
class Transport(Protocol):
    """Moves messages between two peers.

    ``receive`` raises :class:`anyio.EndOfStream` once the peer has gone away and
    everything it sent has been delivered. ``send`` raises
    :class:`mcpkit.TransportClosed` (or :class:`anyio.ClosedResourceError`/
    :class:`anyio.BrokenResourceError`) when the message can no longer be delivered.

    ``related_request_id`` tells transports that route messages per request (Streamable
    HTTP) which incoming request a message belongs to; others ignore it.
    """

    async def send(
        self, message: Message, /, *, related_request_id: RequestId | None = None
    ) -> None: ...

    async def receive(self) -> Incoming: ...

    async def aclose(self) -> None: ...


class PushTransport(Protocol):
    """A transport that can hand what it reads to the engine itself, from the task that read
    it, instead of queueing it for :meth:`Transport.receive` (the engine's reader task).

    An HTTP client reads each answer in the task of its request: pushing the answer from
    there saves two event-loop iterations per call (the queue's hand-off and the reader's
    step). The engine calls :meth:`push_to` once, before it starts reading; messages the
    transport does not push still come through ``receive``.
    """

    def push_to(self, deliver: Callable[[Incoming], Awaitable[None]]) -> None: ...


def pushes(transport: object) -> bool:
    """Whether ``transport``'s own class pushes (:class:`PushTransport`). Asked of the class:
    a wrapper forwarding attributes to a pushing transport does not push, so that its own
    ``receive`` still sees every message (a recorder, a logger)."""
    return callable(getattr(type(transport), "push_to", None))


@dataclass(frozen=True, slots=True)
class TransportInfo:
    """What the transport knows of one incoming request, handed to the code serving it.

    Every request served carries one (``RequestContext.transport``): the kernel, the
    middleware, the authorization checks and telemetry read the caller's identity and the
    HTTP request from here, never from the transport object or a context variable, so a
    new transport that fills this in cannot bypass authorization by forgetting a hook.

    Attributes:
        kind: ``"stdio"``, ``"memory"``, ``"http"`` (Streamable HTTP) or ``"sse"`` (the
            legacy HTTP+SSE transport); a custom transport names itself.
        network: the OpenTelemetry ``network.transport`` (``"pipe"``, ``"tcp"``, None).
        http: the HTTP request that carried it (an ``HTTPRequestInfo``), or None.
        principal: the verified caller (a ``Principal``) when the transport checks access
            tokens, else None.
        session_id: the transport's session id (``Mcp-Session-Id``), if any.
        stream: the transport's handle on the request's response stream, for the few
            helpers that act on it (``close_sse_stream``); None where there is none.
    """

    kind: str = "memory"
    network: str | None = None
    http: Any = None
    principal: Any = None
    session_id: str | None = None
    stream: Any = None

    @property
    def remote(self) -> bool:
        """True over HTTP, where authorization applies (stdio and memory peers are local)."""
        return self.kind in ("http", "sse")


#: The info of a request from a local peer (stdio, memory) that says nothing more.
LOCAL = TransportInfo()
