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
import logging
import math
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, TypeVar

import anyio
from anyio.abc import TaskGroup

logger = logging.getLogger("mcpkit.backend")

H = TypeVar("H")
T = TypeVar("T")

#: Tasks started with :func:`start_detached`, kept alive (the loop only holds weak references).
_DETACHED: set[asyncio.Task[Any]] = set()


def asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop when the caller runs on asyncio; None on any other backend.

    Call it from async code (or code called by it) only. Asked on every request's path
    (a sync tool's hop, a POST's body deadline), so not of sniffio (~0.5 µs per ask,
    measured): a thread that runs no asyncio loop (trio) makes ``get_running_loop()``
    raise at once.
    """
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def soon_on_asyncio(callback: Callable[..., object], *args: Any) -> None:
    """``callback(*args)`` after what the asyncio loop already has scheduled (a task started
    before this call takes its first step first: ``loop.call_soon``); at once when no asyncio
    loop runs this thread (trio, or no loop at all).

    Example::

        soon_on_asyncio(marks.discard, key)  # after tasks started inside the last send
    """
    loop = asyncio_loop()
    if loop is None:
        callback(*args)
        return
    loop.call_soon(callback, *args)


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
        """Start ``fn(*args)`` as a handler task and return its handle. It may run its first
        step before this returns (asyncio, Python 3.12+: an eager task), so a handler that
        needs its handle then takes :meth:`adopt`'s, the same one."""
        ...

    def adopt(self) -> H:
        """A handle for a handler run by the calling task itself (not joined by :meth:`join`)."""
        ...

    def guard(self, handle: H, coro: Awaitable[T]) -> Awaitable[T | None]:
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


_Starter = Callable[[Coroutine[Any, Any, Any]], "asyncio.Task[Any]"]

if sys.version_info >= (3, 12):

    def _task_starter(loop: asyncio.AbstractEventLoop) -> _Starter:
        """Tasks whose first step runs at once (see :class:`AsyncioHandlerTasks`)."""
        return functools.partial(asyncio.Task, loop=loop, eager_start=True)

else:

    def _task_starter(loop: asyncio.AbstractEventLoop) -> _Starter:
        """Plain tasks: no eager start before Python 3.12."""
        return loop.create_task


class AsyncioHandlerTasks:
    """Handler tasks as plain asyncio tasks: one ``create_task`` per handler.

    An anyio child task plus a cancel scope per request cost about a quarter of a server's
    CPU; a plain task costs a fraction of that. A handler is cancelled with ``Task.cancel()``
    and told apart from other cancellations by the task's cancellation count (Python 3.11+).
    The tasks are ours to keep alive (the loop holds weak references only) and to join.

    On Python 3.12+ a task starts eagerly (the stdlib's ``eager_start``): its first step
    runs at once, inside :meth:`start`, as the current task; a handler that ends without
    waiting (an ``async def`` tool that returns at once) never waits for a loop iteration,
    and its task is never kept. Measured over stdio with 64 calls in flight: +11% calls/s
    (docs/performance-notes.md). Before 3.12, or with ``eager=False``, a task's first step
    waits for the loop.
    """

    __slots__ = ("_create", "_name", "_tasks", "_tg")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, tg: TaskGroup, name: str, *, eager: bool = True
    ) -> None:
        self._create = _task_starter(loop) if eager else loop.create_task
        self._tg = tg
        self._name = name
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> asyncio.Task[Any]:
        """Start ``fn(*args)`` as a plain task; the task is its handle."""
        task = self._create(self._run(fn, args))
        if not task.done():  # an eager task that ended in its first step is not kept
            self._tasks.add(task)
        return task

    async def _run(
        self, fn: Callable[..., Coroutine[Any, Any, Any]], args: tuple[Any, ...]
    ) -> None:
        # The task's own end is handled here, in its last step, rather than by a done
        # callback: that callback is one more event-loop iteration per request.
        try:
            await fn(*args)
        except asyncio.CancelledError:
            raise
        except (KeyboardInterrupt, SystemExit) as exc:
            self._crashed(exc)
            raise  # the loop's to act on, as from any task
        except BaseException as exc:
            self._crashed(exc)
        finally:
            self._tasks.discard(asyncio.current_task())

    def adopt(self) -> asyncio.Task[Any]:
        """The calling task, as the handle of the handler it runs."""
        task = asyncio.current_task()
        assert task is not None, "adopt() is called from a task"
        return task

    def guard(self, handle: asyncio.Task[Any], coro: Awaitable[T]) -> Awaitable[T]:
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
        # A task cancelled before its first step never runs _run's finally: forgotten here.
        handle.add_done_callback(self._tasks.discard)
        handle.cancel()

    def cancel_all(self) -> None:
        """Cancel every task started here (adopted ones belong to their own callers)."""
        for task in self._tasks:
            task.cancel()

    async def join(self) -> None:
        """Wait for the tasks started here to finish, as a task group's exit would."""
        while live := [task for task in self._tasks if not task.done()]:
            with anyio.CancelScope(shield=True):
                await asyncio.wait(live)
        self._tasks.clear()  # those cancelled before their first step (cancel_all)

    def _crashed(self, exc: BaseException) -> None:
        # A crash outside the handler's own error handling ends the owner's group, as it
        # would if the handler were a child task of that group.
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

    async def guard(self, handle: anyio.CancelScope, coro: Awaitable[T]) -> T | None:
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


def handler_tasks(tg: TaskGroup, *, name: str, eager: bool = True) -> HandlerTasks[Any]:
    """The handler task set for the running backend, in group ``tg`` (call it on the loop).

    ``name`` labels the owner in the log. ``eager=False``: on asyncio, a task never runs
    before :meth:`~HandlerTasks.start` returned, whatever the Python version.
    """
    loop = asyncio_loop()
    if loop is None:
        return AnyioHandlerTasks(tg)
    return AsyncioHandlerTasks(loop, tg, name, eager=eager)


class beside:  # lower case: used like a function
    """``async with beside(fn, *args, after=0.0):`` -- ``fn(*args)`` runs in a task beside the
    block, started ``after`` seconds into it (never, if the block ends first), and cancelled
    when the block ends: a watcher (a client's disconnect), never joined; what it raises is
    logged.

    On asyncio a plain task, its delayed start a loop timer (``call_later``): an anyio task
    group around the block, its child task (with a scope of its own) and the group's
    cancellation (which formats the task's repr) cost ~100 µs per HTTP request (measured,
    docs/performance-notes.md). Elsewhere a task group, the task sleeping ``after`` seconds first.
    """

    __slots__ = ("_after", "_args", "_fn", "_loop", "_task", "_tg", "_timer")

    def __init__(
        self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any, after: float = 0.0
    ) -> None:
        self._fn = fn
        self._args = args
        self._after = after
        self._task: asyncio.Task[Any] | None = None
        self._tg: TaskGroup | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> None:
        loop = self._loop = asyncio_loop()
        if loop is None:
            self._tg = anyio.create_task_group()
            await self._tg.__aenter__()
            self._tg.start_soon(_watch, self._fn, self._args, self._after)
        elif self._after > 0:
            self._timer = loop.call_later(self._after, self._start)
        else:
            self._start()

    def _start(self) -> None:  # asyncio: the block runs on after ``after`` seconds
        self._timer = None
        assert self._loop is not None
        self._task = self._loop.create_task(_watch(self._fn, self._args))

    async def __aexit__(self, *exc_info: Any) -> bool:
        if self._timer is not None:
            self._timer.cancel()  # a watcher not started yet never will be
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


#: Python 3.11+: the stdlib's timeout context manager.
_ASYNCIO_TIMEOUT: Callable[[float | None], AbstractAsyncContextManager[Any]] | None = getattr(
    asyncio, "timeout", None
)


def fail_after(seconds: float) -> AbstractAsyncContextManager[Any]:
    """``async with fail_after(seconds):`` -- :class:`TimeoutError` once ``seconds`` pass.

    On asyncio (3.11+) the stdlib's ``asyncio.timeout``; elsewhere (trio, Python 3.10)
    ``anyio.fail_after``. For a hot path only (every POST's body read): the stdlib's costs
    ~3 µs per use against ~5 for an anyio scope with a deadline (measured,
    docs/performance-notes.md); code that wants anyio's scope (moved deadlines, cancellation from
    another task) uses it directly.
    """
    if _ASYNCIO_TIMEOUT is not None and asyncio_loop() is not None:
        return _ASYNCIO_TIMEOUT(seconds)
    return _AnyioFailAfter(seconds)


class _AnyioFailAfter:
    """``anyio.fail_after`` behind the ``async with`` that ``asyncio.timeout`` takes."""

    __slots__ = ("_scope",)

    def __init__(self, seconds: float) -> None:
        self._scope = anyio.fail_after(seconds)

    async def __aenter__(self) -> None:
        self._scope.__enter__()

    async def __aexit__(self, *exc_info: Any) -> bool:
        return bool(self._scope.__exit__(*exc_info))


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


class AsyncioResponseWaiter:
    """asyncio's: a future, its deadline a loop timer that resolves it to False (an
    ``anyio.Event`` in a ``CancelScope`` costs two objects, a scope's enter/exit, and a
    cancellation delivered to the task and taken back; a timer cancels nothing)."""

    __slots__ = ("_done", "_future", "_loop", "_timer")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._done = False
        self._future: asyncio.Future[bool] | None = None
        #: The timer of the wait under way, if it has a deadline.
        self._timer: asyncio.TimerHandle | None = None

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
        self._timer = self._loop.call_at(deadline, self._expire)
        try:
            return await future
        finally:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        future = self._future
        if future is not None and not future.done():
            future.set_result(False)

    def now(self) -> float:
        return self._loop.time()

    def move_deadline(self, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = self._loop.call_at(deadline, self._expire)


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


class LightCancelScope:
    """``async with``: a scope :meth:`cancel` ends, for code that only needs to be
    cancellable (the HTTP app's shutdown drain cancels a 2026-07-28 request answered in one
    JSON body through one). On asyncio (3.11+) the stdlib's ``asyncio.timeout(None)``,
    cancelled by moving its deadline to now; elsewhere (trio, 3.10) an anyio cancel scope.

    Why not anyio's scope everywhere: the first anyio scope entered in a task anyio did
    not start (uvicorn's request task) registers that task with anyio, which cost ~2 µs
    of server CPU per request in process; the stdlib's context costs about half
    (docs/performance-notes.md). Nothing else enters such a scope in that task."""

    __slots__ = ("_scope", "_timeout", "cancelled_caught")

    def __init__(self) -> None:
        self.cancelled_caught = False
        self._timeout: Any = None
        self._scope: anyio.CancelScope | None = None
        if _ASYNCIO_TIMEOUT is not None and asyncio_loop() is not None:
            self._timeout = _ASYNCIO_TIMEOUT(None)
        else:
            self._scope = anyio.CancelScope()

    async def __aenter__(self) -> None:
        if self._timeout is not None:
            await self._timeout.__aenter__()
        else:
            assert self._scope is not None
            self._scope.__enter__()

    async def __aexit__(self, *exc: Any) -> bool:
        if self._timeout is None:
            assert self._scope is not None
            caught = bool(self._scope.__exit__(*exc))
            self.cancelled_caught = self._scope.cancelled_caught
            return caught
        try:
            await self._timeout.__aexit__(*exc)
        except TimeoutError:
            if not self._timeout.expired():
                raise  # not ours: the request's own TimeoutError
            self.cancelled_caught = True
            return True
        return False

    def cancel(self) -> None:
        """Cancel the request (once entered and not yet left: the drain's case)."""
        if self._timeout is not None:
            self._timeout.reschedule(asyncio.get_running_loop().time())
        else:
            assert self._scope is not None
            self._scope.cancel()
