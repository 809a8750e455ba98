"""An in-memory transport pair: a server inside the client's process, and tests.

Messages cross as JSON bytes, as on a real wire: what a peer sends must serialize, and
neither side can mutate the other's objects.
"""

from __future__ import annotations

from typing import TypeVar

import anyio
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._base import Incoming, Message, RequestId

#: Messages buffered per direction before a sender waits (backpressure, bounded memory).
DEFAULT_BUFFER = 1024

T = TypeVar("T")


async def send_now(stream: MemoryObjectSendStream[T], item: T) -> None:
    """``stream.send(item)`` without its checkpoint when there is room.

    anyio's ``send`` and ``receive`` yield to the event loop first, always: a loop
    iteration per message on paths every message takes. They wait (and so yield) only
    when they must here.
    """
    try:
        stream.send_nowait(item)
    except anyio.WouldBlock:
        await stream.send(item)


async def receive_now(stream: MemoryObjectReceiveStream[T]) -> T:
    """``stream.receive()`` without its checkpoint when an item is waiting (see :func:`send_now`)."""
    try:
        return stream.receive_nowait()
    except anyio.WouldBlock:
        return await stream.receive()


class MemoryTransport:
    """One end of an in-memory pair. Create both ends with :func:`memory_pair`."""

    def __init__(
        self, send: MemoryObjectSendStream[bytes], receive: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._send = send
        self._receive = receive

    async def send(
        self, message: Message, /, *, related_request_id: RequestId | None = None
    ) -> None:
        await send_now(self._send, orjson.dumps(message))

    async def send_raw(self, data: bytes) -> None:
        """Deliver bytes as they are (tests use it to send malformed input)."""
        await self._send.send(data)

    async def receive(self) -> Incoming:
        return await receive_now(self._receive)

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        """Close both directions at once (memory streams need no await)."""
        self._send.close()
        self._receive.close()


def memory_pair(buffer: int = DEFAULT_BUFFER) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports: what one sends, the other receives.

    Example::

        client_end, server_end = memory_pair()
    """
    a_send, b_receive = anyio.create_memory_object_stream[bytes](buffer)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](buffer)
    return MemoryTransport(a_send, a_receive), MemoryTransport(b_send, b_receive)
