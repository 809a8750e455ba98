"""Contract tests of the worker-thread fast path (``run_sync`` and ``SyncRunner`` of the
server's thread module).

Whatever the backend (our own pool on asyncio, anyio's ``to_thread`` on trio), a sync
function runs off the event loop, sees the caller's context variables, can call back into
the loop with ``anyio.from_thread``, and fails as a function call fails, never as the process.
One its author runs on the loop (``inline=True``) has the same context rules.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import pytest

from mcpkit._server import _threads
from mcpkit._server._threads import MAX_THREADS, RaisedBaseException, SyncRunner, run_sync

pytestmark = pytest.mark.anyio
WHO = contextvars.ContextVar("WHO", default="nobody")


async def test_runs_off_the_loop_with_the_callers_context() -> None:
    WHO.set("caller")
    loop_thread = threading.get_ident()

    def job(x: int) -> tuple[int, str, int]:
        return x * 2, WHO.get(), threading.get_ident()

    doubled, who, thread = await run_sync(job, {"x": 21})
    assert (doubled, who) == (42, "caller") and thread != loop_thread


async def test_a_job_can_call_back_into_the_loop() -> None:
    seen: list[str] = []

    async def on_loop(text: str) -> str:
        seen.append(text)
        return text.upper()

    def job() -> str:
        return anyio.from_thread.run(on_loop, "hi")

    assert await run_sync(job, {}) == "HI" and seen == ["hi"]


async def test_an_interrupt_inside_a_job_is_the_jobs_failure() -> None:
    def job() -> None:
        raise KeyboardInterrupt("in a worker")

    with pytest.raises(RaisedBaseException, match="KeyboardInterrupt: in a worker"):
        await run_sync(job, {})
    assert await run_sync(lambda: "still serving", {}) == "still serving"


async def test_a_blocked_job_does_not_hold_the_others() -> None:
    release = threading.Event()

    def blocked() -> str:
        assert release.wait(10)
        return "released"

    async with anyio.create_task_group() as tg:
        results: list[str] = []

        async def run_blocked() -> None:
            results.append(await run_sync(blocked, {}))

        tg.start_soon(run_blocked)
        with anyio.fail_after(5):
            for i in range(20):  # each gets a thread (or a free one) while one is stuck
                assert await run_sync(lambda i=i: i, {}) == i
        release.set()
    assert results == ["released"]


def _negated(x: int) -> int:
    return -x


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the pool exists on asyncio only
async def test_jobs_the_workers_get_through_start_no_more_threads(anyio_backend: str) -> None:
    # 64 callers at once keep the queue full for as long as the test runs; the workers
    # finish job after job, so no thread is needed beyond the first few. Jobs waiting was
    # once taken for workers being stuck: a thread per 2 ms, 40 threads taking the GIL
    # from each other (a fifth fewer calls per second over stdio, 64 in flight).
    loop = asyncio.get_running_loop()
    done = 0

    async def caller() -> None:
        nonlocal done
        for _ in range(400):
            assert await run_sync(_negated, {"x": -1}) == 1
            done += 1

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for _ in range(64):
                tg.start_soon(caller)
    assert done == 64 * 400  # ~0.2 s: the old rule had started its 40 threads by then
    assert _threads._pools[loop].threads <= 4


async def test_many_jobs_at_once_all_finish_and_leave_the_default_limiter_alone() -> None:
    gate = threading.Barrier(8, timeout=10)
    default = anyio.to_thread.current_default_thread_limiter()

    def job(i: int) -> int:
        gate.wait()  # 8 jobs must be in threads at the same time
        return i

    out: list[int] = []
    async with anyio.create_task_group() as tg:

        async def one(i: int) -> None:
            out.append(await run_sync(job, {"i": i}))

        for i in range(8):
            tg.start_soon(one, i)
    assert sorted(out) == list(range(8))
    assert MAX_THREADS >= 8
    assert default.borrowed_tokens == 0  # our workers never take the program's tokens


async def test_a_cancelled_caller_moves_on_and_the_pool_keeps_serving() -> None:
    release = threading.Event()

    def slow() -> str:
        release.wait(10)
        return "late"

    with anyio.move_on_after(0.1) as scope:
        await run_sync(slow, {})
    assert scope.cancelled_caught
    release.set()
    assert await run_sync(lambda: "next", {}) == "next"


# ------------------------------------------------------------ on the loop when asked


def _where() -> tuple[int, str]:
    return threading.get_ident(), WHO.get()


async def test_inline_runs_on_the_loop_with_a_copy_of_the_callers_context() -> None:
    WHO.set("caller")
    loop_thread = threading.get_ident()
    runner = SyncRunner(_where, inline=True)
    assert runner.inline and await runner({}) == (loop_thread, "caller")

    def sets_who() -> str:
        WHO.set("inside")
        return WHO.get()

    assert await SyncRunner(sets_who, inline=True)({}) == "inside"
    assert WHO.get() == "caller"  # a copy of the context, as in a thread


async def test_without_inline_every_call_runs_in_a_thread() -> None:
    loop_thread = threading.get_ident()
    runner = SyncRunner(_where, inline=False)
    for _ in range(50):  # nothing is learnt from calls, however many and short
        assert (await runner({}))[0] != loop_thread
    assert not runner.inline


async def test_an_inline_failure_is_the_calls_failure() -> None:
    fail = [False]

    def maybe_fails() -> str:
        if fail[0]:
            raise ValueError("bad input")
        return "ok"

    runner = SyncRunner(maybe_fails, inline=True)
    assert await runner({}) == "ok"
    fail[0] = True
    with pytest.raises(ValueError, match="bad input"):
        await runner({})
    fail[0] = False
    assert await runner({}) == "ok" and runner.inline


async def test_a_function_naming_from_thread_cannot_be_inline() -> None:
    async def on_loop() -> int:
        return 1

    def calls_back() -> int:
        anyio.from_thread.run(on_loop)
        return threading.get_ident()

    with pytest.raises(TypeError, match="needs a worker thread"):
        SyncRunner(calls_back, inline=True)
    assert await SyncRunner(calls_back, inline=False)({}) != threading.get_ident()
    assert _threads.names_from_thread(functools.partial(calls_back))
    assert not _threads.names_from_thread(_where)


async def test_a_base_exception_leaves_any_caller_as_the_calls_failure() -> None:
    """Raised on the loop (async, inline) or in a thread: a RaisedBaseException naming it;
    a cancellation goes through as itself."""

    class Boom(BaseException):
        pass

    async def async_boom() -> None:
        raise Boom("async")

    def sync_boom() -> None:
        raise GeneratorExit("sync")

    for call, text in (
        (_threads.make_caller(async_boom), "Boom: async"),
        (_threads.make_caller(sync_boom), "GeneratorExit: sync"),
        (_threads.make_caller(sync_boom, inline=True), "GeneratorExit: sync"),
    ):
        with pytest.raises(RaisedBaseException, match=text) as caught:
            await call({})
        assert isinstance(caught.value.raised, (Boom, GeneratorExit))

    async def cancelled_inside() -> None:
        with anyio.CancelScope() as scope:
            scope.cancel()
            await _threads.make_caller(anyio.sleep_forever)({})
        raise AssertionError("the scope's cancellation went through")

    with pytest.raises(AssertionError, match="went through"):
        await cancelled_inside()

    class Asks(_threads.Unwind):
        """The server's own way to end a function on purpose (InputRequired is one)."""

    def asks() -> None:
        raise Asks

    for unwinding in (_threads.make_caller(asks), _threads.make_caller(asks, inline=True)):
        with pytest.raises(Asks):
            await unwinding({})


def test_no_worker_thread_starts_once_the_loop_shuts_down() -> None:
    # The loop's shutdown cancels the tasks hosting the pool's threads; each leaves a note
    # in the job queue telling its thread to leave. That note once looked like a job
    # waiting behind a busy worker: the spawn check started one more thread while the loop
    # closed, nobody cancelled its host, and the process waited IDLE_TIMEOUT (10 s) to
    # exit (seen under load as a stdio server slow to exit at EOF).
    release = threading.Event()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        started = threading.Event()

        def hold() -> None:
            started.set()
            assert release.wait(10)

        blocked = asyncio.ensure_future(run_sync(hold, {}))
        assert await loop.run_in_executor(None, started.wait, 10)  # the only worker holds
        pool = _threads._pools[loop]
        hosts = _hosts()
        assert pool.threads == 1 and len(hosts) == 1
        for host in hosts:  # what the loop's shutdown does to them
            host.cancel()
        await asyncio.wait(hosts, timeout=10)
        assert pool.closing and pool.jobs.qsize() == 1  # the leave note
        pool._check_waiting()  # the spawn check, due while the loop closes
        queued = pool.submit(contextvars.copy_context(), int, {})  # a late job
        assert _hosts() == set() and pool.threads == 1  # no thread started
        release.set()
        await asyncio.wait_for(blocked, 10)  # the held job still finishes
        queued.cancel()

    asyncio.run(main())
    assert release.is_set()


def _hosts() -> set[asyncio.Task[Any]]:
    """The tasks hosting the pool's worker threads, on the running loop."""
    return {t for t in asyncio.all_tasks() if t.get_coro().__qualname__ == "_Pool._host"}
