"""The event loop our blocking entry points (``Server.run``, ``mcpkit run``) start.

asyncio, on uvloop when it is installed (the ``[http]`` extra brings it): its loop
iteration, pipe and socket handling are native code, and every message costs several
iterations. ``MCPKIT_UVLOOP=0`` keeps the standard loop. Code that brings its own loop
(``anyio.run``, ``asyncio.run``, a host application) is never affected.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from .. import _env
from ._stdio import fill_closed_std_fds

T = TypeVar("T")


def uvloop_wanted() -> bool:
    """True when uvloop is installed and not turned off with ``MCPKIT_UVLOOP=0``."""
    if (_env.UVLOOP.value() or "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    return importlib.util.find_spec("uvloop") is not None


def run(fn: Callable[[], Awaitable[T]]) -> T:
    """``anyio.run(fn)`` on asyncio, with uvloop when :func:`uvloop_wanted`.

    Closed standard descriptors are filled first: the loop's own descriptors must not land
    on 0 or 1, where the stdio transport would take them for stdin and stdout.
    """
    fill_closed_std_fds()
    return anyio.run(fn, backend="asyncio", backend_options={"use_uvloop": uvloop_wanted()})
