"""Running sync user functions in worker threads, cheaply, or inline once shown short.

Sync tools must not block the connection, so a call goes to a worker thread. A function that
has shown itself short (:data:`INLINE_AFTER` calls in a row, each under :data:`INLINE_UNDER`
in its thread) is then called on the event loop itself: the hop to a thread and back costs
more than such a function (a third of a sequential stdio call's time). One inline call over
:data:`INLINE_LIMIT` sends the function back to threads for good, so a function that only
sometimes blocks holds the loop once at most. A function given the request's Context is
never run inline: it may call ``anyio.from_thread.run(ctx.info, ...)``, which needs a
worker thread (:class:`SyncRunner`).

On
asyncio this uses a small pool of our own: a job is one queue put and one
``call_soon_threadsafe``, about half the cost of ``anyio.to_thread.run_sync`` (which also
manages cancel scopes and a capacity limiter per call). Under trio, anyio's is used.

Each worker thread is started through ``anyio.to_thread.run_sync`` (once, for its whole life,
with a limiter of our own), so it is one of anyio's worker threads and a sync tool can still
call ``anyio.from_thread.run(ctx.info, "...")``; the jobs then go through our queue. No
private anyio API is used.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import queue
import threading
import weakref
from collections.abc import Callable
from time import perf_counter
from typing import Any

import anyio.to_thread

from .._backend import asyncio_loop, start_detached

#: A sync function runs inline after this many calls in a row that were each short.
INLINE_AFTER = 8
#: What counts as short, in seconds, measured around the function in its worker thread.
INLINE_UNDER = 0.0002
#: An inline call longer than this (seconds) sends its function back to threads for good.
INLINE_LIMIT = 0.002

#: Threads per event loop at most; more jobs wait in the queue.
MAX_THREADS = 40
#: An idle worker exits after this many seconds without work.
IDLE_TIMEOUT = 10.0
#: How long a job may wait in the queue behind busy workers before another thread starts.
#: Most tool functions return in microseconds: a worker that finishes takes the next job
#: at once, with no thread switch. Starting a thread per waiting job instead would put
#: dozens of threads in a GIL fight under concurrent load (half the throughput with 64
#: calls in flight); a job stuck behind a blocking one still gets a thread within this delay.
SPAWN_DELAY = 0.002


def _report(pool: _Pool, fut: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    pool.busy -= 1
    if fut.done():
        return  # the caller was cancelled and moved on
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(result)


class _Pool:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.jobs: queue.SimpleQueue[tuple[asyncio.Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self.threads = 0
        self.busy = 0
        self.lock = threading.Lock()
        self.spawn_pending = False
        # Our workers hold these tokens, not those of anyio's default limiter (which the
        # program's own to_thread calls use).
        self.limiter = anyio.CapacityLimiter(MAX_THREADS)

    def submit(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        fut = self.loop.create_future()
        self.busy += 1
        self.jobs.put((fut, fn))
        if self.busy > self.threads and self.threads < MAX_THREADS:
            if self.threads == 0:
                self._spawn()
            elif not self.spawn_pending:
                self.spawn_pending = True
                self.loop.call_later(SPAWN_DELAY, self._check_waiting)
        return fut

    def _spawn(self) -> None:
        with self.lock:
            self.threads += 1
        start_detached(self._host, why="the worker pool runs on asyncio only")

    async def _host(self) -> None:
        # state: None = not started yet, True = the thread took it, False = given up (the
        # task was cancelled first, e.g. at loop shutdown); decided under the lock, so the
        # thread count is decremented exactly once either way.
        state: list[bool | None] = [None]

        def work() -> None:
            with self.lock:
                if state[0] is False:
                    return
                state[0] = True
            self._work()

        try:
            await anyio.to_thread.run_sync(work, abandon_on_cancel=True, limiter=self.limiter)
        except anyio.get_cancelled_exc_class():
            # Only the loop's shutdown cancels this task. anyio's threads are not daemons:
            # tell our worker to leave now rather than at its idle timeout, so the process
            # can exit (a job still running finishes first).
            if state[0] is True:
                self.jobs.put(None)
            raise
        finally:
            with self.lock:
                if state[0] is None:
                    state[0] = False
                    self.threads -= 1

    def _check_waiting(self) -> None:
        self.spawn_pending = False
        if self.jobs.qsize() and self.threads < MAX_THREADS:
            # Jobs are still queued behind busy workers: one more thread, and look again.
            self._spawn()
            if self.busy > self.threads:
                self.spawn_pending = True
                self.loop.call_later(SPAWN_DELAY, self._check_waiting)

    def _work(self) -> None:
        try:
            self._loop_jobs()
        finally:
            with self.lock:
                self.threads -= 1

    def _loop_jobs(self) -> None:
        get = self.jobs.get
        call_soon = self.loop.call_soon_threadsafe
        while True:
            try:
                item = get(timeout=IDLE_TIMEOUT)
            except queue.Empty:
                return
            if item is None:
                return
            fut, fn = item
            result: Any = None
            exc: BaseException | None = None
            if not fut.cancelled():
                try:
                    result = fn()
                except BaseException as e:
                    exc = e
            try:
                call_soon(_report, self, fut, result, exc)
            except RuntimeError:  # the loop is closed
                return
            del item, fut, fn, result, exc


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool] = weakref.WeakKeyDictionary()


class RaisedInWorker(RuntimeError):
    """A function in a worker thread raised ``KeyboardInterrupt`` (or another exception that
    is not an ``Exception``): never a real interrupt there, since signals reach the main thread
    only, so it is reported as the function's failure instead of stopping the whole process."""


def _guarded(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except (KeyboardInterrupt, GeneratorExit) as e:
        raise RaisedInWorker(f"{type(e).__name__} raised in a worker thread: {e}") from e


async def run_sync(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Call ``fn(**kwargs)`` in a worker thread (with the caller's context variables)."""
    call = functools.partial(
        _guarded, functools.partial(contextvars.copy_context().run, fn, **kwargs)
    )
    loop = asyncio_loop()
    if loop is None:  # trio: anyio's own threads
        # Boxed: trio refuses a function that returns a coroutine (a sync tool may, for the
        # caller to await), taking it for an async function passed by mistake.
        boxed = await anyio.to_thread.run_sync(lambda: (call(),), abandon_on_cancel=True)
        return boxed[0]
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = _Pool(loop)
    return await pool.submit(call)


def names_from_thread(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``'s own code names ``from_thread`` (``anyio.from_thread.run(...)``): such a
    function needs a worker thread, never the loop. A static look at the function's code and
    the functions defined in it; a call through another module is not seen (docs/server.md
    says to take the Context then)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = getattr(fn, "__wrapped__", fn)
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__call__", None), "__code__", None)  # noqa: B004
    todo = [code] if code is not None else []
    while todo:
        c = todo.pop()
        if "from_thread" in c.co_names:
            return True
        todo.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    return False


#: Result types that are never awaitable (skips an ABC check per call).
_PLAIN = frozenset({str, dict, list, tuple, int, float, bool, bytes, type(None)})


class SyncRunner:
    """Calls one sync function: in a worker thread (:func:`run_sync`) until it has shown
    itself short, then inline on the event loop (see the module's docstring).

    ``inline=False`` keeps every call in a thread (a function taking the request's Context).
    """

    __slots__ = ("_allowed", "_fn", "_inline", "_short")

    def __init__(self, fn: Callable[..., Any], *, inline: bool) -> None:
        self._fn = fn
        self._allowed = inline and not names_from_thread(fn)
        self._inline = False
        self._short = 0

    @property
    def inline(self) -> bool:
        """Whether calls now run on the event loop."""
        return self._inline

    async def __call__(self, kwargs: dict[str, Any]) -> Any:
        result = await self._run(kwargs)
        if type(result) not in _PLAIN and inspect.isawaitable(result):
            # A sync function returning an awaitable (a lambda around a coroutine): the
            # awaiting may wait on anything, so its calls are never taken for short.
            self._inline = self._allowed = False
            result = await result
        return result

    async def _run(self, kwargs: dict[str, Any]) -> Any:
        fn = self._fn
        if self._inline:
            start = perf_counter()
            try:
                return contextvars.copy_context().run(fn, **kwargs)
            finally:
                if perf_counter() - start > INLINE_LIMIT:
                    self._inline = self._allowed = False
        if not self._allowed:
            return await run_sync(fn, kwargs)
        took: list[float] = []

        def timed(**kw: Any) -> Any:
            start = perf_counter()
            try:
                return fn(**kw)
            finally:
                took.append(perf_counter() - start)

        try:
            return await run_sync(timed, kwargs)
        finally:
            if took:  # not when cancelled before it ran
                self._note(took[0])

    def _note(self, seconds: float) -> None:
        if seconds >= INLINE_UNDER:
            self._short = 0
        else:
            self._short += 1
            if self._short >= INLINE_AFTER and self._allowed:
                self._inline = True
