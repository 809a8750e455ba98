"""Contract tests of the worker-thread fast path (``run_sync`` of the server's thread module).

Whatever the backend (our own pool on asyncio, anyio's ``to_thread`` on trio), a sync
function runs off the event loop, sees the caller's context variables, can call back into
the loop with ``anyio.from_thread``, and fails as a function call fails, never as the process.
"""

from __future__ import annotations

import contextvars
import threading

import anyio
import anyio.from_thread
import anyio.to_thread
import pytest

from mcpkit._server._threads import MAX_THREADS, RaisedInWorker, run_sync

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
