"""Turning what the user gave ``Client`` (a command, a URL, a server object) into a transport."""

from __future__ import annotations

import inspect
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

from .._transports._base import Transport
from .._transports._memory import memory_pair
from .._transports._stdio import spawn_stdio


def is_url(target: object) -> bool:
    """True for an ``http://`` or ``https://`` URL."""
    return isinstance(target, str) and target.lower().startswith(("http://", "https://"))


def is_transport(target: object) -> bool:
    """True for an object that already is a transport (``send``/``receive``/``aclose``)."""
    return all(callable(getattr(target, name, None)) for name in ("send", "receive", "aclose"))


def command_argv(target: str | Sequence[str | os.PathLike[str]]) -> list[str]:
    """The argv of a command target: a string is split like a shell would, a list is kept.

    A first word ending in ``.py`` runs with this Python, so ``Client("server.py")`` works.
    """
    argv = shlex.split(target) if isinstance(target, str) else [os.fspath(a) for a in target]
    if not argv:
        raise ValueError("empty command: give the server's command line, a URL or a server object")
    if argv[0].endswith(".py") and not os.access(argv[0], os.X_OK):
        argv = [sys.executable, *argv]
    return argv


def describe(target: object) -> str:
    """A short human description of a target, for error messages."""
    if isinstance(target, str):
        return target
    if isinstance(target, (list, tuple)):
        return shlex.join(str(a) for a in target)
    return type(target).__name__


async def open_target(
    stack: AsyncExitStack,
    target: object,
    *,
    env: Mapping[str, str] | None,
    inherit_env: bool,
    cwd: str | os.PathLike[str] | None,
    on_stderr: Callable[[str], None] | None,
    headers: Mapping[str, str] | None,
    auth: Any,
    timeout: float | None,
) -> Transport:
    """Open the transport for ``target``; everything it starts is closed by ``stack``."""
    if is_url(target):
        assert isinstance(target, str)
        from .._http import open_http

        kw: dict[str, Any] = {"headers": dict(headers) if headers else None, "auth": auth}
        if timeout is not None:
            kw["timeout"] = timeout
        transport: Transport = await stack.enter_async_context(open_http(target, **kw))
        return transport
    if isinstance(target, (str, Path)) or (
        isinstance(target, (list, tuple)) and all(isinstance(a, (str, Path)) for a in target)
    ):
        # A Path is one program (spaces and all), never a command line to split.
        argv = command_argv([target] if isinstance(target, Path) else target)
        return await stack.enter_async_context(
            spawn_stdio(argv, env=env, inherit_env=inherit_env, cwd=cwd, on_stderr=on_stderr)
        )
    if callable(getattr(target, "create_session", None)):
        return await _in_memory(stack, target)
    if is_transport(target):
        t: Transport = target  # type: ignore[assignment]
        stack.push_async_callback(t.aclose)
        return t
    raise TypeError(
        f"Client target must be a command (string or argv list), an http(s) URL, a server object "
        f"with create_session(), or a transport; got {type(target).__name__}"
    )


async def _in_memory(stack: AsyncExitStack, server: Any) -> Transport:
    client_end, server_end = memory_pair()
    session = server.create_session(server_end)
    if inspect.isawaitable(session):
        session = await session
    run = getattr(session, "run", None)
    if not callable(run):
        raise TypeError(
            f"{type(server).__name__}.create_session() must return a session with run()"
        )
    tg = await stack.enter_async_context(anyio.create_task_group())

    async def serve() -> None:
        try:
            await run()
        finally:
            with anyio.CancelScope(shield=True):
                await server_end.aclose()

    tg.start_soon(serve)

    async def stop() -> None:
        # The client end is closed first (the session's exit); give the server a moment to
        # notice, then stop whatever it still runs so closing never hangs.
        with anyio.move_on_after(2):
            await client_end.aclose()
        tg.cancel_scope.cancel()

    stack.push_async_callback(stop)
    return client_end
