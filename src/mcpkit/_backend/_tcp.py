"""The HTTP client's connections: asyncio's own where asyncio runs, anyio's elsewhere.

Part of the backend fork (``mcpkit._backend``); its contract: ``tests/test_backend_tcp.py``.
Imported by the HTTP client only (``ssl`` is not loaded at a stdio server's start).
"""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
from typing import Any, Protocol

import anyio
from anyio.abc import ByteStream

from . import _deadlines_of, asyncio_loop, bounded_scope

#: A connection's unread bytes at which asyncio stops reading its socket (and resumes
#: below a quarter of it): what the server sends ahead of us stays bounded.
_TCP_HIGH_WATER = 256 * 1024
_READ_SIZE = 65536


class TCPStream(Protocol):
    """A client connection whose every read and write is bounded (the HTTP client's).

    Both raise ``TimeoutError`` when ``timeout`` seconds pass (never when it is None) and
    anyio's errors otherwise: ``EndOfStream`` after the peer's end, ``BrokenResourceError``
    after a failure, ``ClosedResourceError`` after :meth:`aclose`.
    """

    async def receive_within(self, timeout: float | None) -> bytes: ...  # up to 64 KiB

    async def send_within(self, data: bytes, timeout: float | None) -> None: ...  # buffered

    async def aclose(self) -> None: ...  # idempotent


async def connect_tcp(
    host: str, port: int, *, ssl_context: ssl.SSLContext | None = None
) -> TCPStream:
    """A TCP connection (TLS with ``ssl_context``, checked against ``host``), for the
    HTTP client: an :class:`AsyncioTCPStream` on asyncio, else anyio's stream
    (:class:`AnyioTCPStream`).

    Why asyncio's own: anyio's asyncio stream pauses the socket's reading after every read
    and resumes it before the next (two ``epoll_ctl`` calls and a selector update per read),
    and a scope per bounded read or write costs ~4 µs more than a heap entry; the HTTP
    client reads each response once or twice and writes each request once (measured: ~10%
    of our client's CPU per call over HTTP).
    """
    loop = asyncio_loop()
    if loop is None:
        if ssl_context is None:
            return AnyioTCPStream(await anyio.connect_tcp(host, port))
        return AnyioTCPStream(
            await anyio.connect_tcp(
                host, port, tls=True, ssl_context=ssl_context, tls_hostname=host
            )
        )
    # IPv6 and IPv4 raced as anyio.connect_tcp does, where the loop can (uvloop cannot), for
    # a host name only: an address has nothing to race, and CPython 3.11's race drops the
    # socket it connected when the connect is cancelled at that moment (a leaked socket).
    options: dict[str, Any] = {"server_hostname": host} if ssl_context is not None else {}
    if isinstance(loop, asyncio.BaseEventLoop) and not _is_address(host):
        options["happy_eyeballs_delay"] = 0.25
    transport, protocol = await loop.create_connection(
        lambda: _TCPProtocol(loop), host, port, ssl=ssl_context, **options
    )
    return AsyncioTCPStream(transport, protocol)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class AnyioTCPStream:
    """:class:`TCPStream` over an anyio byte stream (trio; TLS by anyio), each operation in a
    :class:`bounded_scope`."""

    __slots__ = ("_stream",)

    def __init__(self, stream: ByteStream) -> None:
        self._stream = stream

    async def receive_within(self, timeout: float | None) -> bytes:
        with bounded_scope(timeout):
            return await self._stream.receive(_READ_SIZE)
        raise TimeoutError(f"nothing received within {timeout} s")

    async def send_within(self, data: bytes, timeout: float | None) -> None:
        with bounded_scope(timeout):
            await self._stream.send(data)
            return
        raise TimeoutError(f"could not send within {timeout} s")

    async def aclose(self) -> None:
        await self._stream.aclose()


class _TCPProtocol(asyncio.Protocol):
    """Buffers what the socket gives until :class:`AsyncioTCPStream` takes it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.buf = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.transport: asyncio.Transport | None = None
        self.reading_paused = False
        self.writing_paused = False
        # One waiting reader and one waiting writer at most, each on a future of its own.
        self.waiters: list[asyncio.Future[None]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not subclasses of asyncio.Transport, but behave as one.
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if len(self.buf) > _TCP_HIGH_WATER and not self.reading_paused:
            self.reading_paused = True
            assert self.transport is not None
            self.transport.pause_reading()
        self.wake()

    def eof_received(self) -> bool:
        self.eof = True
        self.wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self.wake()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self.wake()

    def wake(self) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)


class AsyncioTCPStream:
    """:class:`TCPStream` on an asyncio transport whose socket is read continuously (up to
    :data:`_TCP_HIGH_WATER` unread bytes); a wait's deadline is an entry in the loop's
    deadline heap (:class:`_Deadlines`), and a read that finds bytes waiting, or a write
    the kernel takes at once, needs none. One operation at a time (the HTTP client sends a
    request, then reads its response)."""

    __slots__ = ("_closed", "_deadline", "_expired", "_protocol", "_transport")

    def __init__(self, transport: asyncio.Transport, protocol: _TCPProtocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._closed = False
        self._deadline: float | None = None  # for _Deadlines
        self._expired = False

    async def receive_within(self, timeout: float | None) -> bytes:
        p = self._protocol
        if not p.buf:
            await self._wait(timeout, reading=True)
        buf = p.buf
        if len(buf) <= _READ_SIZE:
            data = bytes(buf)
            buf.clear()
        else:
            data = bytes(buf[:_READ_SIZE])
            del buf[:_READ_SIZE]
        if p.reading_paused and len(buf) < _TCP_HIGH_WATER // 4:
            p.reading_paused = False
            self._transport.resume_reading()
        return data

    async def send_within(self, data: bytes, timeout: float | None) -> None:
        self._check(reading=False)
        self._transport.write(data)
        if self._protocol.writing_paused:  # the kernel's buffer is full: until it drains
            await self._wait(timeout, reading=False)

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._transport.close()
            self._protocol.wake()

    def _check(self, *, reading: bool) -> bool:
        """Raise what ends the wait; True when it is over (bytes to read, writable)."""
        p = self._protocol
        if reading and p.buf:
            return True
        if self._closed:
            raise anyio.ClosedResourceError
        if p.error is not None:
            raise anyio.BrokenResourceError from p.error
        if p.eof:
            if reading:
                raise anyio.EndOfStream
            raise anyio.BrokenResourceError
        if self._expired:
            raise TimeoutError("nothing received" if reading else "could not send")
        return not reading and not p.writing_paused

    async def _wait(self, timeout: float | None, *, reading: bool) -> None:
        p = self._protocol
        loop = p.loop
        queue = None
        if timeout is not None:
            queue = _deadlines_of(loop)
            queue.hold(self, loop.time() + timeout)
        try:
            while not self._check(reading=reading):
                waiter = loop.create_future()
                p.waiters.append(waiter)
                try:
                    await waiter
                finally:
                    p.waiters.remove(waiter)
        finally:
            if queue is not None:
                queue.release(self)
            self._expired = False

    def _expire(self) -> None:
        self._expired = True
        self._protocol.wake()
