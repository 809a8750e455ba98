"""Small helpers shared by the server modules: wire conversion, calling user functions."""

from __future__ import annotations

import base64
import dataclasses
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from pydantic import BaseModel

from ..types._base import MCPModel


def to_wire(obj: Any) -> Any:
    """The JSON-ready form of a protocol model (or a dict, passed through)."""
    if isinstance(obj, MCPModel):
        return obj.to_wire()
    if isinstance(obj, BaseModel):
        return obj.model_dump(by_alias=True, exclude_none=True, mode="json")
    return obj


def jsonable(value: Any) -> Any:
    """Plain JSON data for a return value: models, dataclasses and containers of them."""
    if isinstance(value, BaseModel):
        return value.model_dump(
            by_alias=True, mode="json", exclude_none=isinstance(value, MCPModel)
        )
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return orjson.loads(orjson.dumps(value, default=_default))
    if isinstance(value, (dict, list, tuple)):
        return orjson.loads(orjson.dumps(value, default=_default))
    return value


def _default(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(by_alias=True, mode="json")
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    if isinstance(obj, bytes):
        return base64.b64encode(obj).decode("ascii")
    return str(obj)


def dumps_text(value: Any) -> str:
    """JSON text of a value, for the text fallback of structured results."""
    return orjson.dumps(value, default=_default).decode()


def is_async_callable(fn: Any) -> bool:
    """True for ``async def`` functions (also behind ``functools.partial`` or ``__call__``)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004
    return call is not None and not inspect.isfunction(fn) and inspect.iscoroutinefunction(call)


def make_caller(fn: Callable[..., Any]) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """A coroutine function calling ``fn(**kwargs)``: on the loop when async, else in a worker thread.

    Sync functions go to a worker thread so that a slow or blocking tool never stalls the
    connection (other requests, cancellation, pings keep flowing).
    """
    if is_async_callable(fn):

        async def call_async(kwargs: dict[str, Any]) -> Any:
            return await fn(**kwargs)

        return call_async

    from ._threads import run_sync

    async def call_sync(kwargs: dict[str, Any]) -> Any:
        result = await run_sync(fn, kwargs)
        if inspect.isawaitable(result):
            # A sync function returning an awaitable (e.g. a lambda around a coroutine).
            result = await result
        return result

    return call_sync
