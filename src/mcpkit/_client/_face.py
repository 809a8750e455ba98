"""The :class:`~mcpkit.Client` as the client's parts see it, so they need not import it.

``_client`` imports its parts (the lists, the task calls, the listen stream, ...); each part
holds the client it works for. Were a part to import ``Client`` back, even for annotations
only, the package would be one import circle. It names :class:`ClientLike` instead: exactly
the members the parts use, which ``Client`` has. This module imports nothing of its package
(so nothing in it can be part of a circle); tests/test_layers.py refuses circles of more
than three modules inside a package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from .._session._client import ClientSession
    from ..types import CallToolResult, Implementation, ReadResourceResult, Root, Task, Tool


class ClientLike(Protocol):
    """What the client's parts use of their :class:`~mcpkit.Client`, which they are given.

    It is what an extension is attached to (``ClientExtension.attach``), what a callback's
    ``ctx.client`` and a task handle's ``client`` are: the ``Client`` itself at run time.
    """

    #: The server's name for the user (a ``ClientGroup`` names it; else the server's own).
    name: str | None
    _has_roots: bool

    @property
    def session(self) -> ClientSession: ...
    @property
    def server_info(self) -> Implementation: ...
    @property
    def middleware(self) -> Sequence[Any]: ...
    @property
    def _session(self) -> ClientSession | None: ...
    @property
    def _transport(self) -> Any: ...

    async def send_request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = ...
    ) -> Any: ...
    def _send(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: Any,
        progress_handler: Any,
        idempotent: bool = False,
    ) -> Any: ...
    async def check_tool_result(self, name: str, raw: Any) -> CallToolResult: ...
    async def list_tools(
        self, *, use_cache: bool = True, timeout: float | None = ...
    ) -> list[Tool]: ...
    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = ...
    ) -> CallToolResult: ...
    async def read_resource(
        self, uri: str, *, timeout: float | None = ...
    ) -> ReadResourceResult: ...
    async def list_tasks_page(
        self, cursor: str | None = None, *, timeout: float | None = ...
    ) -> tuple[list[Task], str | None]: ...
    def _wants_list_changes(self) -> bool: ...
    def _invalidate(self, kind: Literal["tools", "resources", "prompts"]) -> None: ...
    async def _current_roots(self) -> list[Root]: ...
    async def _on_task_status(self, params: dict[str, Any] | None) -> None: ...


__all__ = ["ClientLike"]
