"""Contract tests of the worker-thread fast path (``run_sync`` and ``SyncRunner`` of the
server's thread module).

Whatever the backend (our own pool on asyncio, anyio's ``to_thread`` on trio), a sync
function runs off the event loop, sees the caller's context variables, can call back into
the loop with ``anyio.from_thread``, and fails as a function call fails, never as the process.
A function that has shown itself short runs inline instead, with the same context rules, and
goes back to threads for good once it runs long.
"""

from __future__ import annotations

import contextvars
import functools
import threading

import anyio
import anyio.from_thread
import anyio.to_thread
import pytest
from tests._clock import WorkClock, use_work_clock
from tests.server._harness import connect

from mcpkit import Context, Server
from mcpkit._server import _threads
from mcpkit._server._threads import MAX_THREADS, RaisedInWorker, SyncRunner, run_sync

pytestmark = pytest.mark.anyio
WHO = contextvars.ContextVar("WHO", default="nobody")


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> WorkClock:
    """What is short is the test's to say, not the machine's load."""
    return use_work_clock(monkeypatch)


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

    with pytest.raises(RaisedInWorker, match="KeyboardInterrupt raised in a worker thread"):
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


# ------------------------------------------------------------ short functions run inline


def _where() -> tuple[int, str]:
    return threading.get_ident(), WHO.get()


async def test_a_short_function_runs_inline_after_its_short_runs_with_the_callers_context() -> None:
    WHO.set("caller")
    loop_thread = threading.get_ident()
    runner = SyncRunner(_where, inline=True)
    threads = [(await runner({}))[0] for _ in range(_threads.INLINE_AFTER - 1)]
    assert loop_thread not in threads and not runner.inline
    assert (await runner({}))[0] != loop_thread and runner.inline  # the last in a thread
    thread, who = await runner({})
    assert runner.inline and thread == loop_thread and who == "caller"

    def sets_who() -> str:
        WHO.set("inside")
        return WHO.get()

    setter = SyncRunner(sets_who, inline=True)
    for _ in range(_threads.INLINE_AFTER + 2):
        assert await setter({}) == "inside"
    assert setter.inline and WHO.get() == "caller"  # a copy of the context, as in a thread


async def test_a_function_running_long_once_inline_goes_back_to_threads_for_good(
    clock: WorkClock,
) -> None:
    loop_thread = threading.get_ident()
    slow = [False]

    def sometimes_slow() -> int:
        if slow[0]:
            clock.spend(_threads.INLINE_LIMIT * 2)  # the function's own work, not a wait
        return threading.get_ident()

    runner = SyncRunner(sometimes_slow, inline=True)
    for _ in range(_threads.INLINE_AFTER):
        await runner({})
    assert runner.inline
    slow[0] = True
    assert await runner({}) == loop_thread  # the one slow call held the loop...
    assert not runner.inline
    slow[0] = False
    for _ in range(3 * _threads.INLINE_AFTER):  # ...and none after it does
        assert await runner({}) != loop_thread
    assert not runner.inline


async def test_a_long_run_in_a_thread_restarts_the_count(clock: WorkClock) -> None:
    calls = [0]

    def slow_every_fifth() -> None:
        calls[0] += 1
        if calls[0] % 5 == 0:
            clock.spend(_threads.INLINE_UNDER * 5)

    runner = SyncRunner(slow_every_fifth, inline=True)
    for _ in range(4 * _threads.INLINE_AFTER):
        await runner({})
    assert not runner.inline  # never INLINE_AFTER short runs in a row


async def test_an_inline_failure_is_the_calls_failure() -> None:
    fail = [False]

    def maybe_fails() -> str:
        if fail[0]:
            raise ValueError("bad input")
        return "ok"

    runner = SyncRunner(maybe_fails, inline=True)
    for _ in range(_threads.INLINE_AFTER + 1):
        assert await runner({}) == "ok"
    assert runner.inline
    fail[0] = True
    with pytest.raises(ValueError, match="bad input"):
        await runner({})
    fail[0] = False
    assert await runner({}) == "ok" and runner.inline


async def test_inline_false_keeps_every_call_in_a_thread() -> None:
    loop_thread = threading.get_ident()
    runner = SyncRunner(_where, inline=False)
    for _ in range(3 * _threads.INLINE_AFTER):
        assert (await runner({}))[0] != loop_thread
    assert not runner.inline


async def test_a_server_runs_short_sync_tools_inline_but_never_one_taking_the_context() -> None:
    server = Server("inline")

    @server.tool()
    def plain() -> str:
        """Where it runs."""
        return str(threading.get_ident())

    @server.tool()
    def with_ctx(ctx: Context) -> str:
        """Where it runs, and it may call back into the loop."""
        anyio.from_thread.run(ctx.info, "from a sync tool")
        return str(threading.get_ident())

    loop_thread = str(threading.get_ident())
    async with connect(server) as c:
        plain_threads = [
            (await c.tool("plain"))["content"][0]["text"] for _ in range(2 * _threads.INLINE_AFTER)
        ]
        ctx_threads = [
            (await c.tool("with_ctx"))["content"][0]["text"]
            for _ in range(2 * _threads.INLINE_AFTER)
        ]
    assert plain_threads[0] != loop_thread and plain_threads[-1] == loop_thread
    assert loop_thread not in ctx_threads


async def test_a_function_naming_from_thread_is_never_inlined() -> None:
    loop_thread = threading.get_ident()

    async def on_loop() -> int:
        return 1

    def calls_back() -> int:
        anyio.from_thread.run(on_loop)
        return threading.get_ident()

    runner = SyncRunner(calls_back, inline=True)
    for _ in range(3 * _threads.INLINE_AFTER):
        assert await runner({}) != loop_thread
    assert not runner.inline
    assert _threads.names_from_thread(functools.partial(calls_back))
    assert not _threads.names_from_thread(_where)
