"""Entering and leaving a server's lifespan, once however many transports serve it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import anyio

from ._apps import check_apps

if TYPE_CHECKING:
    from ._server import Server


@contextlib.asynccontextmanager
async def hosting(server: Server) -> AsyncIterator[None]:
    """The body of ``Server.running()``: the lifespan entered by the first user and left
    by the last, and the task group tasks run in held by the outermost frame."""

    server._lifespan_users += 1
    try:
        if server._lifespan_users == 1:
            # Checked once all is registered (a view may come after its tool), before
            # anything is served: the author's error, not a client's.
            check_apps(server)
        if server._lifespan_users == 1 and server.lifespan is not None:
            ready = server._lifespan_ready = anyio.Event()
            try:
                stack = contextlib.AsyncExitStack()
                server.lifespan_state = await stack.enter_async_context(server.lifespan(server))
                server._lifespan_stack = stack
            finally:
                ready.set()
        elif server._lifespan_ready is not None:
            # Another task is entering it right now: serve only once it is ready.
            await server._lifespan_ready.wait()
            if server._lifespan_stack is None and server.lifespan is not None:
                raise RuntimeError("the server's lifespan failed to start")
        if server.tasks_manager._tg is None:
            # Tasks outlive the request (and the session) that created them: they run
            # in a task group held by the outermost serving frame.
            async with server.tasks_manager.host(), mounted(server):
                yield
        else:
            yield
    finally:
        server._lifespan_users -= 1
        if server._lifespan_users == 0:
            server._lifespan_ready = None
            if server._lifespan_stack is not None:
                stack, server._lifespan_stack = server._lifespan_stack, None
                try:
                    with anyio.CancelScope(shield=True):
                        await stack.aclose()
                finally:
                    server.lifespan_state = None


@contextlib.asynccontextmanager
async def mounted(server: Server) -> AsyncIterator[None]:
    """The servers mounted on ``server`` running (lifespans, connections) while it serves.

    Held by the same outermost frame as the task group: entered and left by one task, as
    the task groups of a mounted server and of a remote mount's client require."""
    async with contextlib.AsyncExitStack() as stack:
        for mount in server._mounts:
            await stack.enter_async_context(mount.running())
        yield
