"""Work that ends without waiting, run in its caller's own step: no task of its own.

A task costs a request more than its creation: the loop schedules its first step for a
later turn, and the response goes out there. Measured on a sequential 2026-07-28
``tools/call`` over our HTTP protocol (docs/performance.md): ~6% of the whole round trip.
CPython 3.12 can start a task eagerly; 3.11 cannot, so the coroutine is stepped by hand
here, in a context of its own (as a task would have). If it ended, there never was a task.

Only work marked :class:`AtOnce` is run so: work its maker knows never waits. The first
step runs outside any task, so it must not ask for one (``asyncio.current_task()`` is None
there: no anyio cancel scope, no sniffio, no Context of a tool). Should such work wait after
all, nothing is lost: :func:`drive` returns the rest, which a task then runs to its end
(with the same context), only later.
"""

from __future__ import annotations

import contextvars
from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ["AtOnce", "Rest", "drive"]


class AtOnce:
    """A coroutine known to end without waiting (its every ``await`` completes at once),
    which its caller may :func:`drive` in its own step rather than start as a task."""

    __slots__ = ("coro",)

    def __init__(self, coro: Coroutine[Any, Any, None]) -> None:
        self.coro = coro


class Rest:
    """What remains of work that waited after all: awaited in a task, it goes on where the
    first step stopped, in the first step's context, and ends as the work would have; a
    cancellation of that task reaches it as it would have."""

    __slots__ = ("context", "coro", "yielded")

    def __init__(
        self, coro: Coroutine[Any, Any, None], yielded: Any, context: contextvars.Context
    ) -> None:
        self.coro = coro
        self.yielded = yielded
        self.context = context

    def __await__(self) -> Generator[Any, Any, None]:
        # What `await coro` does, from the point the first step reached: whatever the
        # coroutine waits on goes to the task, whatever the task sends or throws goes back.
        coro, pending, run = self.coro, self.yielded, self.context.run
        self.coro = self.yielded = None  # type: ignore[assignment]  # awaited once
        while True:
            try:
                sent = yield pending
            except GeneratorExit:  # noqa: PERF203  (one turn per wait of the work: not hot)
                coro.close()
                raise
            except BaseException as e:
                try:
                    pending = run(coro.throw, e)
                except StopIteration:
                    return
            else:
                try:
                    pending = run(coro.send, sent)
                except StopIteration:
                    return


def drive(work: AtOnce) -> Rest | None:
    """Run ``work`` now, in a copy of the current context: None once it ended, or the
    :class:`Rest` to await in a task if it waited after all. What it raises, this raises.

    Example::

        rest = drive(AtOnce(answer(request)))
        if rest is not None:  # it waited: a task finishes it (in the first step's context)
            loop.create_task(finish(rest))
    """
    context = contextvars.copy_context()
    coro = work.coro
    try:
        yielded = context.run(coro.send, None)
    except StopIteration:
        return None
    return Rest(coro, yielded, context)
