"""Running sync user functions in worker threads, cheaply.

Sync tools must not block the connection, so each call goes to a worker thread. On
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
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from .._backend import asyncio_loop, start_detached

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
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = _Pool(loop)
    return await pool.submit(call)
