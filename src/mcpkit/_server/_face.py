"""The :class:`~mcpkit.Server` and its :class:`~mcpkit.Context` as the server's parts see them.

``_server`` builds the server out of parts (the handlers, the task manager, the held calls,
the extensions, the mounts, ...) and each part holds the server it works for; a ``Context``
is made by the parts and holds the server too. Were the parts to import ``Server`` or
``Context`` back, even for annotations only, the package would be one import circle. They
name :class:`ServerLike` and :class:`ContextLike` instead: exactly the members they use,
which ``Server`` and ``Context`` have. A part's own members that the other parts use are
described here too (``TaskManagerLike``, ...), for the same reason. For its annotations this
module imports what sits below the parts (the registry and what it holds, the listen
streams) and the held calls' types (``_mrtr``, ``_held``: with this module, the one
circle of three left here); tests/test_layers.py refuses circles of more than three modules
inside a package.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import contextlib

    import anyio
    from anyio.abc import TaskGroup

    from .._session._base import RequestContext, RequestHandlerFn
    from .._session._kernel import Kernel
    from .._session._server import ServerSession
    from ._held import Holds
    from ._listen import Listeners
    from ._mrtr import StatelessSettings
    from ._registry import Registry
    from ._rules import Rule
    from ._tools import ToolDef


class HandlersLike(Protocol):
    """What the other parts use of the server's core handlers (``_handlers.Handlers``)."""

    async def tools_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any: ...
    async def tools_call(self, rc: RequestContext, params: dict[str, Any] | None) -> Any: ...
    def at_once(self, method: str, params: dict[str, Any] | None) -> bool: ...
    async def roots_list_changed(
        self, session: ServerSession, params: dict[str, Any] | None
    ) -> None: ...
    async def _call(self, tool: Any, args: dict[str, Any], rc: RequestContext) -> Any: ...
    async def _rounds(
        self,
        rc: RequestContext,
        params: dict[str, Any] | None,
        run: Coroutine[Any, Any, Any],
        *,
        hold: bool = False,
    ) -> Any: ...


class TaskManagerLike(Protocol):
    """What the other parts use of the server's task manager (``_tasks.TaskManager``)."""

    _tg: TaskGroup | None
    _remote: dict[str, anyio.Event]

    async def on_client_status(self, params: dict[str, Any] | None) -> None: ...
    async def create_tool_task(
        self, rc: RequestContext, tool: ToolDef, args: dict[str, Any], task: Any
    ) -> dict[str, Any]: ...
    async def input_needed(self, task_id: str, delta: int) -> None: ...
    def share(self, store: Any) -> None: ...
    async def h_get(self, rc: RequestContext, params: dict[str, Any] | None) -> Any: ...
    async def h_result(self, rc: RequestContext, params: dict[str, Any] | None) -> Any: ...
    async def h_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any: ...
    async def h_cancel(self, rc: RequestContext, params: dict[str, Any] | None) -> Any: ...


class TasksExtensionLike(Protocol):
    """What the core handlers use of the tasks extension (``_taskext.TasksExtension``)."""

    async def call_tool(
        self, handlers: HandlersLike, rc: RequestContext, tool: ToolDef, args: dict[str, Any]
    ) -> Any: ...
    async def follow(
        self, rc: RequestContext, task_ids: list[str]
    ) -> list[dict[str, Any]] | None: ...


class ExtensionsLike(Protocol):
    """What the other parts use of the server's extensions (``_extensions.Extensions``)."""

    def declared(self, *, stateless: bool) -> dict[str, Any]: ...
    def methods(self, *, handshake: bool) -> frozenset[str]: ...
    def cacheable(self) -> frozenset[str]: ...


class VisibilityLike(Protocol):
    """What the other parts use of the server's visibility (``_visibility.Visibility``)."""

    rules: tuple[Rule, ...]

    def change(self, rule: Rule) -> None: ...
    def shown_keys(self, rules: Sequence[Rule]) -> dict[str, set[tuple[str, str]]]: ...
    def hides(self, rc: RequestContext | None, kind: str, key: str, definition: Any) -> bool: ...
    def hides_uri(self, rc: RequestContext | None, uri: str) -> bool: ...
    def hides_target(
        self, session: object, method: str, params: Mapping[str, Any] | None
    ) -> bool: ...
    def page(
        self, rc: RequestContext | None, kind: str, params: dict[str, Any] | None
    ) -> dict[str, Any]: ...


class MountLike(Protocol):
    """A mount of another server here, as the other parts see it (``_mount.Mount``)."""

    def completes(self) -> bool: ...
    def pending(self) -> bool: ...


class MountedLike(Protocol):
    """A mount of this server on another, as the other parts see it (``_mount.LocalMount``)."""

    def sync(self) -> None: ...


class ServerLike(Protocol):
    """What the server's parts use of their :class:`~mcpkit.Server` (which is one)."""

    name: str
    instructions: str | None
    mask_errors: bool
    bridges_logging: bool
    client_request_timeout: float
    max_subscriptions: int | None
    lifespan_state: Any
    extra_capabilities: dict[str, Any]
    roots_hooks: list[Any]
    middleware: list[Any]
    registry: Registry
    listeners: Listeners
    stateless: StatelessSettings
    holds: Holds
    kernel: Kernel
    _shared: Any
    _sessions: set[ServerSession]
    _handlers: dict[str, RequestHandlerFn]

    @property
    def tasks_manager(self) -> TaskManagerLike: ...
    @property
    def task_extension(self) -> TasksExtensionLike: ...
    @property
    def _protocol(self) -> HandlersLike: ...
    @property
    def _extensions(self) -> ExtensionsLike: ...
    @property
    def _mounts(self) -> Sequence[MountLike]: ...
    @property
    def _mounted_on(self) -> Sequence[MountedLike]: ...
    @property
    def extensions(self) -> Mapping[str, object]: ...
    @property
    def page_size(self) -> int | None: ...
    @property
    def visibility(self) -> VisibilityLike: ...
    @property
    def server_info(self) -> dict[str, Any]: ...
    @property
    def capabilities(self) -> dict[str, Any]: ...

    def running(self) -> contextlib.AbstractAsyncContextManager[Any]: ...
    def create_session(self, transport: Any, **kw: Any) -> ServerSession: ...
    async def serve_stdio(self) -> None: ...
    def add_extension(self, extension: Any) -> None: ...
    def add_resource(
        self,
        uri: str,
        source: Any,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Sequence[str] | None = None,
    ) -> None: ...
    def _changed(self, kind: str | None) -> None: ...
    def _unregister(self, session: ServerSession) -> None: ...


class ContextLike(Protocol):
    """What the parts that ``_context`` imports itself (logging, sessions, held calls) use
    of a :class:`~mcpkit.Context` (which is one): the request and session it serves, and
    moving it to a held call's next round."""

    _request: RequestContext | None
    _session: ServerSession | None

    @property
    def request_id(self) -> str | int | None: ...

    def _rebind(self, request: RequestContext) -> None: ...


__all__ = [
    "ContextLike",
    "ExtensionsLike",
    "HandlersLike",
    "MountLike",
    "MountedLike",
    "ServerLike",
    "TaskManagerLike",
    "TasksExtensionLike",
    "VisibilityLike",
]
