"""Small helpers shared by the server modules: wire conversion, calling user functions."""

from __future__ import annotations

import base64
import dataclasses
import math
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from pydantic import BaseModel
    from typing_extensions import TypeIs

    from ..types._base import MCPModel

# A plain server (scalar parameters, text results) never needs pydantic: leaving it and the
# protocol models unimported saves about a third of the start-up time and of the idle memory.
# A value can only be a pydantic model once pydantic is imported, so these checks look in
# sys.modules instead of importing.


def is_base_model(value: Any) -> TypeIs[BaseModel]:
    """``isinstance(value, pydantic.BaseModel)``, without importing pydantic."""
    main = sys.modules.get("pydantic.main")
    return main is not None and isinstance(value, main.BaseModel)


def is_mcp_model(value: Any) -> TypeIs[MCPModel]:
    """``isinstance(value, MCPModel)`` (a protocol type), without importing the types."""
    base = sys.modules.get("mcpkit.types._base")
    return base is not None and isinstance(value, base.MCPModel)


def to_wire(obj: Any) -> Any:
    """The JSON-ready form of a protocol model (or a dict, passed through)."""
    if is_mcp_model(obj):
        return obj.to_wire()
    if is_base_model(obj):
        return obj.model_dump(by_alias=True, exclude_none=True, mode="json")
    return obj


def jsonable(value: Any) -> Any:
    """Plain JSON data for a return value: models, dataclasses and containers of them."""
    if is_base_model(value):
        return value.model_dump(by_alias=True, mode="json", exclude_none=is_mcp_model(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return orjson.loads(orjson.dumps(value, default=_default))
    if isinstance(value, (dict, list, tuple)):
        return orjson.loads(orjson.dumps(value, default=_default))
    return value


def _default(obj: Any) -> Any:
    if is_base_model(obj):
        return obj.model_dump(by_alias=True, mode="json")
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    if isinstance(obj, bytes):
        return base64.b64encode(obj).decode("ascii")
    return readable_str(obj)


def readable_str(obj: Any) -> str:
    """``str(obj)`` when its class says how to show it (Decimal, Path, ...), else a TypeError.

    The default ``<Thing object at 0x7f...>`` says nothing to a model and leaks a memory
    address: a value that cannot be shown is a failed result, never a successful one.
    """
    cls = type(obj)
    shown_by: Any = (getattr(cls, "__str__", None), getattr(cls, "__repr__", None))
    if shown_by == (object.__str__, object.__repr__):
        raise TypeError(f"a {cls.__qualname__} is not JSON and has no text form")
    return str(obj)


def check_finite(value: Any) -> Any:
    """``value`` itself, or a ValueError if NaN or an infinity hides in it (JSON has neither:
    they would go out as ``null``, a different answer)."""
    if type(value) is float:
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a JSON number")
    elif isinstance(value, dict):
        for v in value.values():
            check_finite(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            check_finite(v)
    return value


def dumps_text(value: Any) -> str:
    """JSON text of a value, for the text fallback of structured results."""
    return orjson.dumps(check_finite(value), default=_default).decode()


def make_caller(
    fn: Callable[..., Any], *, inline: bool = False
) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """A coroutine function calling ``fn(**kwargs)``: ``_threads.make_caller``, where sync
    functions go to worker threads (or the loop, when ``inline``: the author's choice) and
    what a user function raises is kept to its call."""
    from ._threads import make_caller as threads_make_caller

    return threads_make_caller(fn, inline=inline)


def cache_hints(ttl_ms: int | None, scope: str | None) -> dict[str, Any]:
    """The caching hints a registration sets (``ttlMs``, ``cacheScope``), checked."""
    hints: dict[str, Any] = {}
    if ttl_ms is not None:
        if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms < 0:
            raise ValueError(f"cache_ttl_ms must be an integer >= 0, not {ttl_ms!r}")
        hints["ttlMs"] = ttl_ms
    if scope is not None:
        if scope not in ("public", "private"):
            raise ValueError(f"cache_scope must be 'public' or 'private', not {scope!r}")
        hints["cacheScope"] = scope
    return hints


def name_of(fn: Any) -> str:
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str) or name == "<lambda>":
        raise ValueError("give a name: this callable has no usable __name__")
    return name
