"""The transport of a shared session on one worker: what cannot be served here is routed.

A session of a Redis-backed app may have a replica on every worker. Each replica serves
the requests POSTed to its worker, on those requests' streams, as any session does. What
belongs elsewhere goes over the bus:

- a server-to-client request goes out with an id naming this worker (``<worker>~<n>``), so
  the client's answer, POSTed to any worker, is sent back here;
- a cancellation of a request this replica does not serve goes to every worker (the one
  serving it cancels it);
- a message for the standalone GET stream goes to the worker holding that stream, or waits
  in the session's backlog in Redis for the next one;
- a stream of this replica resumed on another worker is followed from there (events are
  forwarded as they are sent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import orjson
from anyio.streams.memory import MemoryObjectReceiveStream

from .._exceptions import INTERNAL_ERROR
from .._http._events import EventStore
from .._http._transport import Chunk, HTTPServerTransport, Stream
from .._transports._base import Message, RequestId

if TYPE_CHECKING:
    from .._app._registry import SessionEntry
    from ._bus import Bus


class Router(Protocol):
    """What a shared transport needs of its session registry (``_sessions``): where to
    send what cannot be served on this worker."""

    @property
    def backend(self) -> Bus: ...

    async def to_holder(self, sid: str, message: Message) -> None: ...

    async def route_in(self, worker: str, sid: str, message: Message) -> None: ...

    async def initialized(self, transport: SharedTransport) -> None: ...

    async def take_backlog(self, sid: str) -> list[Message]: ...

    async def follow(
        self, transport: SharedTransport, stream_id: str, after: int
    ) -> tuple[Stream, MemoryObjectReceiveStream[Chunk]] | None: ...


#: The longest request id (hex of its JSON) a stream id carries: ids are at most 64
#: characters after the session's key (``_app/_streams``), the worker's and count's first.
_MAX_RID_HEX = 40


class SharedTransport(HTTPServerTransport):
    """One worker's end of a shared Streamable HTTP session (see the module's docs)."""

    def __init__(
        self,
        registry: Router,
        session_id: str,
        key: str,
        *,
        json_response: bool,
        event_store: EventStore | None,
        retry_ms: int,
    ) -> None:
        worker = registry.backend.worker_id
        super().__init__(
            key,
            json_response=json_response,
            event_store=event_store,
            retry_ms=retry_ms,
            stream_prefix=f"{key}.{worker}x",
        )
        self.registry = registry
        self.session_id = session_id
        self.worker = worker
        self._mine = worker + "~"
        #: The registry's entry of this replica (set once it is made).
        self.entry: SessionEntry | None = None

    # ------------------------------------------------------------------ engine side

    async def send(
        self, message: Message, /, *, related_request_id: RequestId | None = None
    ) -> None:
        if isinstance(message, dict) and "method" in message and "id" in message:
            # Our own request: its answer must find its way back to this worker.
            message = {**message, "id": f"{self._mine}{message['id']}"}
        await super().send(message, related_request_id=related_request_id)

    async def _deliver_standalone(self, message: Message) -> None:
        if self.standalone.conn is not None:
            await super()._deliver_standalone(message)
            return
        assert self.session_id is not None
        await self.registry.to_holder(self.session_id, message)

    async def deliver_here(self, message: Message) -> bool:
        """Put ``message`` on this worker's GET connection; False when there is none."""
        if self.standalone.conn is None:
            return False
        await super()._deliver_standalone(message)
        return True

    async def forward(self, stream: Stream, seq: int, message: Message) -> None:
        remote = stream.remote
        if remote is None:
            return
        event = {"t": "ev", "stream": stream.id, "seq": seq, "m": message}
        if not await self.registry.backend.send_to(remote, event):
            stream.remote = None  # the follower is gone

    # ------------------------------------------------------------------ app side

    async def feed(self, message: Message) -> None:
        if isinstance(message, dict):
            method = message.get("method")
            if method is None:
                rid = message.get("id")
                if isinstance(rid, str) and "~" in rid:
                    worker, _, n = rid.partition("~")
                    if worker != self.worker:
                        await self.registry.route_in(worker, self._sid(), message)
                        return
                    message = {**message, "id": int(n) if n.isdigit() else n}
            elif method == "notifications/cancelled":
                params = message.get("params")
                rid = params.get("requestId") if isinstance(params, dict) else None
                if rid not in self.requests:
                    await self.registry.backend.broadcast(
                        {"t": "cx", "sid": self._sid(), "m": message}
                    )
                    return
            elif method == "notifications/initialized":
                await super().feed(message)
                await self.registry.initialized(self)
                return
        await super().feed(message)

    async def feed_here(self, message: Message) -> None:
        """Feed a message routed here by another worker (no further routing)."""
        if isinstance(message, dict) and "method" not in message:
            rid = message.get("id")
            if isinstance(rid, str) and rid.startswith(self._mine):
                n = rid[len(self._mine) :]
                message = {**message, "id": int(n) if n.isdigit() else n}
        await super().feed(message)

    def _sid(self) -> str:
        assert self.session_id is not None
        return self.session_id

    def stream_for_id(self, stream_id: str) -> Stream | None:
        found = super().stream_for_id(stream_id)
        if found is None and stream_id.startswith(f"{self.key}.") and stream_id.endswith("x0"):
            # Another worker's standalone stream of this session: this worker takes it over.
            return self.standalone
        return found

    async def standalone_attached(self) -> list[Message]:
        return await self.registry.take_backlog(self._sid())

    async def remote_stream(
        self, stream_id: str, after: int
    ) -> tuple[Stream, MemoryObjectReceiveStream[Chunk]] | None:
        return await self.registry.follow(self, stream_id, after)

    def stream_name(self, n: int, request_id: RequestId) -> str:
        # The request's id rides in the stream's (hex of its JSON, when short): should this
        # worker die before answering, another can still answer the client who resumes.
        rid = orjson.dumps(request_id).hex()
        tail = f"r{rid}" if len(rid) <= _MAX_RID_HEX else ""
        return f"{self.stream_prefix}{n}{tail}"

    async def lost_answer(self, stream_id: str) -> Message | None:
        owner = self.owner_of(stream_id)
        _, sep, rid = stream_id[len(self.key) + 1 :].partition("r")
        if owner is None or owner == self.worker or not sep or not rid:
            return None
        try:
            request_id = orjson.loads(bytes.fromhex(rid))
        except ValueError:
            return None
        if not isinstance(request_id, (str, int)) or await self.registry.backend.alive(owner):
            return None
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {
                "code": INTERNAL_ERROR,
                "message": "the worker serving this request stopped before answering; it "
                "may or may not have taken effect (retry it if it is safe to)",
            },
        }

    def owner_of(self, stream_id: str) -> str | None:
        """The worker serving ``stream_id`` (a stream of this session), or None."""
        head = f"{self.key}."
        if not stream_id.startswith(head):
            return None
        worker, sep, _ = stream_id[len(head) :].partition("x")
        return worker if sep else None


def stream_event(transport: SharedTransport, stream: Stream, seq: int, message: Any) -> Chunk:
    """The chunk a follower pushes for a forwarded event (same id as at its origin)."""
    is_final = isinstance(message, dict) and "method" not in message
    return (seq, transport.event_bytes(stream, seq, message), is_final)


__all__ = ["SharedTransport", "stream_event"]
