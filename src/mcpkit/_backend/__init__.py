"""The one place that asks which event loop runs us, for the measured asyncio fast paths.

mcpkit is written against anyio and runs on asyncio and trio alike. A few hot paths go
faster when they use asyncio directly (the engine's handler tasks and response waits, the
stdio pipe readers and writers, the worker-thread pool), and one thing only asyncio allows
(a task that outlives the request that started it: an HTTP app hosting its sessions without
a lifespan). Those places ask here, or live here (:class:`HandlerTasks`), and nowhere else,
so the fork is in one module with its own contract tests (``tests/test_backend.py``);
everything else is plain anyio.
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
from typing import Any, Protocol, TypeVar

import anyio
import sniffio
from anyio.abc import TaskGroup

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


class beside:  # lower case: used like a function, as bounded_scope
    """``async with beside(fn, *args, after=0.0):`` -- ``fn(*args)`` runs in a task beside the
    block, started ``after`` seconds into it (never, if the block ends first), and cancelled
    when the block ends: a watcher (a client's disconnect), never joined; what it raises is
    logged.

    On asyncio a plain task, its delayed start an entry in the loop's deadline heap: an anyio
    task group around the block, its child task (with a scope of its own) and the group's
    cancellation (which formats the task's repr) cost ~100 µs per HTTP request (measured,
    docs/performance.md). Elsewhere a task group, the task sleeping ``after`` seconds first.
    """

    __slots__ = ("_after", "_args", "_deadline", "_fn", "_loop", "_queue", "_task", "_tg")

    def __init__(
        self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any, after: float = 0.0
    ) -> None:
        self._fn = fn
        self._args = args
        self._after = after
        self._task: asyncio.Task[Any] | None = None
        self._tg: TaskGroup | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: _Deadlines | None = None
        self._deadline: float | None = None  # for _Deadlines

    async def __aenter__(self) -> None:
        loop = self._loop = asyncio_loop()
        if loop is None:
            self._tg = anyio.create_task_group()
            await self._tg.__aenter__()
            self._tg.start_soon(_watch, self._fn, self._args, self._after)
        elif self._after > 0:
            self._queue = _deadlines_of(loop)
            self._queue.hold(self, loop.time() + self._after)
        else:
            self._expire()

    def _expire(self) -> None:  # asyncio: the block runs on after ``after`` seconds
        if self._queue is not None:
            self._queue.release(self)
        assert self._loop is not None
        self._task = self._loop.create_task(_watch(self._fn, self._args))

    async def __aexit__(self, *exc_info: Any) -> bool:
        if self._queue is not None:
            self._queue.release(self)  # a watcher not started yet never will be
        if self._task is not None:
            self._task.cancel()
        if self._tg is None:
            return False
        self._tg.cancel_scope.cancel()
        return bool(await self._tg.__aexit__(*exc_info))


async def _watch(
    fn: Callable[..., Coroutine[Any, Any, Any]], args: tuple[Any, ...], after: float = 0.0
) -> None:
    try:
        if after > 0:
            await anyio.sleep(after)  # a block that waits briefly (a held call) is not watched
        await fn(*args)
    except Exception:
        logger.exception("a watcher task failed")


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


#: Python 3.11+: a task counts the cancellations asked of it, so one can be taken back.
_UNCANCEL = hasattr(asyncio.Task, "uncancel")


class bounded_scope:  # lower case: used like anyio.move_on_after, a function
    """``with bounded_scope(timeout) as scope:`` -- ``anyio.move_on_after`` for hot paths:
    the block is cancelled ``timeout`` seconds from now (never by time when ``timeout`` is
    None), or when :meth:`cancel` is called; ``scope.cancelled_caught`` says, after the
    block, that it was.

    On asyncio (3.11+) there is no cancel scope at all: the deadline goes to the loop's
    deadline heap (:class:`_Deadlines`), which cancels the task when it passes, and the
    block's exit takes that cancellation back (``Task.uncancel``, as ``asyncio.timeout``
    does; a cancellation asked by anyone else goes on). Measured per use: an anyio scope
    with a deadline of its own 10 µs, a bare scope plus the heap 11, this ~3; a request's
    body read takes one, a 2026-07-28 request two. Elsewhere an anyio scope.
    """

    __slots__ = (
        "_active",
        "_at",
        "_cancelled_task",
        "_cancelling",
        "_deadline",
        "_queue",
        "_scope",
        "_task",
        "cancel_called",
        "cancelled_caught",
    )

    def __init__(self, timeout: float | None) -> None:
        self._deadline: float | None = None
        self._queue: _Deadlines | None = None
        self._scope: anyio.CancelScope | None = None
        self._task: asyncio.Task[Any] | None = None
        self._at: float | None = None
        self._active = self._cancelled_task = False
        #: True once the deadline passed or :meth:`cancel` was called.
        self.cancel_called = False
        #: True when the block ended by this scope's cancellation.
        self.cancelled_caught = False
        loop = asyncio_loop() if _UNCANCEL else None
        if loop is None:
            deadline = math.inf if timeout is None else anyio.current_time() + timeout
            self._scope = anyio.CancelScope(deadline=deadline)
        elif timeout is not None:
            self._queue = _deadlines_of(loop)
            self._at = loop.time() + timeout

    def __enter__(self) -> bounded_scope:
        if self._scope is not None:
            self._scope.__enter__()
            return self
        task = self._task = asyncio.current_task()
        assert task is not None, "bounded_scope is entered in a task"
        self._cancelling = task.cancelling()  # type: ignore[attr-defined]  # 3.11+
        self._active = True
        if self._queue is not None and self._at is not None:
            self._queue.hold(self, self._at)
        if self.cancel_called:  # cancelled before it was entered
            self.cancel()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        scope = self._scope
        if scope is not None:
            swallowed = bool(scope.__exit__(exc_type, exc, tb))
            self.cancel_called = scope.cancel_called
            self.cancelled_caught = scope.cancelled_caught
            return swallowed
        self._active = False
        if self._queue is not None:
            self._queue.release(self)
        task = self._task
        if not self._cancelled_task or task is None:
            return False
        # Ours, unless someone else asked for the task's cancellation meanwhile.
        uncancelled = task.uncancel()  # type: ignore[attr-defined]  # 3.11+
        if uncancelled <= self._cancelling and exc_type is asyncio.CancelledError:
            self.cancelled_caught = True
            return True
        return False

    def cancel(self) -> None:
        """Cancel the block now (or as soon as it is entered); nothing once it was left."""
        if self._scope is not None:
            self._scope.cancel()
            return
        self.cancel_called = True
        task = self._task
        if not self._active or task is None:
            return
        if asyncio.current_task() is task:
            # From the block itself: once it next waits (a cancellation asked now would
            # outlive the block if it ended first: 3.11's uncancel keeps it pending).
            task.get_loop().call_soon(self._cancel_task)
        else:
            self._cancel_task()

    def _cancel_task(self) -> None:
        if self._active and not self._cancelled_task and self._task is not None:
            self._cancelled_task = True
            self._task.cancel()

    def _expire(self) -> None:
        if self._active:
            self.cancel()


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
