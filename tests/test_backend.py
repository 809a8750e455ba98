"""Contract of the one module that forks on the event loop (``mcpkit._backend``)."""

from __future__ import annotations

import ast
import asyncio
import math
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from anyio.abc import TaskGroup
from tests.conftest import BACKEND

from mcpkit._backend import (
    AnyioHandlerTasks,
    AsyncioHandlerTasks,
    HandlerTasks,
    asyncio_loop,
    handler_tasks,
    start_detached,
)

SRC = Path(__file__).resolve().parents[1] / "src" / "mcpkit"


async def _on(backend: str) -> tuple[object, object]:
    loop = asyncio_loop()
    running = asyncio.get_running_loop() if backend == "asyncio" else None
    return loop, running


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_asyncio_loop_is_the_running_loop_on_asyncio_and_none_elsewhere(backend: str) -> None:
    loop, running = anyio.run(_on, backend, backend=backend)
    assert loop is running
    assert (loop is None) == (backend == "trio")


def test_a_detached_task_outlives_its_starter_on_asyncio() -> None:
    async def main() -> list[str]:
        seen: list[str] = []
        done = anyio.Event()

        async def later() -> None:
            await anyio.lowlevel.checkpoint()
            seen.append("ran")
            done.set()

        async def starter() -> None:
            start_detached(later, why="unused")

        await starter()  # returns at once; the task goes on
        with anyio.fail_after(5):
            await done.wait()
        return seen

    assert anyio.run(main, backend="asyncio") == ["ran"]


def test_on_trio_a_detached_task_is_refused_with_the_reason() -> None:
    async def main() -> None:
        async def never() -> None:  # pragma: no cover
            pass

        start_detached(never, why="enter the app's lifespan first")

    with pytest.raises(RuntimeError, match="enter the app's lifespan first"):
        anyio.run(main, backend="trio")


def test_no_other_module_asks_which_loop_runs_it() -> None:
    """The fork lives here: elsewhere, no sniffio and no asyncio.get_running_loop()."""
    askers = []
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "_backend" or (path.parent.name, path.name) == ("_app", "_serve.py"):
            # uvicorn's runner (and the head timeout it wraps round uvicorn's protocol):
            # uvicorn is asyncio only
            continue
        if _asks_the_loop(ast.parse(path.read_text())):
            askers.append(str(path.relative_to(SRC)))
    assert askers == []


def _asks_the_loop(tree: ast.AST) -> bool:
    """Imports sniffio, or calls something named get_running_loop (code, not comments)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "sniffio" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "sniffio":
            return True
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name == "get_running_loop":
                return True
    return False


def test_the_engine_has_no_backend_fork_of_its_own() -> None:
    """Its handler tasks go through HandlerTasks: the engine imports no asyncio at all."""
    tree = ast.parse((SRC / "_jsonrpc.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m for m in imported if m.split(".")[0] in ("asyncio", "trio", "sniffio")}


# ---------------------------------------------------------------------- handler tasks
#
# The engine serves each request in a handler task from handler_tasks(): plain asyncio tasks
# on asyncio (its fast path), child tasks with a cancel scope each elsewhere. The contract
# below holds for both implementations. Each test runs on the suite's backend
# (MCPKIT_TEST_BACKEND) with handler_tasks()'s choice, and on asyncio with the anyio
# implementation too (on trio that is handler_tasks()'s choice already).


@pytest.fixture(
    params=["for the backend", "anyio"] if BACKEND == "asyncio" else ["for the backend"]
)
def impl(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _tasks_for(impl: str, tg: TaskGroup) -> HandlerTasks[Any]:
    if impl == "anyio":
        return AnyioHandlerTasks(tg)
    tasks = handler_tasks(tg, name="test")
    assert isinstance(tasks, AsyncioHandlerTasks if BACKEND == "asyncio" else AnyioHandlerTasks)
    return tasks


Work = Callable[[], Coroutine[Any, Any, object]]


def _eager(tasks: HandlerTasks[Any]) -> bool:
    """Whether ``tasks`` start eagerly: asyncio's, on Python 3.12+."""
    return isinstance(tasks, AsyncioHandlerTasks) and sys.version_info >= (3, 12)


class Handlers:
    """Runs handlers the way the engine does: a guarded call, then the code after it.

    ``log`` records each handler's outcome: ``(key, value)`` when its task went on past the
    guarded call (``value`` is the call's result, None when a cancellation of this handler
    alone ended the call), ``(key, "ended")`` when a cancellation ended the whole task.
    ``started[key]`` is set when the handler begins, ``finished[key]`` when its task ends.
    """

    def __init__(self, tasks: HandlerTasks[Any]) -> None:
        self.tasks = tasks
        self.handles: dict[str, Any] = {}
        self.cancelled: set[str] = set()
        self.closing = False
        self.log: list[tuple[str, object]] = []
        self.started: dict[str, anyio.Event] = {}
        self.finished: dict[str, anyio.Event] = {}

    def start(self, key: str, work: Work) -> None:
        self.started[key] = anyio.Event()
        self.finished[key] = anyio.Event()
        handle = self.tasks.start(self._serve, key, work)
        assert self.handles.setdefault(key, handle) is handle  # what an eager task adopted

    def cancel(self, key: str) -> None:
        self.cancelled.add(key)
        self.tasks.cancel(self.handles[key])

    def cancel_all(self) -> None:
        self.closing = True
        self.tasks.cancel_all()

    async def _serve(self, key: str, work: Work) -> None:
        try:
            # Stored when start() returned, unless the task runs its first step in start()
            # itself (an eager task, asyncio on Python 3.12+): then it adopts itself, as the
            # engine's handlers do.
            handle = self.handles.get(key)
            if handle is None:
                handle = self.handles[key] = self.tasks.adopt()
            self.started[key].set()
            try:
                result = await self.tasks.guard(handle, work())
            except BaseException as exc:
                cancelled, closing = key in self.cancelled, self.closing
                if not self.tasks.absorbs(handle, exc, cancelled=cancelled, closing=closing):
                    if isinstance(exc, anyio.get_cancelled_exc_class()):
                        self.log.append((key, "ended"))
                    raise
                result = None
            self.log.append((key, result))
        finally:
            self.finished[key].set()


async def _blocked() -> object:
    await anyio.sleep_forever()
    return "unreachable"  # pragma: no cover


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    inner = getattr(exc, "exceptions", None)
    return [exc] if inner is None else [leaf for e in inner for leaf in _leaves(e)]


@pytest.mark.anyio
async def test_handlers_start_later_and_run_concurrently(impl: str) -> None:
    gate = anyio.Event()

    async def waits_for_gate() -> object:
        await gate.wait()
        return "first"

    async def opens_gate() -> object:
        gate.set()
        return "second"

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            handlers = Handlers(_tasks_for(impl, tg))
            handlers.start("a", waits_for_gate)  # would hang unless "b" runs meanwhile
            handlers.start("b", opens_gate)
            # An eager task (asyncio, 3.12+) ran its first step in start(); any other one
            # runs after start() returned.
            assert handlers.started["a"].is_set() is _eager(handlers.tasks)
            await handlers.finished["a"].wait()
    assert sorted(handlers.log) == [("a", "first"), ("b", "second")]


@pytest.mark.anyio
async def test_a_handler_that_ends_without_waiting_is_served_and_not_kept(impl: str) -> None:
    """An eager task that ends in its first step (asyncio, 3.12+) has run by the time
    start() returns, as its own current task, and is not kept; elsewhere it runs next."""
    ran_in: list[object] = []

    async def at_once() -> object:
        ran_in.append(asyncio.current_task() if BACKEND == "asyncio" else None)
        return "now"

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tasks = _tasks_for(impl, tg)
            handlers = Handlers(tasks)
            handlers.start("a", at_once)
            if _eager(tasks):
                assert handlers.finished["a"].is_set()
                assert ran_in == [handlers.handles["a"]]  # its own task, not the starter's
                assert not tasks._tasks  # type: ignore[attr-defined]
            await handlers.finished["a"].wait()
    assert handlers.log == [("a", "now")]


@pytest.mark.anyio
async def test_cancelling_one_handler_ends_its_guarded_call_only(impl: str) -> None:
    release = anyio.Event()

    async def until_released() -> object:
        await release.wait()
        return "released"

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            handlers = Handlers(_tasks_for(impl, tg))
            handlers.start("victim", _blocked)
            handlers.start("bystander", until_released)
            await handlers.started["victim"].wait()
            await handlers.started["bystander"].wait()
            handlers.cancel("victim")
            await handlers.finished["victim"].wait()
            # The victim's task went on after its call; the bystander still runs.
            assert handlers.log == [("victim", None)]
            assert not handlers.finished["bystander"].is_set()
            release.set()
            await handlers.finished["bystander"].wait()
    assert handlers.log == [("victim", None), ("bystander", "released")]


@pytest.mark.anyio
async def test_a_handler_run_by_the_calling_task_is_cancelled_alone(impl: str) -> None:
    """adopt(): the handler runs in the caller's task (the engine's inline serving); its
    cancellation ends the guarded call, and the caller goes on uncancelled."""
    outcome: list[object] = []

    async def caller(tasks: HandlerTasks[Any], started: anyio.Event) -> None:
        handle = tasks.adopt()

        async def work() -> object:
            started.set()
            await anyio.sleep_forever()
            return "unreachable"  # pragma: no cover

        async def cancel_when_started() -> None:
            await started.wait()
            tasks.cancel(handle)

        async with anyio.create_task_group() as inner:
            inner.start_soon(cancel_when_started)
            try:
                outcome.append(await tasks.guard(handle, work()))
            except BaseException as exc:
                assert tasks.absorbs(handle, exc, cancelled=True, closing=False)
                outcome.append("absorbed")
                if isinstance(handle, asyncio.Task) and hasattr(handle, "cancelling"):
                    # The task's count of cancellations is back to none (anyio's own cancel
                    # scopes in that task rely on it).
                    assert handle.cancelling() == 0
        await anyio.lowlevel.checkpoint()  # a cancellation still pending would raise here
        outcome.append("went on")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(caller, _tasks_for(impl, tg), anyio.Event())
    expected = "absorbed" if BACKEND == "asyncio" and impl != "anyio" else None
    assert outcome == [expected, "went on"]


@pytest.mark.anyio
async def test_cancel_all_ends_every_handler_task_and_join_waits_for_them(impl: str) -> None:
    async def outside_the_guard() -> object:
        return "done"

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            handlers = Handlers(_tasks_for(impl, tg))
            handlers.start("a", _blocked)
            handlers.start("b", _blocked)
            # Cancelled alone and by the shutdown as well: the shutdown wins.
            handlers.start("c", _blocked)
            for key in "abc":
                await handlers.started[key].wait()
            handlers.cancel("c")
            handlers.cancel_all()
            await handlers.tasks.join()
            assert all(e.is_set() for e in handlers.finished.values())
    assert sorted(handlers.log) == [("a", "ended"), ("b", "ended"), ("c", "ended")]


@pytest.mark.anyio
async def test_while_the_owner_closes_a_cancelled_handler_is_not_absorbed(impl: str) -> None:
    """``closing``: a cancellation seen then may be the shutdown's, so on asyncio it ends the
    whole task. The anyio implementation's scope has taken its own cancellation already."""
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            handlers = Handlers(_tasks_for(impl, tg))
            handlers.start("a", _blocked)
            await handlers.started["a"].wait()
            handlers.closing = True
            handlers.cancel("a")
            await handlers.finished["a"].wait()
    plain_asyncio = BACKEND == "asyncio" and impl != "anyio"
    assert handlers.log == [("a", "ended" if plain_asyncio else None)]


@pytest.mark.anyio
async def test_join_waits_for_every_handler_even_when_its_caller_is_cancelled(
    impl: str,
) -> None:
    order: list[str] = []
    release = anyio.Event()

    def until_released(key: str) -> Work:
        async def work() -> object:
            await release.wait()
            order.append(key)
            return key

        return work

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            handlers = Handlers(_tasks_for(impl, tg))
            handlers.start("a", until_released("a"))
            handlers.start("b", until_released("b"))
            joining = anyio.Event()

            async def joiner(scope: anyio.CancelScope) -> None:
                with scope:
                    joining.set()
                    await handlers.tasks.join()
                    order.append("joined")

            scope = anyio.CancelScope()
            tg.start_soon(joiner, scope)
            await joining.wait()
            scope.cancel()  # join is shielded: it still waits for both handlers
            release.set()
    assert sorted(order[:2]) == ["a", "b"] and order[2:] == ["joined"]


@pytest.mark.anyio
async def test_join_with_nothing_started_returns_at_once(impl: str) -> None:
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tasks = _tasks_for(impl, tg)
            await tasks.join()
            handlers = Handlers(tasks)
            handlers.start("a", _blocked)
            await handlers.started["a"].wait()
            handlers.cancel_all()
            await tasks.join()
            await tasks.join()  # and again, once they are gone


@pytest.mark.anyio
async def test_handlers_cancelled_before_their_first_step_never_run_and_join_returns(
    impl: str,
) -> None:
    """On asyncio a task cancelled before it ever ran never reaches its own end code: join
    must not wait for it, nor the set of tasks keep it (one alone, then all at shutdown)."""
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tasks = _tasks_for(impl, tg)
            handlers = Handlers(tasks)
            handlers.start("a", _blocked)
            handlers.cancel("a")  # in the same step: its task has not run yet
            handlers.start("b", _blocked)
            handlers.start("c", _blocked)
            handlers.cancel_all()
            await tasks.join()
            await tasks.join()  # and again
    # Elsewhere a handler's task runs until its guarded call, where the cancellation waits.
    assert all(handlers.finished[k].is_set() for k, e in handlers.started.items() if e.is_set())
    if _eager(tasks):
        # Each ran its first step in start(), up to its wait: none is cancelled before it.
        assert all(e.is_set() for e in handlers.started.values())
    elif isinstance(tasks, AsyncioHandlerTasks):
        assert not any(e.is_set() for e in handlers.started.values())
    if isinstance(tasks, AsyncioHandlerTasks):
        assert not tasks._tasks  # nothing kept alive


@pytest.mark.anyio
async def test_an_exception_escaping_a_handler_task_is_raised_in_the_owners_group(
    impl: str,
) -> None:
    class Crash(Exception):
        pass

    async def crash() -> None:
        raise Crash("in the task, outside any handler's error handling")

    raised: list[BaseException] = []
    with anyio.fail_after(5):
        try:
            async with anyio.create_task_group() as tg:
                tasks = _tasks_for(impl, tg)
                tasks.start(crash)
                await anyio.sleep_forever()  # ended by the group's failure
        except BaseException as exc:
            raised = _leaves(exc)
    assert [type(e) for e in raised] == [Crash]


@pytest.mark.anyio
async def test_an_error_in_the_guarded_call_is_not_absorbed(impl: str) -> None:
    async def fails() -> object:
        raise ValueError("the handler's own error")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tasks = _tasks_for(impl, tg)
            handle = tasks.adopt()
            with pytest.raises(ValueError) as info:
                await tasks.guard(handle, fails())
            assert not tasks.absorbs(handle, info.value, cancelled=False, closing=False)
            assert not tasks.absorbs(handle, info.value, cancelled=True, closing=False)


@pytest.mark.anyio
@pytest.mark.skipif(BACKEND != "asyncio", reason="asyncio's CancelledError; trio has no such case")
async def test_cancelled_error_raised_by_the_handler_itself_is_told_apart() -> None:
    """A handler awaiting a future someone else cancelled raises CancelledError with no
    cancellation pending: absorbed (the caller answers it as the handler's failure), where
    a cancellation would end the task."""

    async def awaits_a_cancelled_future() -> object:
        future = asyncio.get_running_loop().create_future()
        future.cancel()
        return await future

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            handlers = Handlers(_tasks_for("for the backend", tg))
            handlers.start("a", awaits_a_cancelled_future)
            await handlers.finished["a"].wait()
    # Absorbed, though nobody cancelled it. Before 3.11 a task keeps no count of its
    # cancellations: the error is taken for one, and ends the task (HandlerTasks.absorbs).
    told_apart = sys.version_info >= (3, 11)
    assert handlers.log == [("a", None if told_apart else "ended")]


# ---------------------------------------------------------------------- response waiters
#
# What a request waits on (response_waiters()()): asyncio's future and loop timer, anyio's
# event in a cancel scope elsewhere. The same contract for both, each on the suite's backend (the
# asyncio one only where asyncio runs).


def _waiters() -> list[str]:
    return ["for the backend", "anyio"] if BACKEND == "asyncio" else ["for the backend"]


@pytest.fixture(params=_waiters())
def make_waiter(request: pytest.FixtureRequest) -> Any:
    from mcpkit._backend import AnyioResponseWaiter, response_waiters

    if request.param == "anyio":
        return AnyioResponseWaiter
    return lambda: response_waiters()()  # asked on the test's loop, as the engine does


@pytest.mark.anyio
async def test_a_waiter_set_before_or_during_its_wait_returns_true(make_waiter: Any) -> None:
    early = make_waiter()
    early.set()
    with anyio.fail_after(5):
        assert await early.wait(math.inf) is True and early.is_set()
    late = make_waiter()
    async with anyio.create_task_group() as tg:
        got: list[bool] = []

        async def wait() -> None:
            got.append(await late.wait(anyio.current_time() + 30))

        tg.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        assert not late.is_set()
        late.set()
    assert got == [True]


@pytest.mark.anyio
async def test_a_waiter_past_its_deadline_returns_false(make_waiter: Any) -> None:
    waiter = make_waiter()
    with anyio.fail_after(5):
        assert await waiter.wait(anyio.current_time()) is False
    assert not waiter.is_set()


@pytest.mark.anyio
async def test_a_moved_deadline_is_kept(make_waiter: Any) -> None:
    waiter = make_waiter()
    async with anyio.create_task_group() as tg:
        got: list[bool] = []

        async def wait() -> None:
            got.append(await waiter.wait(anyio.current_time() + 0.05))

        tg.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        waiter.move_deadline(anyio.current_time() + 30)  # as a progress report does
        # The first deadline passes (time must: the loop's clock is the one deadlines use)
        # without ending the wait.
        await anyio.sleep(0.2)
        assert got == []
        waiter.set()
    assert got == [True]


@pytest.mark.anyio
async def test_a_cancelled_wait_is_cancelled_and_a_later_set_is_harmless(make_waiter: Any) -> None:
    waiter = make_waiter()
    with anyio.move_on_after(0.01) as scope:
        await waiter.wait(anyio.current_time() + 30)
    assert scope.cancelled_caught and not waiter.is_set()
    waiter.set()  # the response arriving after the caller gave up
    assert waiter.is_set()


@pytest.mark.anyio
async def test_many_waiters_end_in_deadline_order_each_at_its_own(make_waiter: Any) -> None:
    # A later wait with an earlier deadline must still end first, and each ends at (not
    # before) its own.
    now = anyio.current_time()
    offsets = [0.12, 0.03, 0.09, 0.0, 0.06, 0.03]
    ended: list[tuple[int, float]] = []

    async def wait(i: int) -> None:
        assert await make_waiter().wait(now + offsets[i]) is False
        ended.append((i, anyio.current_time() - now))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            for i in range(len(offsets)):
                tg.start_soon(wait, i)
    assert [offsets[i] for i, _ in ended] == sorted(offsets)  # equal deadlines: any order
    assert all(took >= offsets[i] for i, took in ended)


@pytest.mark.anyio
async def test_a_deadline_moved_earlier_ends_the_wait_then(make_waiter: Any) -> None:
    waiter = make_waiter()
    got: list[bool] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def wait() -> None:
                got.append(await waiter.wait(anyio.current_time() + 30))

            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            waiter.move_deadline(anyio.current_time() + 0.01)
    assert got == [False]


@pytest.mark.anyio
async def test_a_wait_ended_leaves_no_timer_that_acts_later(make_waiter: Any) -> None:
    # asyncio: a wait's deadline is a loop timer; once the wait ended (answered, or by its
    # deadline) neither that timer nor a late move of the deadline may touch a later wait.
    waiter = make_waiter()
    waiter.set()
    assert await waiter.wait(anyio.current_time() + 0.01) is True
    waiter.move_deadline(anyio.current_time())  # a progress report after the answer
    timed_out = make_waiter()
    assert await timed_out.wait(anyio.current_time() + 0.01) is False
    timed_out.move_deadline(anyio.current_time() + 30)
    await anyio.sleep(0.05)
    timed_out.set()
    with anyio.fail_after(5):
        assert await timed_out.wait(anyio.current_time() + 0.01) is True


@pytest.mark.anyio
async def test_a_waiters_clock_is_the_one_deadlines_use(make_waiter: Any) -> None:
    # The engine reads its deadlines off the waiter's clock (one backend question less per
    # request): it must be anyio.current_time()'s.
    waiter = make_waiter()
    before = anyio.current_time()
    now = waiter.now()
    assert before <= now <= anyio.current_time()


# ---------------------------------------------------------------------- beside
#
# beside(fn, *args): fn runs beside a block (a client's disconnect watcher) and is cancelled
# when the block ends; asyncio: a plain task, elsewhere a task group.


@pytest.mark.anyio
async def test_a_task_beside_a_block_runs_with_it_and_is_cancelled_at_its_end() -> None:
    from mcpkit._backend import beside

    running, ended = anyio.Event(), anyio.Event()

    async def watcher(tag: str) -> None:
        assert tag == "t"
        running.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.set()

    with anyio.fail_after(5):
        async with beside(watcher, "t"):
            await running.wait()  # it runs while the block does
            assert not ended.is_set()
        await ended.wait()  # and is cancelled once the block is left


@pytest.mark.anyio
async def test_a_task_beside_a_block_can_cancel_the_block() -> None:
    from mcpkit._backend import beside

    async def cancel_soon(scope: anyio.CancelScope) -> None:
        await anyio.lowlevel.checkpoint()
        scope.cancel()

    with anyio.fail_after(5), anyio.CancelScope() as scope:
        async with beside(cancel_soon, scope):
            await anyio.sleep_forever()
    assert scope.cancelled_caught


@pytest.mark.anyio
async def test_what_a_task_beside_a_block_raises_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from mcpkit._backend import beside

    failed = anyio.Event()

    async def broken() -> None:
        failed.set()
        raise RuntimeError("watcher broke")

    with anyio.fail_after(5):
        async with beside(broken):
            await failed.wait()  # set in the same step as the raise, logged right after it
    assert "watcher broke" in caplog.text


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the delay is asyncio's (trio: at once)
@pytest.mark.anyio
async def test_a_delayed_task_beside_a_short_block_never_starts(anyio_backend: str) -> None:
    from mcpkit._backend import beside

    calls: list[str] = []

    async def watcher() -> None:
        calls.append("started")

    async with beside(watcher, after=0.05):
        await anyio.lowlevel.checkpoint()
    await anyio.sleep(0.1)  # past the delay: nothing may start after the block ended
    assert calls == []


@pytest.mark.anyio
async def test_a_delayed_task_beside_a_long_block_starts_and_can_cancel_it() -> None:
    from mcpkit._backend import beside

    async def cancel(scope: anyio.CancelScope) -> None:
        scope.cancel()

    start = anyio.current_time()
    with anyio.fail_after(5), anyio.CancelScope() as scope:
        async with beside(cancel, scope, after=0.05):
            await anyio.sleep_forever()
    assert scope.cancelled_caught
    if BACKEND == "asyncio":
        assert anyio.current_time() - start >= 0.05


# ---------------------------------------------------------------------- fail_after
#
# fail_after(seconds): asyncio.timeout on asyncio (3.11+), anyio.fail_after elsewhere: what
# every POST's body read runs in.


@pytest.mark.anyio
async def test_fail_after_raises_timeout_error_once_its_time_passed() -> None:
    from mcpkit._backend import fail_after

    start = anyio.current_time()
    with anyio.fail_after(5), pytest.raises(TimeoutError):
        async with fail_after(0.02):
            await anyio.sleep(30)  # a body that never comes
    assert anyio.current_time() - start >= 0.02
    async with fail_after(0.02):  # left in time: nothing happens later
        await anyio.lowlevel.checkpoint()
    await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_fail_after_passes_on_a_cancellation_it_did_not_ask_for() -> None:
    from mcpkit._backend import fail_after

    for timeout in (30.0, 0.0):  # 0: its time passes at the same wake-up as the cancel
        with anyio.CancelScope() as outer:
            try:
                async with fail_after(timeout):
                    outer.cancel()
                    await anyio.sleep(30)
            except TimeoutError:
                # Both at one wake-up: the deadline's error may come out first (asyncio's
                # timeout), but the enclosing cancellation is not lost: it comes next.
                assert timeout == 0.0
            await anyio.sleep(30)
            raise AssertionError("the enclosing scope's cancellation was lost")
        assert outer.cancelled_caught
    await anyio.lowlevel.checkpoint()  # and nothing is left pending on this task
