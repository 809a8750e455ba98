"""The one place that asks which event loop runs us, for the measured asyncio fast paths.

mcpkit is written against anyio and runs on asyncio and trio alike. A few hot paths go
faster when they use asyncio directly (the engine's handler tasks and response waits, the
stdio pipe readers and writers, the worker-thread pool, the HTTP client's connections), and one thing only asyncio allows (a task that outlives the request
that started it: an HTTP app hosting its sessions without a lifespan). Those places ask here,
or live here (:class:`HandlerTasks`), and nowhere else, so the fork is in one module with its
own contract tests (``tests/test_backend.py``); everything else is plain anyio.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import logging
import math
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import sniffio
from anyio.abc import ByteStream, TaskGroup

if TYPE_CHECKING:
    import ssl  # not at a stdio server's start

logger = logging.getLogger("mcpkit.backend")

H = TypeVar("H")
T = TypeVar("T")

#: Tasks started with :func:`start_detached`, kept alive (the loop only holds weak references).
_DETACHED: set[asyncio.Task[Any]] = set()


def asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop when the caller runs on asyncio; None on any other backend.

    Call it from async code (or code called by it) only.
    """
    if sniffio.current_async_library() != "asyncio":
        return None
    return asyncio.get_running_loop()


def start_detached(fn: Callable[[], Coroutine[Any, Any, Any]], *, why: str) -> asyncio.Task[Any]:
    """Start ``fn()`` as a task that outlives its caller. asyncio only: structured backends
    (trio) have no such thing, and get a :class:`RuntimeError` saying ``why`` it was needed.
    """
    loop = asyncio_loop()
    if loop is None:
        raise RuntimeError(why)
    task = loop.create_task(fn())
    _DETACHED.add(task)
    task.add_done_callback(_DETACHED.discard)
    return task


# ---------------------------------------------------------------------- handler tasks


class HandlerTasks(Protocol[H]):
    """The tasks serving one connection's requests, each cancellable on its own.

    Every handler task belongs to the owner's task group ``tg``: an exception escaping one
    is raised in that group (it ends the connection), as a child task's would. A *handle*
    (opaque, of type ``H``) names one handler, for :meth:`guard` and :meth:`cancel`.

    The part of a handler that a cancellation of that handler alone must end (the call of
    the user's code, not the bookkeeping around it) runs under :meth:`guard`, so::

        handle = tasks.start(serve, request)        # or tasks.adopt() in the calling task
        ...
        # inside serve():
        try:
            result = await tasks.guard(handle, work())   # None if cancel(handle) ended it
        except BaseException as exc:
            if not tasks.absorbs(handle, exc, cancelled=..., closing=...):
                raise
            result = None   # ended by cancel(handle); the task goes on

    Implementations: :class:`AsyncioHandlerTasks` (plain asyncio tasks, no cancel scope per
    handler: the engine's fast path) and :class:`AnyioHandlerTasks` (child tasks of the
    group and a cancel scope per handler, for trio). :func:`handler_tasks` picks one.
    """

    def start(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> H:
        """Start ``fn(*args)`` as a handler task and return its handle (it runs later)."""
        ...

    def adopt(self) -> H:
        """A handle for a handler run by the calling task itself (not joined by :meth:`join`)."""
        ...

    def guard(self, handle: H, coro: Coroutine[Any, Any, T]) -> Awaitable[T | None]:
        """Await ``coro`` where ``cancel(handle)`` can end it: then the await returns None, or
        raises an exception that :meth:`absorbs` recognises (asyncio cancels the whole task).
        """
        ...

    def absorbs(self, handle: H, exc: BaseException, *, cancelled: bool, closing: bool) -> bool:
        """Whether ``exc``, raised out of :meth:`guard`, ends the guarded call only.

        ``cancelled`` says :meth:`cancel` was called for this handler, ``closing`` that the
        owner is shutting down. True for the cancellation of this handler alone, unless
        ``closing`` (a cancellation then may be the shutdown's, which must end the whole
        task: before Python 3.11 asyncio cannot tell them apart). True as well, when not
        ``cancelled``, for a cancellation error the guarded code raised on its own with no
        cancellation pending (it awaited a future someone else cancelled): the caller should
        take that for the code's own failure. False for anything else.
        """
        ...

    def cancel(self, handle: H) -> None:
        """Cancel one handler's guarded call. On asyncio that cancels its task, so a handler
        not yet in :meth:`guard` (waiting for a slot) ends there instead; elsewhere the
        cancellation waits for :meth:`guard`.
        """
        ...

    def cancel_all(self) -> None:
        """Cancel every started handler task (on anyio: the owner's whole group, which ends
        with its handlers anyway). Adopted handlers belong to their callers.
        """
        ...

    async def join(self) -> None:
        """Wait, shielded from cancellation, until every started handler task has finished."""
        ...


class AsyncioHandlerTasks:
    """Handler tasks as plain asyncio tasks: one ``create_task`` per handler.

    An anyio child task plus a cancel scope per request cost about a quarter of a server's
    CPU; a plain task costs a fraction of that. A handler is cancelled with ``Task.cancel()``
    and told apart from other cancellations by the task's cancellation count (Python 3.11+).
    The tasks are ours to keep alive (the loop holds weak references only) and to join.
    """

    __slots__ = ("_create", "_done", "_name", "_tasks", "_tg")

    def __init__(self, loop: asyncio.AbstractEventLoop, tg: TaskGroup, name: str) -> None:
        self._create = loop.create_task
        self._tg = tg
        self._name = name
        self._tasks: set[asyncio.Task[Any]] = set()
        # Bound once: each start() reuses it instead of binding a method per request.
        self._done = self._task_done

    def start(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> asyncio.Task[Any]:
        """Start ``fn(*args)`` as a plain task; the task is its handle."""
        task = self._create(fn(*args))
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def adopt(self) -> asyncio.Task[Any]:
        """The calling task, as the handle of the handler it runs."""
        task = asyncio.current_task()
        assert task is not None, "adopt() is called from a task"
        return task

    def guard(self, handle: asyncio.Task[Any], coro: Coroutine[Any, Any, T]) -> Awaitable[T]:
        """``coro`` itself: :meth:`cancel` cancels the task, so nothing wraps the await."""
        return coro

    def absorbs(
        self, handle: asyncio.Task[Any], exc: BaseException, *, cancelled: bool, closing: bool
    ) -> bool:
        """See :meth:`HandlerTasks.absorbs`; the count of cancellations tells them apart."""
        if not isinstance(exc, asyncio.CancelledError):
            return False
        if not cancelled:
            # Nobody cancelled this task when its count is 0: the guarded code raised it on
            # its own. Before 3.11 there is no count: it is taken for a cancellation then.
            cancelling = getattr(handle, "cancelling", None)
            return cancelling is not None and cancelling() == 0
        if closing:
            return False
        # Ours, unless someone else cancelled the task too (then it must go on ending it).
        uncancel = getattr(handle, "uncancel", None)  # Python 3.11+
        return uncancel is None or uncancel() == 0

    def cancel(self, handle: asyncio.Task[Any]) -> None:
        """Cancel the handler's task."""
        handle.cancel()

    def cancel_all(self) -> None:
        """Cancel every task started here (adopted ones belong to their own callers)."""
        for task in self._tasks:
            task.cancel()

    async def join(self) -> None:
        """Wait for the tasks started here to finish, as a task group's exit would."""
        while self._tasks:
            with anyio.CancelScope(shield=True):
                await asyncio.wait(set(self._tasks))

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            # A crash outside the handler's own error handling ends the owner's group, as
            # it would if the handler were a child task of that group.
            async def reraise() -> None:
                raise exc

            try:
                self._tg.start_soon(reraise)
            except RuntimeError:  # pragma: no cover - the group is already closed
                logger.error("%s: handler task failed", self._name, exc_info=exc)


class AnyioHandlerTasks:
    """Handler tasks as child tasks of the owner's group, each guarded by a cancel scope.

    Backend-neutral (what trio runs). The handle is the handler's :class:`anyio.CancelScope`,
    entered by :meth:`guard` only, so cancelling it ends the guarded call and nothing else.
    Tasks are counted so that :meth:`join` can wait for them before the group exits.
    """

    __slots__ = ("_idle", "_live", "_tg")

    def __init__(self, tg: TaskGroup) -> None:
        self._tg = tg
        self._live = 0
        self._idle: anyio.Event | None = None

    def start(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> anyio.CancelScope:
        """Start ``fn(*args)`` in the group; the handle is a fresh cancel scope for :meth:`guard`."""
        self._tg.start_soon(self._run, fn, args)
        self._live += 1
        return anyio.CancelScope()

    async def _run(
        self, fn: Callable[..., Coroutine[Any, Any, Any]], args: tuple[Any, ...]
    ) -> None:
        try:
            await fn(*args)
        finally:
            self._live -= 1
            if not self._live and self._idle is not None:
                self._idle.set()

    def adopt(self) -> anyio.CancelScope:
        """A fresh cancel scope for the calling task's handler."""
        return anyio.CancelScope()

    async def guard(self, handle: anyio.CancelScope, coro: Coroutine[Any, Any, T]) -> T | None:
        """Await ``coro`` in the handler's scope: None when :meth:`cancel` ended it."""
        with handle:
            return await coro
        return None

    def absorbs(
        self, handle: anyio.CancelScope, exc: BaseException, *, cancelled: bool, closing: bool
    ) -> bool:
        """Never: the scope in :meth:`guard` already caught its own cancellation."""
        return False

    def cancel(self, handle: anyio.CancelScope) -> None:
        """Cancel the handler's scope: its guarded call ends, now or as soon as it starts."""
        handle.cancel()

    def cancel_all(self) -> None:
        """Cancel the group: its handler tasks are its children, like the rest of its tasks."""
        self._tg.cancel_scope.cancel()

    async def join(self) -> None:
        """Wait for the tasks started here to finish, shielded (the group may be cancelled)."""
        while self._live:
            self._idle = anyio.Event()
            with anyio.CancelScope(shield=True):
                await self._idle.wait()


def handler_tasks(tg: TaskGroup, *, name: str) -> HandlerTasks[Any]:
    """The handler task set for the running backend, in group ``tg`` (call it on the loop).

    ``name`` labels the owner in the log.
    """
    loop = asyncio_loop()
    if loop is None:
        return AnyioHandlerTasks(tg)
    return AsyncioHandlerTasks(loop, tg, name)


class Slots:
    """A counting semaphore for request handlers, cheap when uncontended.

    anyio's CapacityLimiter tracks a borrower task per slot (a ``current_task()`` lookup and
    set operations on every acquire and release); handlers need only a count, and waiters
    served in order.
    """

    __slots__ = ("free", "waiters")

    def __init__(self, n: int) -> None:
        self.free = n
        self.waiters: deque[anyio.Event] = deque()

    async def acquire(self) -> None:
        """Wait for a slot (the fast path, a free slot and nobody waiting, is inlined by callers)."""
        if self.free > 0 and not self.waiters:
            self.free -= 1
            return
        event = anyio.Event()
        self.waiters.append(event)
        try:
            await event.wait()
        except BaseException:
            if event.is_set():
                self.release()  # handed a slot while being cancelled: pass it on
            else:
                self.waiters.remove(event)
            raise

    def release(self) -> None:
        """Free a slot, handing it to the longest waiter if there is one."""
        if self.waiters:
            self.waiters.popleft().set()
        else:
            self.free += 1


# ---------------------------------------------------------------------- response waiters


class ResponseWaiter(Protocol):
    """What a request waits on until its response comes, or its deadline passes.

    ``wait(deadline)`` returns True once :meth:`set` was called, False when the deadline
    (``anyio.current_time()`` clock; ``math.inf`` for none) passed first;
    ``move_deadline`` moves the deadline of a wait under way (a progress report).
    Cancelling the waiting task cancels the wait, as any await.
    """

    def set(self) -> None: ...

    def is_set(self) -> bool: ...

    async def wait(self, deadline: float) -> bool: ...

    def move_deadline(self, deadline: float) -> None: ...

    def now(self) -> float:
        """The clock deadlines are read on (``anyio.current_time()``'s)."""
        ...


class _Deadlines:
    """The deadlines of one asyncio loop's waiting requests, behind one timer handle.

    A timer handle per request cost ~12% of our client at 64 requests in flight (profiled):
    creating it, cancelling it, and the loop's heap ordering handles with a Python
    ``__lt__``. Here a request costs a tuple pushed on a heap ordered in C; one loop timer
    is armed at the earliest deadline. An entry whose request is answered, or whose deadline
    moved, is left in the heap (``waiter._deadline`` no longer matches it) and dropped when
    it reaches the top or when stale entries outnumber the live ones (then the heap is
    rebuilt: amortized O(1) per request, memory bounded by twice the requests waiting).
    """

    __slots__ = ("_armed_at", "_heap", "_loop", "_seq", "_timer", "waiting")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._heap: list[tuple[float, int, _Timed]] = []
        self._seq = 0
        self._timer: asyncio.TimerHandle | None = None
        self._armed_at = math.inf
        #: Entries held (:meth:`hold` to :meth:`release`): the live entries of the heap.
        self.waiting = 0

    def hold(self, entry: _Timed, deadline: float) -> None:
        """``entry`` waits for ``deadline`` from now on (until :meth:`release`)."""
        entry._deadline = deadline
        self.waiting += 1
        self._add(deadline, entry)

    def move(self, entry: _Timed, deadline: float) -> None:
        """``entry``, held, waits for ``deadline`` instead (its old heap entry goes stale)."""
        if entry._deadline is not None and deadline != entry._deadline:
            entry._deadline = deadline
            self._add(deadline, entry)

    def release(self, entry: _Timed) -> None:
        """``entry`` waits no more: its heap entries are stale."""
        if entry._deadline is not None:
            entry._deadline = None
            self.waiting -= 1

    def _add(self, deadline: float, waiter: _Timed) -> None:
        heap = self._heap
        if len(heap) > 2 * self.waiting + 64:
            self._compact()
        self._seq += 1
        heapq.heappush(heap, (deadline, self._seq, waiter))
        if deadline < self._armed_at:
            self._arm(deadline)

    def _arm(self, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._armed_at = deadline
        self._timer = self._loop.call_at(deadline, self._fire)

    def _compact(self) -> None:
        self._heap = [e for e in self._heap if e[2]._deadline == e[0]]
        heapq.heapify(self._heap)

    def _fire(self) -> None:
        self._timer, self._armed_at = None, math.inf
        heap = self._heap
        now = self._loop.time()
        try:
            while heap and (heap[0][0] <= now or heap[0][2]._deadline != heap[0][0]):
                deadline, _, waiter = heapq.heappop(heap)
                if waiter._deadline == deadline:
                    waiter._expire()
        finally:
            # Re-armed whatever happened: one failing expiry (the loop's exception handler
            # reports it) must not leave every later deadline without its timer.
            if self._heap:
                self._arm(self._heap[0][0])


class _Timed(Protocol):
    """What :class:`_Deadlines` keeps: the deadline it is waiting for (``None`` once it no
    longer is: its entries are then stale), and what to do when it passes."""

    _deadline: float | None

    def _expire(self) -> None: ...


class bounded_scope:  # lower case: used like anyio.move_on_after, a function
    """``with bounded_scope(timeout) as scope:`` -- ``anyio.move_on_after`` for hot paths:
    the block is cancelled ``timeout`` seconds from now (never when ``timeout`` is None);
    check ``scope.cancelled_caught`` after it.

    On asyncio the deadline goes to the loop's deadline heap (:class:`_Deadlines`): a
    scope with a deadline of its own (``anyio.fail_after``) measured 10 µs a use against
    4 µs for a bare scope, and a request's body read, each read of a response and each
    request write take one. Elsewhere it is the scope's own deadline.
    """

    __slots__ = ("_deadline", "_queue", "_scope")

    def __init__(self, timeout: float | None) -> None:
        self._deadline: float | None = None
        self._queue: _Deadlines | None = None
        loop = asyncio_loop() if timeout is not None else None
        if timeout is None:
            self._scope = anyio.CancelScope()
        elif loop is None:
            self._scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)
        else:
            self._scope = anyio.CancelScope()
            self._queue = _deadlines_of(loop)
            self._queue.hold(self, loop.time() + timeout)

    def __enter__(self) -> anyio.CancelScope:
        return self._scope.__enter__()

    def __exit__(self, *exc_info: Any) -> bool:
        try:
            return bool(self._scope.__exit__(*exc_info))
        finally:
            if self._queue is not None:
                self._queue.release(self)

    def _expire(self) -> None:
        self._scope.cancel()


_deadlines = threading.local()


def _deadlines_of(loop: asyncio.AbstractEventLoop) -> _Deadlines:
    # One loop runs in a thread at a time: the thread's last loop's queue, or a new one.
    queue: _Deadlines | None = getattr(_deadlines, "queue", None)
    if queue is None or queue._loop is not loop:
        queue = _deadlines.queue = _Deadlines(loop)
    return queue


class AsyncioResponseWaiter:
    """asyncio's: a future, its deadline kept by the loop's :class:`_Deadlines` (an
    ``anyio.Event`` in a ``CancelScope`` costs two objects, a scope's enter/exit and a
    timer handle of its own)."""

    __slots__ = ("_deadline", "_done", "_future", "_loop", "_queue")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._done = False
        self._future: asyncio.Future[bool] | None = None
        #: The deadline of the wait under way; None when none is (what _Deadlines reads).
        self._deadline: float | None = None
        self._queue: _Deadlines | None = None

    def set(self) -> None:
        self._done = True
        future = self._future
        if future is not None and not future.done():
            future.set_result(True)

    def is_set(self) -> bool:
        return self._done

    async def wait(self, deadline: float) -> bool:
        if self._done:
            return True
        future: asyncio.Future[bool] = self._loop.create_future()
        self._future = future
        if deadline == math.inf:
            return await future
        queue = self._queue = _deadlines_of(self._loop)
        queue.hold(self, deadline)
        try:
            return await future
        finally:
            queue.release(self)

    def _expire(self) -> None:
        future = self._future
        if future is not None and not future.done():
            future.set_result(False)

    def now(self) -> float:
        return self._loop.time()

    def move_deadline(self, deadline: float) -> None:
        if self._queue is not None:
            self._queue.move(self, deadline)


class AnyioResponseWaiter:
    """Any backend's: an ``anyio.Event``, in a ``CancelScope`` with the deadline."""

    __slots__ = ("_event", "_scope")

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._scope: anyio.CancelScope | None = None

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self, deadline: float) -> bool:
        if deadline == math.inf:
            await self._event.wait()
            return True
        with anyio.CancelScope(deadline=deadline) as scope:
            self._scope = scope
            await self._event.wait()
        self._scope = None
        return self._event.is_set()

    def move_deadline(self, deadline: float) -> None:
        if self._scope is not None:
            self._scope.deadline = deadline

    def now(self) -> float:
        return anyio.current_time()


def response_waiters() -> Callable[[], ResponseWaiter]:
    """What makes waiters for the running loop (call it on the loop): kept by a caller that
    stays on one loop (the engine), it spares each request the question of which loop runs."""
    loop = asyncio_loop()
    if loop is None:
        return AnyioResponseWaiter
    return functools.partial(AsyncioResponseWaiter, loop)


# ---------------------------------------------------------------------- TCP connections

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
    # IPv6 and IPv4 raced as anyio.connect_tcp does, where the loop can (uvloop cannot).
    options: dict[str, Any] = {"server_hostname": host} if ssl_context is not None else {}
    if isinstance(loop, asyncio.BaseEventLoop):
        options["happy_eyeballs_delay"] = 0.25
    transport, protocol = await loop.create_connection(
        lambda: _TCPProtocol(loop), host, port, ssl=ssl_context, **options
    )
    return AsyncioTCPStream(transport, protocol)


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
