"""Calling user functions: sync ones in worker threads (unless their author asks for the
loop), and what any of them raises kept to its own call.

Sync tools must not block the connection, so every call of a sync function goes to a worker
thread. Its author may ask for the event loop instead (``@server.tool(inline=True)``, and
the same option on prompts and resources): the hop to a thread and back then costs nothing,
and the loop is held for as long as the function runs, so it is for functions that take
microseconds. Nothing is decided from a function's past calls (issue 42: a client could
train a sync tool onto the loop with fast calls, then stall every client with a slow one).

On asyncio this uses a small pool of our own: a job is one queue put and one
``call_soon_threadsafe``, about half the cost of ``anyio.to_thread.run_sync`` (which also
manages cancel scopes and a capacity limiter per call). Under trio, anyio's is used.

Each worker thread is started through ``anyio.to_thread.run_sync`` (once, for its whole life,
with a limiter of our own), so it is one of anyio's worker threads and a sync tool can still
call ``anyio.from_thread.run(ctx.info, "...")``; the jobs then go through our queue. No
private anyio API is used.

A function raising a ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``,
``GeneratorExit``, ``SystemExit``, a class of its own) fails its call, as any exception does
(:class:`RaisedBaseException`): raised on the event loop it would otherwise end the loop, the
server with it (issue 43, W4). Three kinds still go through, being not the function's: a
cancellation (the request's, or the server's shutdown), the server's own :class:`Unwind`
(``InputRequired``, raised by ``ctx.elicit`` and the like to end the function until the
client answers), and what a signal handler raised while the function ran (Ctrl-C, a handler
calling ``sys.exit``), which is the process's to act on.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import queue
import signal
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread

from .._backend import asyncio_loop, start_detached

#: Threads per event loop at most; more jobs wait in the queue.
MAX_THREADS = 40
#: An idle worker thread exits after this many seconds without work.
IDLE_TIMEOUT = 10.0
#: How long the threads may finish no job, while jobs wait in the queue, before another
#: thread starts. Most tool functions return in microseconds: a thread that finishes takes
#: the next job at once, with no thread switch. Jobs waiting is no reason for a thread while
#: the threads get through them: more threads would only take the GIL from each other and
#: from the loop (40 threads with 64 calls in flight served a fifth less than 1 to 4). Only
#: threads that finish nothing are stuck (a blocking call, a long computation): then a job
#: behind them gets a thread of its own within about this delay. Longer than the
#: interpreter's switch interval (5 ms), for which a thread may wait on a busy loop for
#: the GIL without being stuck.
SPAWN_DELAY = 0.01


#: A job for a worker thread: the caller's future, its context, the function and its arguments.
_Job = tuple[asyncio.Future[Any], contextvars.Context, Callable[..., Any], dict[str, Any]]


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
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.threads = 0
        self.busy = 0
        #: Jobs the threads have finished (written by them, read by _check_waiting; only
        #: whether it moved matters, so a count lost between two threads does no harm).
        self.finished = 0
        self._finished_seen = 0
        self.lock = threading.Lock()
        self.spawn_pending = False
        # Set once the loop's shutdown has cancelled a thread's host: from then on no
        # thread starts. Before, the leave note in the queue looked like a job waiting to
        # _check_waiting, which started one more thread while the loop closed; nobody
        # cancelled its host, and the process waited IDLE_TIMEOUT for it to exit.
        self.closing = False
        # Our threads hold these tokens, not those of anyio's default limiter (which the
        # program's own to_thread calls use).
        self.limiter = anyio.CapacityLimiter(MAX_THREADS)

    def submit(
        self, ctx: contextvars.Context, fn: Callable[..., Any], kwargs: dict[str, Any]
    ) -> asyncio.Future[Any]:
        fut = self.loop.create_future()
        self.busy += 1
        self.jobs.put((fut, ctx, fn, kwargs))
        if self.busy > self.threads and self.threads < MAX_THREADS:
            if self.threads == 0:
                self._spawn()
            elif not self.spawn_pending:
                self.spawn_pending = True
                self._finished_seen = self.finished
                self.loop.call_later(SPAWN_DELAY, self._check_waiting)
        return fut

    def _spawn(self) -> None:
        if self.closing:
            return
        with self.lock:
            self.threads += 1
        # Kept alive and not joined, as a thread outlives the call that started it. Called
        # from the timer callback of _check_waiting too, where there is no current task:
        # start_detached asks get_running_loop, which answers there.
        start_detached(self._host, why="the pool of worker threads runs on asyncio only")

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
            # tell our thread to leave now rather than at its idle timeout, so the process
            # can exit (a job still running finishes first). Always, whatever ``state``
            # says here: the thread may take its work just after this line reads None (the
            # lock is not held across the two), and a leave note no thread takes only
            # stays in the queue of a pool whose loop is gone.
            self.closing = True
            self.jobs.put(None)
            raise
        finally:
            with self.lock:
                if state[0] is None:
                    state[0] = False
                    self.threads -= 1

    def _check_waiting(self) -> None:
        self.spawn_pending = False
        if self.closing:
            return
        if not self.jobs.qsize() or self.threads >= MAX_THREADS:
            return
        if self.finished == self._finished_seen:
            # Jobs wait and no thread finished one since the last look: they are stuck.
            self._spawn()
        self._finished_seen = self.finished
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
        # One job: the caller's context, the function and its arguments, called here with no
        # wrapper of its own (each layer is a frame per call on every sync tool's path); the
        # outcome goes back in one call_soon_threadsafe that settles the caller's future.
        get = self.jobs.get
        call_soon = self.loop.call_soon_threadsafe
        while True:
            try:
                item = get(timeout=IDLE_TIMEOUT)
            except queue.Empty:
                return
            if item is None:
                return
            fut, ctx, fn, kwargs = item
            result: Any = None
            exc: BaseException | None = None
            if not fut.cancelled():
                try:
                    result = ctx.run(fn, **kwargs)
                except (Exception, Unwind) as e:
                    exc = e
                except BaseException as e:
                    exc = _converted(e)
            self.finished += 1
            try:
                call_soon(_report, self, fut, result, exc)
            except RuntimeError:  # the loop is closed
                return
            del item, fut, ctx, fn, kwargs, result, exc


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool] = weakref.WeakKeyDictionary()


class Unwind(BaseException):
    """Raised by the server's own code inside a user function to end it on purpose, for
    the server to act on (``_mrtr.InputRequired``: a question the client answers first):
    never taken for the function's failure. A ``BaseException`` so that the function's
    ``except Exception`` does not swallow it."""


class RaisedBaseException(RuntimeError):
    """A user function raised a ``BaseException`` that is not an ``Exception``
    (``KeyboardInterrupt``, ``GeneratorExit``, ``SystemExit``, a class of its own): its
    call's failure, like any exception it raises (the module's docstring says which go
    through instead). ``raised`` is the original (also the ``__cause__``); the message
    names its type, then its own message."""

    def __init__(self, raised: BaseException) -> None:
        self.raised = raised
        text = str(raised)
        super().__init__(f"{type(raised).__name__}: {text}" if text else type(raised).__name__)


def _signal_handler_codes() -> set[Any]:
    """The code objects of the Python signal handlers installed now (asyncio's runner,
    trio's Ctrl-C handler, a program's own ``signal.signal`` handlers)."""
    codes: set[Any] = set()
    for sig in signal.valid_signals():
        try:
            handler: Any = signal.getsignal(sig)
        except (OSError, ValueError):  # pragma: no cover - a signal the platform refuses
            continue
        while isinstance(handler, functools.partial):
            handler = handler.func
        handler = getattr(handler, "__func__", handler)  # a bound method
        code = getattr(handler, "__code__", None)
        if code is not None:
            codes.add(code)
    return codes


def _not_the_functions(exc: BaseException) -> bool:
    """Whether ``exc``, raised out of a user function, must go on as it is: a cancellation
    (also inside an exception group), the server's own :class:`Unwind`, or raised by a
    signal handler that ran while the function did: the handler's frame is then in the
    traceback, above the function's."""
    if isinstance(exc, (Unwind, anyio.get_cancelled_exc_class())):
        return True
    subs = getattr(exc, "exceptions", None)  # an exception group, told by shape (3.10 too)
    if isinstance(subs, tuple) and any(
        _not_the_functions(e) for e in subs if isinstance(e, BaseException)
    ):
        return True
    codes = _signal_handler_codes()
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in codes:
            return True
        tb = tb.tb_next
    return False


def contained(exc: BaseException) -> BaseException:
    """What to raise for ``exc``, raised out of a user function: ``exc`` itself when it is
    an ``Exception`` or not the function's (:func:`_not_the_functions`), else a
    :class:`RaisedBaseException` carrying it. Called on the failure path only."""
    if isinstance(exc, Exception) or _not_the_functions(exc):
        return exc
    return RaisedBaseException(exc)


def _converted(exc: BaseException) -> RaisedBaseException:
    """``exc``, a ``BaseException`` that is not an ``Exception`` nor an :class:`Unwind`, raised
    by a user function in a worker thread, as its call's failure.

    Converted there, not on the loop: a GeneratorExit set on an asyncio future does not come
    out of its ``await`` as itself. No signal handler runs in a worker thread, and a
    cancellation raised there (anyio.from_thread, its caller cancelled) is answered to no
    one: the caller has moved on."""
    try:
        raise RaisedBaseException(exc) from exc
    except RaisedBaseException as converted:
        return converted


def _in_thread(ctx: contextvars.Context, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    try:
        return ctx.run(fn, **kwargs)
    except (Exception, Unwind):
        raise
    except BaseException as e:
        raise _converted(e) from e


def run_sync(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Awaitable[Any]:
    """Call ``fn(**kwargs)`` in a worker thread (with the caller's context variables), to
    await; a ``BaseException`` it raises comes back as :class:`RaisedBaseException`.

    On asyncio the job is queued at once and the awaitable is its future: no coroutine of
    its own, which would be one more object per call kept while the call waits."""
    ctx = contextvars.copy_context()
    loop = asyncio_loop()
    if loop is None:  # trio: anyio's own threads
        return _run_sync_anyio(ctx, fn, kwargs)
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = _Pool(loop)
    return pool.submit(ctx, fn, kwargs)


async def _run_sync_anyio(
    ctx: contextvars.Context, fn: Callable[..., Any], kwargs: dict[str, Any]
) -> Any:
    # Boxed: trio refuses a function that returns a coroutine (a sync tool may, for the
    # caller to await), taking it for an async function passed by mistake.
    boxed = await anyio.to_thread.run_sync(
        lambda: (_in_thread(ctx, fn, kwargs),), abandon_on_cancel=True
    )
    return boxed[0]


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
    """Calls one sync function: in a worker thread (:func:`run_sync`), or on the event loop
    when its author asked (``inline=True``); what it raises is its call's (:func:`contained`).
    """

    __slots__ = ("_fn", "_inline")

    def __init__(self, fn: Callable[..., Any], *, inline: bool) -> None:
        if inline and names_from_thread(fn):
            raise TypeError(
                f"{getattr(fn, '__name__', fn)!r}: inline=True runs it on the event loop, but "
                "it calls anyio.from_thread, which needs a worker thread: leave inline out"
            )
        self._fn = fn
        self._inline = inline

    @property
    def inline(self) -> bool:
        """Whether calls run on the event loop (and end without waiting: a function that
        returned an awaitable once is no longer said to)."""
        return self._inline

    async def __call__(self, kwargs: dict[str, Any]) -> Any:
        try:
            if self._inline:
                result = contextvars.copy_context().run(self._fn, **kwargs)
            else:
                result = await run_sync(self._fn, kwargs)
            if type(result) not in _PLAIN and inspect.isawaitable(result):
                # A sync function returning an awaitable (a lambda around a coroutine): the
                # awaiting may wait on anything, so its calls are no longer served at once.
                self._inline = False
                result = await result
        except BaseException as e:
            raise_as = contained(e)
            if raise_as is e:
                raise
            raise raise_as from e
        return result


def make_caller(
    fn: Callable[..., Any], *, inline: bool = False
) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """A coroutine function calling ``fn(**kwargs)``: awaited on the loop when async, else in
    a worker thread, or on the loop when ``inline`` (the function's author asked for it);
    what ``fn`` raises is its call's failure (:func:`contained`)."""
    if inline and is_async_callable(fn):
        raise TypeError(
            f"{getattr(fn, '__name__', fn)!r}: inline=True is for a sync (def) function, "
            "to run it on the event loop; an async one runs there already"
        )
    if is_async_callable(fn):

        async def call_async(kwargs: dict[str, Any]) -> Any:
            try:
                return await fn(**kwargs)
            except BaseException as e:
                raise_as = contained(e)
                if raise_as is e:
                    raise
                raise raise_as from e

        return call_async
    # Itself the caller: what it says of its calls (``inline``) is read per request.
    return SyncRunner(fn, inline=inline)


def is_async_callable(fn: Any) -> bool:
    """True for ``async def`` functions (also behind ``functools.partial`` or ``__call__``)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004
    return call is not None and not inspect.isfunction(fn) and inspect.iscoroutinefunction(call)
