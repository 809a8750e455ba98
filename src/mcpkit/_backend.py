"""The one place that asks which event loop runs us, for the measured asyncio fast paths.

mcpkit is written against anyio and runs on asyncio and trio alike. A few hot paths go
faster when they use asyncio directly (the engine's handler tasks, the stdio pipe readers,
the worker-thread pool), and one thing only asyncio allows (a task that outlives the request
that started it: an HTTP app hosting its sessions without a lifespan). Those places ask here,
and nowhere else, so the fork is in one module with its own contract tests
(``tests/test_backend.py``); everything else is plain anyio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import sniffio

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
