"""The server end of one Streamable HTTP session, as the JSON-RPC engine sees it.

The ASGI app feeds it the messages clients POST and opens/attaches streams; the engine
calls :meth:`HTTPServerTransport.send`, which puts each outgoing message on exactly one
stream: a response and the messages related to a request on that request's stream (SSE) or
into its JSON response; anything else on the session's standalone GET stream.
"""

from __future__ import annotations

import logging
from collections import deque

import anyio
import anyio.lowlevel
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._exceptions import TransportError
from .._transports._base import Incoming, Message, RequestId, TransportInfo
from .._transports._memory import receive_now, send_now
from ._events import EventStore, InMemoryEventStore
from ._sse import encode_event

logger = logging.getLogger("mcpkit.http")

#: Events queued for one SSE connection before it counts as stalled and is dropped (the
#: client can resume from the event store); a handler never waits on a slow client.
CONNECTION_BUFFER = 4096
#: Messages for the standalone stream kept while no GET stream is connected.
STANDALONE_BACKLOG = 1000
#: Seconds a server-to-client request that only the GET stream can carry (JSON responses)
#: waits for the client to open one before it fails. A client opens its GET stream right
#: after ``initialize``, racing its first call: a short wait covers that race, while a
#: client that never opens one learns why at once instead of after the request timeout.
GET_STREAM_WAIT = 2.0

#: An item for an SSE connection: (sequence, encoded event, ends the stream).
Chunk = tuple[int, bytes, bool]


#: The info of a request the app handed over without any (a transport used on its own).
_HTTP = TransportInfo("http", "tcp")


class SessionGone(Exception):
    """The session ended while a request for it was being handled."""


class Stream:
    """One logical SSE stream: a request's (POST) or the session's standalone (GET) one.

    It outlives its connections: while detached, events only go to the event store, and a
    ``GET`` with ``Last-Event-ID`` attaches a new connection.
    """

    __slots__ = (
        "_done_event",
        "batch_ids",
        "cancelled",
        "conn",
        "conn_recv",
        "done",
        "id",
        "info",
        "json",
        "message",
        "remote",
        "request_id",
        "result",
        "seq",
        "settled",
        "uncancellable",
    )

    def __init__(self, id: str, request_id: RequestId | None, json: bool) -> None:
        self.id = id
        self.request_id = request_id
        self.json = json
        self.seq = 0
        self.conn: MemoryObjectSendStream[Chunk] | None = None
        self.conn_recv: MemoryObjectReceiveStream[Chunk] | None = None
        self.done = False
        #: Set once the POST handler has what it waits for (:attr:`done_event`): the
        #: answer, or the news that none will come (cancelled, the session closed).
        self.settled = False
        self._done_event: anyio.Event | None = None
        self.result: bytes | None = None
        self.message: Message | None = None
        self.cancelled = False
        #: The request ids of a batch answered together on this stream.
        self.batch_ids: tuple[RequestId, ...] | None = None
        #: The engine ignores cancellation of this request (initialize): keep the stream.
        self.uncancellable = False
        #: What the transport knows of this stream's request (its HTTP request, the
        #: verified caller, the session): what the code serving it reads.
        self.info: TransportInfo | None = None
        #: Where another worker follows this stream from (a shared session resumed
        #: elsewhere); the transport forwards each event there.
        self.remote: str | None = None

    @property
    def done_event(self) -> anyio.Event:
        """Set once the POST handler has what it waits for: a JSON answer's body, or an SSE
        stream's last event queued (or the stream ended). Made when first asked for: most
        answers are there before anyone waits (check :attr:`settled` first), and an event
        per request costs a backend lookup."""
        event = self._done_event
        if event is None:
            event = self._done_event = anyio.Event()
            if self.settled:
                event.set()
        return event

    def settle(self) -> None:
        """The POST handler may go on (:attr:`settled`, :attr:`done_event`)."""
        self.settled = True
        if self._done_event is not None:
            self._done_event.set()

    def attach(self) -> MemoryObjectReceiveStream[Chunk]:
        """Route this stream's live events to a new connection (the previous one ends)."""
        self.detach()
        send, recv = anyio.create_memory_object_stream[Chunk](CONNECTION_BUFFER)
        self.conn = send
        self.conn_recv = recv
        return recv

    def detach(self) -> None:
        # Only the sending side: the connection still drains what was queued, then ends
        # (and closes its receiving side itself).
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        self.conn_recv = None

    def push(self, item: Chunk) -> None:
        conn = self.conn
        if conn is None:
            return
        try:
            conn.send_nowait(item)
        except anyio.WouldBlock:
            logger.warning(
                "SSE connection of stream %s stalled; dropped (the client may resume)", self.id
            )
            self.detach()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.conn = None


class HTTPServerTransport:
    """The :class:`~mcpkit.Transport` of one Streamable HTTP session (server side).

    Args:
        key: a random, non-secret prefix of this session's stream ids.
        json_response: answer requests with one JSON body instead of an SSE stream.
        event_store: where events are kept for resumption (None: not resumable).
        sessionless: no session is kept (handshake-era HTTP without sessions), so no
            standalone stream exists; server->client requests that cannot ride a
            request's SSE stream fail at once.
    """

    def __init__(
        self,
        key: str,
        *,
        json_response: bool = False,
        event_store: EventStore | None = None,
        sessionless: bool = False,
        retry_ms: int = 1000,
        stream_prefix: str | None = None,
    ) -> None:
        self.key = key
        #: What this transport's stream ids start with (the key, and in a shared session
        #: the worker's id too, so every worker's streams of a session differ).
        self.stream_prefix = stream_prefix if stream_prefix is not None else f"{key}."
        self.json_response = json_response
        self.event_store = event_store
        # A store outside this process (Redis) costs a round trip per event: an answer's
        # event is written while it goes out. The in-process one costs nothing: written
        # first, as every other event (no task per answer on the default path).
        self._overlap_answers = event_store is not None and not isinstance(
            event_store, InMemoryEventStore
        )
        self.sessionless = sessionless
        self.retry_ms = retry_ms
        self._in_send, self._in_recv = anyio.create_memory_object_stream[Incoming](1024)
        self.requests: dict[RequestId, Stream] = {}
        self._n = 0
        self.standalone = Stream(f"{self.stream_prefix}0", None, False)
        self._backlog: deque[Message] = deque(maxlen=STANDALONE_BACKLOG)
        self.closed = False
        self.close_reason = "the HTTP session ended"
        #: The ``Mcp-Session-Id`` of this session (set by the app; None when sessionless).
        self.session_id: str | None = None
        #: For telemetry (``network.transport``).
        self.network_transport = "tcp"
        #: See :data:`GET_STREAM_WAIT` (read when the session is made).
        self.get_stream_wait = GET_STREAM_WAIT
        self._get_attached: anyio.Event | None = None

    # ------------------------------------------------------------------ engine side

    async def receive(self) -> Incoming:
        return await receive_now(self._in_recv)

    async def send(
        self, message: Message, /, *, related_request_id: RequestId | None = None
    ) -> None:
        if self.closed:
            raise anyio.ClosedResourceError
        if isinstance(message, list):  # batch answers (2025-03-26)
            first = message[0] if message else None
            rid = first.get("id") if isinstance(first, dict) and "method" not in first else None
            stream = self.requests.get(rid) if isinstance(rid, (str, int)) else None
            if stream is not None and stream.batch_ids is not None:
                await self._deliver(stream, message, final=True)
                return
            for m in message:
                await self.send(m, related_request_id=related_request_id)
            return
        if "method" not in message:
            rid = message.get("id")
            stream = self.requests.get(rid) if isinstance(rid, (str, int)) else None
            if stream is not None:
                await self._deliver(stream, message, final=True)
            else:
                # A response with nowhere to go (its request's stream is gone). The GET
                # stream must not carry responses, so it is dropped.
                logger.debug("dropped response for %r: no open stream", rid)
            return
        stream = self.requests.get(related_request_id) if related_request_id is not None else None
        if stream is not None and not stream.json:
            await self._deliver(stream, message, final=False)
            return
        if "id" in message and not self.sessionless and self.json_response:
            await self._await_get_stream(str(message.get("method")))
        if self.sessionless:
            if "id" in message:
                raise TransportError(
                    f"cannot send {message.get('method')!r} to the client: a sessionless server "
                    "answering with JSON has no stream for server-to-client requests"
                )
            logger.debug(
                "dropped %r: no stream to carry it in sessionless mode", message.get("method")
            )
            return
        await self._deliver_standalone(message)

    async def aclose(self) -> None:
        self.close()

    async def _await_get_stream(self, method: str) -> None:
        """A request only the GET stream can carry: wait (bounded) for one to be open.

        Without it the request would sit in the backlog until the client's request timeout
        (600 s by default) while the POST that caused it hangs. A shared session's GET
        stream may be held by another worker, which only the subclass can see: it keeps
        its own routing (its ``_deliver_standalone`` differs from ours).
        """
        if self.standalone.conn is not None or (
            type(self)._deliver_standalone is not HTTPServerTransport._deliver_standalone
        ):
            return
        with anyio.move_on_after(self.get_stream_wait):
            while self.standalone.conn is None and not self.closed:
                if self._get_attached is None:
                    self._get_attached = anyio.Event()
                await self._get_attached.wait()
        if self.standalone.conn is None:
            raise TransportError(
                f"cannot send {method!r} to the client: this server answers with JSON "
                "(no stream per request) and the client has no GET stream open; open a GET "
                "stream before the call, or use SSE responses"
            )

    # ------------------------------------------------------------------ app side

    async def feed(self, message: Message) -> None:
        """Hand a POSTed message to the engine (:class:`SessionGone` if the session ended)."""
        try:
            await send_now(self._in_send, message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as e:
            raise SessionGone from e
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            params = message.get("params")
            rid = params.get("requestId") if isinstance(params, dict) else None
            stream = self.requests.get(rid) if isinstance(rid, (str, int)) else None
            if stream is not None and not stream.uncancellable:
                # No response will come (the receiver of a cancellation does not answer):
                # end the request's stream instead of leaving it open forever.
                self._forget(stream)
                stream.done = True
                stream.cancelled = True
                stream.detach()
                stream.settle()

    def _forget(self, stream: Stream) -> None:
        for rid in stream.batch_ids or (stream.request_id,):
            if rid is not None and self.requests.get(rid) is stream:
                del self.requests[rid]

    def new_batch_stream(
        self, request_ids: list[RequestId], info: TransportInfo | None = None
    ) -> Stream:
        """One stream collecting the answers of a batch (revision 2025-03-26)."""
        stream = self.new_request_stream(request_ids[0], json=True, info=info)
        stream.batch_ids = tuple(request_ids)
        for rid in request_ids[1:]:
            self.requests[rid] = stream
        return stream

    def new_request_stream(
        self, request_id: RequestId, *, json: bool, info: TransportInfo | None = None
    ) -> Stream:
        """The stream answering request ``request_id``; ``info`` is what the app knows of
        the HTTP request carrying it (completed here with the session and the stream)."""
        self._n += 1
        stream = Stream(self.stream_name(self._n, request_id), request_id, json)
        base = info if info is not None else _HTTP
        stream.info = TransportInfo("http", "tcp", base.http, base.principal, self.session_id, self)
        self.requests[request_id] = stream
        return stream

    def info_for(self, request_id: RequestId) -> TransportInfo:
        """What the transport knows of request ``request_id`` (while it is served)."""
        stream = self.requests.get(request_id)
        info = stream.info if stream is not None else None
        return info if info is not None else _HTTP

    def stream_for_id(self, stream_id: str) -> Stream | None:
        if stream_id == self.standalone.id:
            return self.standalone
        for s in self.requests.values():
            if s.id == stream_id:
                return s
        return None

    def attach_standalone(self) -> tuple[MemoryObjectReceiveStream[Chunk], list[Message]]:
        """Attach a GET connection; returns it and the backlog kept while none was open."""
        recv = self.standalone.attach()
        backlog = list(self._backlog)
        self._backlog.clear()
        if self._get_attached is not None:
            # Wakes the requests waiting for a way to the client (see _await_get_stream).
            self._get_attached.set()
            self._get_attached = None
        return recv, backlog

    async def standalone_attached(self) -> list[Message]:
        """A GET connection took the standalone stream: what waited for it elsewhere, to
        be delivered first (a shared session's backlog kept by another worker; none here)."""
        return []

    def stream_name(self, n: int, request_id: RequestId) -> str:
        """The id of the ``n``-th stream of this session, answering ``request_id``."""
        return f"{self.stream_prefix}{n}"

    async def lost_answer(self, stream_id: str) -> Message | None:
        """The answer for a client resuming ``stream_id`` when what served it is gone
        before answering (another worker of a shared session died); None: not so."""
        return None

    async def remote_stream(
        self, stream_id: str, after: int
    ) -> tuple[Stream, MemoryObjectReceiveStream[Chunk]] | None:
        """Follow ``stream_id``, a stream of this session served by another worker, from
        event ``after`` on (a shared session resumed here); None: not possible."""
        return None

    async def forward(self, stream: Stream, seq: int, message: Message) -> None:
        """Send an event of ``stream`` to the worker following it (``stream.remote``)."""

    def event_bytes(self, stream: Stream, seq: int, message: Message) -> bytes:
        eid = f"{stream.id}_{seq}" if self.event_store is not None else None
        return encode_event(orjson.dumps(message), id=eid)

    async def close_stream_connection(
        self, request_id: RequestId, retry_ms: int | None = None
    ) -> bool:
        """End the connection of a request's SSE stream without ending the stream.

        The client reconnects (after ``retry_ms``) with ``GET`` + ``Last-Event-ID`` and gets
        what was sent meanwhile. Only possible with an event store; returns whether done.
        """
        stream = self.requests.get(request_id)
        if stream is None or stream.json or self.event_store is None or stream.conn is None:
            return False
        retry = self.retry_ms if retry_ms is None else retry_ms
        stream.push((-1, b"retry: " + str(int(retry)).encode() + b"\n\n", False))
        stream.detach()
        return True

    def close(self) -> None:
        """End the session: the engine sees end-of-stream, every connection ends."""
        if self.closed:
            return
        self.closed = True
        self._in_send.close()
        # Whatever was fed but not yet read is dropped with the session.
        self._in_recv.close()
        for s in self.requests.values():
            s.detach()
            s.settle()
        self.standalone.detach()
        if self._get_attached is not None:
            self._get_attached.set()  # no GET stream will come: the waiting requests fail

    # ------------------------------------------------------------------ delivery

    async def _deliver(self, stream: Stream, message: Message, *, final: bool) -> None:
        stream.seq += 1
        seq = stream.seq
        if final:
            stream.done = True
            stream.message = message
            self._forget(stream)
        if stream.json:
            stream.result = orjson.dumps(message)
            stream.message = message
            stream.settle()
            return
        store = self.event_store
        if store is not None and final and stream.conn is not None and self._overlap_answers:
            # The answer, to a client still connected: its event is written to the store
            # while it goes out, not before (one store round trip less in every call's
            # time). The write is sent first: a client that lost the connection can only
            # ask to resume after it.
            async with anyio.create_task_group() as tg:
                tg.start_soon(store.store_event, self.key, stream.id, seq, message)
                await anyio.lowlevel.checkpoint()
                await self._send_event(stream, seq, message, final)
            return
        if store is not None:
            await store.store_event(self.key, stream.id, seq, message)
        await self._send_event(stream, seq, message, final)

    async def _send_event(self, stream: Stream, seq: int, message: Message, final: bool) -> None:
        stream.push((seq, self.event_bytes(stream, seq, message), final))
        if stream.remote is not None:
            await self.forward(stream, seq, message)
        if final:
            stream.settle()
            if stream.conn is not None:
                # The connection drains what is queued, then sees the end.
                stream.conn.close()
                stream.conn = None

    async def _deliver_standalone(self, message: Message) -> None:
        stream = self.standalone
        if stream.conn is None:
            # Nobody listens: kept (bounded) for the next GET stream.
            self._backlog.append(message)
            return
        stream.seq += 1
        seq = stream.seq
        if self.event_store is not None:
            await self.event_store.store_event(self.key, stream.id, seq, message)
        stream.push((seq, self.event_bytes(stream, seq, message), False))


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """``(stream id, sequence)`` from an id we issued, or None."""
    sid, sep, seq = event_id.rpartition("_")
    if not sep or not seq.isdigit():
        return None
    return sid, int(seq)


__all__ = ["HTTPServerTransport", "SessionGone", "Stream", "parse_event_id"]
