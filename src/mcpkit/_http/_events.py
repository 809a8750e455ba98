"""Event stores: what makes Streamable HTTP streams resumable.

The transport gives every SSE event an id ``<stream id>_<sequence>`` and stores the event
before sending it. A client that lost the connection sends ``GET`` with ``Last-Event-ID``;
the transport reads the stream id from that id, checks that the stream belongs to the
requesting session, and asks the store for that stream's later events only (never another
stream's).

Implement :class:`EventStore` to share events between server processes (e.g. in Redis);
:class:`InMemoryEventStore` is the bounded default.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Protocol, runtime_checkable

from .._transports._base import Message


@runtime_checkable
class EventStore(Protocol):
    """Where SSE events are kept for replay, grouped by session."""

    async def store_event(
        self, session_key: str, stream_id: str, seq: int, message: Message
    ) -> None:
        """Keep ``message``, the ``seq``-th event (sequences increase) of ``stream_id``."""

    async def events_after(
        self, session_key: str, stream_id: str, seq: int
    ) -> list[tuple[int, Message]] | None:
        """The events of ``stream_id`` with a sequence above ``seq``, oldest first.

        None when the stream is unknown (never stored, or evicted).
        """

    async def forget_session(self, session_key: str) -> None:
        """Drop everything kept for a session (it ended)."""


class InMemoryEventStore:
    """A bounded in-process :class:`EventStore`.

    Args:
        max_events_per_stream: events kept per stream (oldest dropped first).
        max_streams_per_session: streams kept per session (least recently written dropped).
        max_sessions: sessions kept (least recently written dropped).
        max_events: events kept in all; past it, whole sessions are dropped, least recently
            written first (their clients can no longer resume; nothing else breaks).
    """

    def __init__(
        self,
        *,
        max_events_per_stream: int = 1000,
        max_streams_per_session: int = 100,
        max_sessions: int = 10_000,
        max_events: int = 100_000,
    ) -> None:
        self.max_events_per_stream = max_events_per_stream
        self.max_streams_per_session = max_streams_per_session
        self.max_sessions = max_sessions
        self.max_events = max_events
        self._sessions: OrderedDict[str, OrderedDict[str, deque[tuple[int, Message]]]] = (
            OrderedDict()
        )
        self._count = 0

    async def store_event(
        self, session_key: str, stream_id: str, seq: int, message: Message
    ) -> None:
        streams = self._sessions.get(session_key)
        if streams is None:
            streams = self._sessions[session_key] = OrderedDict()
            while len(self._sessions) > self.max_sessions:
                self._evict_oldest()
        else:
            self._sessions.move_to_end(session_key)
        q = streams.get(stream_id)
        if q is None:
            q = streams[stream_id] = deque(maxlen=self.max_events_per_stream)
            while len(streams) > self.max_streams_per_session:
                self._count -= len(streams.popitem(last=False)[1])
        else:
            streams.move_to_end(stream_id)
        if len(q) == q.maxlen:
            self._count -= 1
        q.append((seq, message))
        self._count += 1
        while self._count > self.max_events and len(self._sessions) > 1:
            self._evict_oldest()

    def _evict_oldest(self) -> None:
        _, streams = self._sessions.popitem(last=False)
        self._count -= sum(len(q) for q in streams.values())

    async def events_after(
        self, session_key: str, stream_id: str, seq: int
    ) -> list[tuple[int, Message]] | None:
        streams = self._sessions.get(session_key)
        q = streams.get(stream_id) if streams is not None else None
        if q is None:
            return None
        return [(s, m) for s, m in q if s > seq]

    async def forget_session(self, session_key: str) -> None:
        streams = self._sessions.pop(session_key, None)
        if streams is not None:
            self._count -= sum(len(q) for q in streams.values())

    def event_count(self) -> int:
        """Events held in all (tests and metrics)."""
        return self._count

    def session_count(self) -> int:
        return len(self._sessions)
