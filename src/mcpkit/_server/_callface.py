"""The :class:`~mcpkit.Context` as the functions' side of the server sees it.

A tool, resource or prompt function is handed its ``Context``; the code that calls it
(``_tools``, ``_prompts``, ``_resources``, ``_registry``, ``_ask``) passes the context on
and uses three of its methods. It names :class:`CallContext` instead of ``Context``, whose
module sits above it (it imports the server's parts): this module imports nothing of its
package, so no import circle runs through it (tests/test_layers.py refuses circles of more
than three modules inside a package).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol


class CallContext(Protocol):
    """What calling a function uses of its :class:`~mcpkit.Context` (which is one)."""

    async def begin_task(self) -> None: ...
    async def gather(self, *calls: Awaitable[Any]) -> list[Any]: ...
    async def elicit(self, message: str, schema: Any, *, key: str | None = None) -> Any: ...


__all__ = ["CallContext"]
