"""Streams followed across workers: a stream resumed on one worker, served by another.

A 2025-11-25 client resuming a stream (``Last-Event-ID``) may reach a worker other than the
one still serving the request. That worker replays what the event store kept, then follows
the stream: it asks the serving worker (``tail``) to forward each new event (``ev``), is
told the sequence reached meanwhile (``tailok``: the gap is read from the event store) or
that the stream ended (``tailend``), and stops when the follower leaves or the serving
worker dies.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream

from .._http._events import EventStore
from .._http._transport import Chunk, Stream
from ._transport import SharedTransport, stream_event

if TYPE_CHECKING:
    from ._bus import Bus, BusMessage


class _Tail:
    """A stream of another worker followed here: events reordered by sequence."""

    def __init__(self, transport: SharedTransport, stream: Stream, after: int) -> None:
        self.transport = transport
        self.stream = stream
        self.next = after + 1
        self.pending: dict[int, Any] = {}
        self.ended = False

    def add(self, seq: int, message: Any) -> None:
        if self.ended or seq < self.next:
            return
        self.pending[seq] = message
        while self.next in self.pending:
            chunk = stream_event(
                self.transport, self.stream, self.next, self.pending.pop(self.next)
            )
            self.stream.push(chunk)
            self.next += 1
            if chunk[2]:
                self.end()
                return

    def end(self) -> None:
        self.ended = True
        self.stream.detach()


class Followers:
    """The streams of other workers followed on this one, and the answers to the workers
    following this one's (module docs).

    Args:
        backend: the bus.
        event_store: where the gap between a replay and the first forwarded event is read.
        host: the task group the watchers run in (the session registry's).
        stream_of: ``(session id, stream id)`` -> that stream of this worker, if any.
    """

    def __init__(
        self,
        backend: Bus,
        event_store: EventStore | None,
        host: Callable[[], Awaitable[TaskGroup]],
        stream_of: Callable[[str, str], Stream | None],
    ) -> None:
        self.backend = backend
        self.event_store = event_store
        self._host = host
        self._stream_of = stream_of
        self._tails: dict[str, _Tail] = {}
        for kind, handler in (
            ("tail", self._on_tail),
            ("tailok", self._on_tail_ok),
            ("tailend", self._on_tail_end),
            ("ev", self._on_event),
        ):
            backend.on(kind, handler)

    async def follow(
        self, transport: SharedTransport, stream_id: str, after: int
    ) -> tuple[Stream, MemoryObjectReceiveStream[Chunk]] | None:
        """Follow another worker's stream ``stream_id`` from event ``after`` (the caller
        replayed up to it); None when its worker is gone (nothing more will come)."""
        b = self.backend
        owner = transport.owner_of(stream_id)
        if owner is None or owner == b.worker_id:
            return None
        proxy = Stream(stream_id, None, False)
        conn = proxy.attach()
        tail = self._tails[stream_id] = _Tail(transport, proxy, after)
        asked = {"t": "tail", "sid": transport.session_id, "stream": stream_id, "to": b.worker_id}
        if not await b.send_to(owner, asked):
            self._untail(stream_id, tail)
            conn.close()
            return None
        tg = await self._host()
        tg.start_soon(self._watch, owner, stream_id, tail)
        return proxy, conn

    def _untail(self, stream_id: str, tail: _Tail) -> None:
        if self._tails.get(stream_id) is tail:
            del self._tails[stream_id]
        if not tail.ended:
            tail.end()

    async def _watch(self, owner: str, stream_id: str, tail: _Tail) -> None:
        # The stream's worker may die, and its follower may leave: either ends the tail.
        while not tail.ended and tail.stream.conn is not None:
            await anyio.sleep(self.backend.heartbeat)
            try:
                alive = await self.backend.alive(owner)
            except Exception:
                alive = True  # Redis down: not the owner's death; look again later
            if not alive:
                break
        self._untail(stream_id, tail)

    async def _gap(self, tail: _Tail, upto: int | None) -> None:
        store = self.event_store
        if store is None:
            return
        events = await store.events_after(tail.transport.key, tail.stream.id, tail.next - 1)
        for seq, message in events or ():
            if upto is None or seq <= upto:
                tail.add(seq, message)

    # ------------------------------------------------------------------ the bus

    async def _on_tail(self, message: BusMessage) -> None:
        stream_id, to = str(message.get("stream")), str(message.get("to"))
        stream = self._stream_of(str(message.get("sid")), stream_id)
        b = self.backend
        if stream is None or stream.done or stream.request_id is None:
            await b.send_to(to, {"t": "tailend", "stream": stream_id})
            return
        stream.remote = to
        await b.send_to(to, {"t": "tailok", "stream": stream_id, "seq": stream.seq})

    async def _on_tail_ok(self, message: BusMessage) -> None:
        tail = self._tails.get(str(message.get("stream")))
        if tail is not None:
            await self._gap(tail, int(message.get("seq") or 0))

    async def _on_tail_end(self, message: BusMessage) -> None:
        stream_id = str(message.get("stream"))
        tail = self._tails.get(stream_id)
        if tail is not None:
            await self._gap(tail, None)
            self._untail(stream_id, tail)

    async def _on_event(self, message: BusMessage) -> None:
        tail = self._tails.get(str(message.get("stream")))
        if tail is not None:
            tail.add(int(message.get("seq") or 0), message.get("m"))


__all__ = ["Followers"]
