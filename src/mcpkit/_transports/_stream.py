"""Newline-delimited JSON over a byte stream: the framing stdio uses.

Readers and writers are tiny adapters so one framing serves every backend: asyncio pipes
(no thread hop per read), trio file descriptors, anyio streams of a child process, and a
threaded fallback for what the loop cannot watch (regular files).
"""

from __future__ import annotations

import asyncio
import os
import selectors
import stat
from collections import deque
from time import monotonic
from typing import Any, Protocol

import anyio
import orjson

from .._backend import asyncio_loop
from .._exceptions import INVALID_REQUEST
from ._base import Incoming, InvalidIncoming, Message, RequestId

#: Default bound on one message. Larger lines are skipped and answered with an error.
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024
_CHUNK = 256 * 1024


class ByteReader(Protocol):
    async def read(self) -> bytes:
        """Some bytes; ``b""`` at end of stream."""
        ...


class ByteWriter(Protocol):
    async def write(self, data: bytes) -> None: ...

    async def aclose(self) -> None: ...


class LineTransport:
    """A :class:`~mcpkit._transports._base.Transport` speaking NDJSON over a reader and writer."""

    def __init__(
        self,
        reader: ByteReader,
        writer: ByteWriter,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._max = max_message_size
        self._lines: deque[Incoming] = deque()
        self._partial: list[bytes] = []
        self._partial_size = 0
        self._discarding = False
        self._eof = False
        self._closed = False
        #: For telemetry (``network.transport``): a pipe unless the creator says otherwise.
        self.network_transport = "pipe"

    async def send(
        self, message: Message, /, *, related_request_id: RequestId | None = None
    ) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        # orjson writes the newline itself: no second bytes object per message.
        await self._writer.write(orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE))

    async def receive(self) -> Incoming:
        lines = self._lines
        while not lines:
            if self._eof:
                raise anyio.EndOfStream
            chunk = await self._reader.read()
            if not chunk:
                self._eof = True
                tail = b"".join(self._partial).strip()
                self._partial.clear()
                if tail and not self._discarding:
                    lines.append(tail)
                continue
            self._feed(chunk)
        return lines.popleft()

    def _feed(self, chunk: bytes) -> None:
        start = 0
        find = chunk.find
        while True:
            nl = find(b"\n", start)
            if nl < 0:
                rest = len(chunk) - start
                if rest:
                    if self._discarding:
                        return
                    self._partial_size += rest
                    if self._partial_size > self._max:
                        self._begin_discard()
                    else:
                        self._partial.append(chunk[start:] if start else chunk)
                return
            if self._discarding:
                self._discarding = False
            elif self._partial:
                self._partial_size += nl - start
                self._partial.append(chunk[start:nl])
                if self._partial_size > self._max:
                    self._partial.clear()
                    self._partial_size = 0
                    self._lines.append(self._too_large())
                else:
                    line = b"".join(self._partial)
                    self._partial.clear()
                    self._partial_size = 0
                    if line.strip():
                        self._lines.append(line)
            elif nl - start > self._max:
                self._lines.append(self._too_large())
            else:
                line = chunk[start:nl]
                if line and not line.isspace():
                    self._lines.append(line)
            start = nl + 1

    def _begin_discard(self) -> None:
        self._partial.clear()
        self._partial_size = 0
        self._discarding = True
        self._lines.append(self._too_large())

    def _too_large(self) -> InvalidIncoming:
        return InvalidIncoming(
            INVALID_REQUEST, f"Invalid Request: message larger than {self._max} bytes"
        )

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._writer.aclose()


# ---------------------------------------------------------------------- adapters


class AnyioStreamReader:
    """Reads an anyio byte stream (e.g. a child's stdout)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def read(self) -> bytes:
        try:
            data: bytes = await self._stream.receive(_CHUNK)
            return data
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return b""


class AnyioStreamWriter:
    """Writes an anyio byte stream (e.g. a child's stdin); one writer at a time."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._lock = anyio.Lock()

    async def write(self, data: bytes) -> None:
        async with self._lock:
            await self._stream.send(data)

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass


class _AsyncioPipeReader:
    def __init__(self, reader: Any) -> None:
        self._reader = reader

    async def read(self) -> bytes:
        try:
            data: bytes = await self._reader.read(_CHUNK)
            return data
        except (ConnectionError, OSError):
            return b""


class AsyncioPipeWriter:
    """Writes an asyncio ``StreamWriter`` (a pipe) without yielding unless its buffer is full.

    A message goes out at once unless a burst is under way. One written within
    :attr:`_BURST` of the one before starts a burst (it still goes out at once): the
    messages after it in that loop iteration are joined and written together when the next
    iteration starts. With many requests in flight that is two ``write`` system calls for a
    burst instead of one per message (each also wakes the reader on the other side); a lone
    message is never delayed, and costs no callback.
    """

    # StreamWriter.write only appends to the transport's buffer, so concurrent senders
    # cannot interleave bytes; draining is needed only when the buffer grows.
    _HIGH_WATER = 256 * 1024
    #: Writes closer together than this (seconds) are taken for a burst, whose later
    #: messages are joined. A lone message opens no turn: the turn's end is a callback, and
    #: a callback costs an event-loop iteration (an ``epoll_wait``) of its own per message.
    _BURST = 0.00005

    def __init__(self, writer: Any) -> None:
        self._writer = writer
        self._transport = writer.transport
        loop = asyncio_loop()
        assert loop is not None, "an asyncio writer is made on its loop"
        self._loop = loop
        self._drain_lock = anyio.Lock()
        #: Set while a burst's iteration is not over: its writes wait in ``_pending``.
        self._turn = False
        self._pending: list[bytes] = []
        self._pending_size = 0
        #: When the last message was written at once (monotonic seconds).
        self._last = -1.0

    async def write(self, data: bytes) -> None:
        if self._transport.is_closing():
            raise BrokenPipeError("the pipe is closed")
        if not self._turn:
            now = monotonic()
            if now - self._last < self._BURST:
                # A burst: its later messages go out together as the next iteration starts.
                self._turn = True
                self._loop.call_soon(self._end_turn)
            self._last = now
            self._writer.write(data)
        else:
            self._pending.append(data)
            self._pending_size += len(data)
            if self._pending_size <= self._HIGH_WATER:
                return
            self._flush()  # a burst this large goes out now, and is drained below
        if self._transport.get_write_buffer_size() > self._HIGH_WATER:
            async with self._drain_lock:
                await self._writer.drain()

    def _flush(self) -> None:
        pending = self._pending
        if not pending:
            return
        data = pending[0] if len(pending) == 1 else b"".join(pending)
        pending.clear()
        self._pending_size = 0
        if not self._transport.is_closing():
            self._writer.write(data)

    def _end_turn(self) -> None:
        # Until this runs, every write joins _pending: the order of messages is kept.
        self._turn = False
        self._flush()

    async def aclose(self) -> None:
        try:
            self._flush()
            if not self._transport.is_closing():
                with anyio.move_on_after(2):
                    await self._writer.drain()
            self._writer.close()
        except (ConnectionError, OSError):
            pass


class _TrioFdReader:
    def __init__(self, fd: int) -> None:
        import trio

        self._stream = trio.lowlevel.FdStream(fd)

    async def read(self) -> bytes:
        try:
            return bytes(await self._stream.receive_some(_CHUNK))
        except Exception:
            return b""


class _TrioFdWriter:
    def __init__(self, fd: int) -> None:
        import trio

        self._stream = trio.lowlevel.FdStream(fd)
        self._lock = anyio.Lock()

    async def write(self, data: bytes) -> None:
        async with self._lock:
            await self._stream.send_all(data)

    async def aclose(self) -> None:
        await self._stream.aclose()


class _ThreadFdReader:
    """For file descriptors the event loop cannot watch (regular files)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def read(self) -> bytes:
        try:
            return await anyio.to_thread.run_sync(os.read, self._fd, _CHUNK, abandon_on_cancel=True)
        except OSError:  # e.g. EIO from a terminal that hung up: the input has ended
            return b""


class _ThreadFdWriter:
    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = anyio.Lock()

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]

    async def write(self, data: bytes) -> None:
        async with self._lock:
            await anyio.to_thread.run_sync(self._write_all, data)

    async def aclose(self) -> None:
        try:
            os.close(self._fd)
        except OSError:
            pass


def _loop_can_watch(fd: int, events: int) -> bool:
    """Whether the event loop can wait on ``fd``: asked of the OS, not guessed from its kind.

    Pipes, sockets and terminals can be watched; regular files and directories cannot, and
    neither can some character devices (epoll refuses ``/dev/null`` with EPERM). A wrong
    guess is fatal: asyncio reports the refusal in a callback and the reader waits forever,
    and uvloop aborts the process. So we register the fd with a throw-away selector of the
    same kind the loop uses; whatever it refuses is served by a thread instead.
    """
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return False
    probe = selectors.DefaultSelector()
    try:
        probe.register(fd, events)
    except (OSError, ValueError):
        return False
    finally:
        probe.close()
    return True


async def open_fd_reader(fd: int) -> ByteReader:
    """A reader on a file descriptor we own (it is closed with the reader's transport)."""
    loop = asyncio_loop()
    if not _loop_can_watch(fd, selectors.EVENT_READ):
        return _ThreadFdReader(fd)
    if loop is None:
        return _TrioFdReader(fd)

    reader = asyncio.StreamReader(limit=_CHUNK, loop=loop)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(fd, "rb", buffering=0)
    )
    return _AsyncioPipeReader(reader)


async def open_fd_writer(fd: int) -> ByteWriter:
    """A writer on a file descriptor we own."""
    loop = asyncio_loop()
    if not _loop_can_watch(fd, selectors.EVENT_WRITE):
        return _ThreadFdWriter(fd)
    if loop is None:
        return _TrioFdWriter(fd)
    from asyncio.streams import FlowControlMixin

    transport, protocol = await loop.connect_write_pipe(
        lambda: FlowControlMixin(loop=loop), os.fdopen(fd, "wb", buffering=0)
    )
    return AsyncioPipeWriter(asyncio.StreamWriter(transport, protocol, None, loop))
