"""The high-level server: register tools, resources and prompts; serve them to clients."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

import anyio
from typing_extensions import Unpack

from .._exceptions import MCPError
from .._middleware import MiddlewareFn, wrap_handlers
from .._session._base import RequestHandlerFn
from .._session._kernel import Kernel
from .._session._server import ServerSession
from .._stores._tasks import TaskStore
from .._transports._base import Transport
from . import _serving
from ._apps import AppMixin, tool_meta
from ._context import Context, StateT
from ._depends import DependencyOverrides
from ._extensions import Extension, Extensions
from ._func import FuncInfo, describe
from ._handlers import Handlers
from ._held import Holds
from ._hooks import ServerHooks
from ._hosted import (
    announce_change,
    build_spec,
    declared_capabilities,
    open_session,
    stateless_view,
)
from ._hosting import ServerHosting
from ._lifespan import hosting
from ._listen import Listeners
from ._mount import LocalMount, Mount, mount_of
from ._mrtr import StatelessSettings
from ._openapi_http import FromAPI
from ._prompts import PromptDef
from ._registry import Registry
from ._resources import register_resource
from ._rules import labelled
from ._runtime import RuntimeChanges, shared_registration
from ._session import state_of
from ._skills import SkillsExtension
from ._taskext import TasksExtension
from ._tasks import TaskManager, TaskSettings, resolve_task_settings
from ._tools import ToolDef, check_tool_name
from ._transform import ToolTransforms, reapply
from ._util import cache_hints, name_of, to_wire
from ._visibility import Visibility, VisibilityControl

if TYPE_CHECKING:
    from .._app import StreamableHTTPApp
    from .._auth._resource import ResourceServer
    from ._serving import RunKeywords, ServerAppKeywords

logger = logging.getLogger("mcpkit.server")

F = TypeVar("F", bound=Callable[..., Any])

#: ``lifespan(server)``: an async context manager whose value is ``ctx.lifespan_state``.
Lifespan = Callable[["Server[StateT]"], AbstractAsyncContextManager[StateT]]


class Server(
    AppMixin,
    RuntimeChanges,
    VisibilityControl,
    ToolTransforms,
    FromAPI,
    ServerHooks,
    Generic[StateT],
):
    """An MCP server: decorate functions to offer them as tools, resources and prompts.

    Example::

        from mcpkit import Server

        server = Server("demo", version="1.0.0")

        @server.tool()
        def add(a: int, b: int) -> int:
            \"\"\"Add two numbers.\"\"\"
            return a + b

        @server.resource("config://app")
        def config() -> dict:
            \"\"\"The app's configuration.\"\"\"
            return {"debug": False}

        if __name__ == "__main__":
            server.run()  # stdio

    Args:
        name: the ``serverInfo.name`` clients see.
        version: ``serverInfo.version``.
        title: a display name.
        description: what the server is for (``serverInfo.description``).
        instructions: how a model should use the server (sent in the initialize result).
        icons: ``Icon`` objects or dicts for user interfaces.
        website_url: ``serverInfo.websiteUrl``.
        lifespan: ``lifespan(server)`` returns an async context manager entered once when
            serving starts; what it yields is ``ctx.lifespan_state``.
        page_size: items per page of every list (None: everything in one page).
        mask_errors: hide the details of unexpected exceptions from clients (a
            :class:`ToolError` message is always shown).
        capabilities: extra capabilities to declare, merged over the derived ones (e.g.
            ``{"prompts": {"listChanged": True}}`` to announce prompts you add later).
        task_store: where tasks are kept (a :class:`TaskStore`): in memory by default;
            :class:`SQLiteTaskStore` keeps finished tasks across restarts. See docs/tasks.md.
        task_ttl: the lifetime (ms) of a task whose client asked for none (None: unlimited).
        max_task_ttl: the longest lifetime (ms) granted to a task (None: no limit).
        task_poll_interval: the ``pollInterval`` (ms) suggested to clients.
        task_owner: ``fn(ctx) -> str | None`` naming the principal a request acts for; its
            tasks are visible to every session of that principal. By default (or when it
            returns None) a task is visible only to the session that created it.
        max_tasks_per_owner: tasks one owner may have running at once (more are refused
            with -32600); None: no limit.
        tasks: all the task settings above as one :class:`TaskSettings` (then the
            ``task_*`` keywords must be left out).
        stateless: how revision 2026-07-28 is served (:class:`StatelessSettings`).
        middleware: around every request served, the first outermost (see :mod:`mcpkit.middleware`).
        include_tags: show only the tools, resources and prompts with one of these tags.
        exclude_tags: hide those with one of these tags (see :meth:`enable`, :meth:`disable`).
    """

    #: Seconds a request to the client (``ctx.sample``, ``ctx.elicit``, ``ctx.list_roots``)
    #: made without ``timeout=`` may wait for its answer before it fails with
    #: :class:`~mcpkit.RequestTimeout`. Set it on the instance to change it.
    client_request_timeout: float = 600.0
    #: Resources one session may be subscribed to at once (``resources/subscribe`` past it
    #: is refused with -32602 naming the bound); None: no bound. Set it on the instance.
    max_subscriptions: int | None = 1000

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        icons: Sequence[Any] | None = None,
        website_url: str | None = None,
        lifespan: Lifespan[StateT] | None = None,
        page_size: int | None = None,
        mask_errors: bool = True,
        capabilities: Mapping[str, Any] | None = None,
        task_store: TaskStore | None = None,
        task_ttl: int | None = 3_600_000,
        max_task_ttl: int | None = 86_400_000,
        task_poll_interval: int | None = 1000,
        task_owner: Callable[[Context], str | None] | None = None,
        max_tasks_per_owner: int | None = 100,
        tasks: TaskSettings | None = None,
        stateless: StatelessSettings | None = None,
        middleware: Sequence[MiddlewareFn] = (),
        auth: ResourceServer | None = None,
        extensions: Sequence[Extension] = (),
        include_tags: Collection[str] | None = None,
        exclude_tags: Collection[str] | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.instructions = instructions
        self.icons = list(icons or ())
        self.website_url = website_url
        self.lifespan = lifespan
        self.mask_errors = mask_errors
        self.extra_capabilities = dict(capabilities or {})
        #: What this server serves: tools, resources, templates, prompts, completion.
        self.registry = Registry(page_size)
        #: What clients see of it: tags and the enable/disable rules.
        self.visibility = Visibility(self, include_tags, exclude_tags)
        #: Dependencies replaced at call time, for tests: ``[get_db] = fake_db`` (``Depends``).
        self.dependency_overrides = DependencyOverrides()
        #: What the lifespan yielded, while serving.
        self.lifespan_state: Any = None
        self._lifespan_users = 0
        self._lifespan_stack: contextlib.AsyncExitStack | None = None
        self._lifespan_ready: anyio.Event | None = None
        #: ``on_roots_changed`` hooks, in registration order.
        self.roots_hooks: list[Callable[..., Any]] = []
        self._sessions: set[ServerSession] = set()
        #: Servers mounted here, and the mounts of this server on others.
        self._mounts: list[Mount] = []
        self._mounted_on: list[LocalMount] = []
        #: Where resource updates go when sessions are shared by many workers.
        self._shared: Any = None
        #: True once :meth:`bridge_logging` routed Python logging to clients.
        self.bridges_logging = False
        #: How the stateless revision (2026-07-28) is served: requestState key, caching hints.
        self.stateless = stateless or StatelessSettings()
        #: Calls held across the rounds of 2026-07-28 requests (``_held``).
        self.holds = Holds(self)
        #: The open ``subscriptions/listen`` streams.
        self.listeners = Listeners()
        settings = resolve_task_settings(
            tasks,
            task_store=task_store,
            task_ttl=task_ttl,
            max_task_ttl=max_task_ttl,
            task_poll_interval=task_poll_interval,
            task_owner=task_owner,
            max_tasks_per_owner=max_tasks_per_owner,
        )
        #: Runs and keeps this server's tasks (2025-11-25 task-augmented tool calls).
        self.tasks_manager = TaskManager.from_settings(self, settings, page_size)
        #: Bearer-token authorization over HTTP (the apps of :meth:`http_app` use it).
        self.auth = auth
        self._protocol = Handlers(self)
        #: Around every request served, the first outermost (see :mod:`mcpkit.middleware`).
        self.middleware = list(middleware)
        #: The protocol extensions served (``capabilities.extensions``), by id.
        self._extensions = Extensions(self)
        #: The tasks extension (io.modelcontextprotocol/tasks): tasks of 2026-07-28 clients.
        self.task_extension = TasksExtension(self.tasks_manager)
        self._extensions.add(self.task_extension)
        #: The skills extension (io.modelcontextprotocol/skills), once a skill is added.
        self.skills: SkillsExtension | None = None
        for extension in extensions:
            self._extensions.add(extension)
        self._handlers = self._handler_table()
        #: Serves every request of every session and of the stateless era; shared by
        #: reference, its spec replaced whenever what is served changes.
        self.kernel = Kernel(build_spec(self))

    def _handler_table(self) -> dict[str, RequestHandlerFn]:
        return wrap_handlers(self._extensions.table(self._protocol.table()), self.middleware)

    def refresh(self) -> None:
        """Serve what this server offers now: its kernel gets a new spec (registering and
        removing tools, resources and prompts does this already; call it after changing
        ``name``, ``version``, ``instructions`` or ``capabilities`` while serving)."""
        self.kernel.spec = build_spec(self)

    def add_middleware(self, middleware: MiddlewareFn) -> None:
        """Add ``middleware`` innermost; every request from now on is served through it."""
        self.middleware.append(middleware)
        self._handlers = self._handler_table()
        self.refresh()

    def add_extension(self, extension: Extension) -> None:
        """Serve a protocol extension (see :class:`~mcpkit.Extension`): requests from now
        on may use its methods, and sessions not yet initialized declare it."""
        self._extensions.add(extension)
        self._handlers = self._handler_table()
        self._changed(None)  # a new spec, and the change told

    @property
    def extensions(self) -> dict[str, Extension]:
        """The extensions served, by id."""
        return dict(self._extensions.by_id)

    def add_skill(self, path: Any) -> None:
        """Serve the skill in directory ``path`` (its ``SKILL.md`` and files) through the
        skills extension: ``skills/list``, ``skills/get`` and ``skill://`` resources.

        Raises ``ValueError`` for a skill whose frontmatter is invalid (no description, a
        name that is not its directory's).

        Example::

            server.add_skill("skills/pdf-processing")
        """
        self._skills_extension().add(path)
        self._changed("resources")

    def add_skills_dir(self, path: Any) -> None:
        """Serve every skill under directory ``path`` (each directory holding a ``SKILL.md``)."""
        self._skills_extension().add_dir(path)
        self._changed("resources")

    def _skills_extension(self) -> SkillsExtension:
        if self.skills is None:
            self.skills = SkillsExtension()
            self.add_extension(self.skills)
        return self.skills

    @property
    def page_size(self) -> int | None:
        """Items per page of every list (None: one page); may be changed while serving."""
        return self.registry.page_size

    @page_size.setter
    def page_size(self, value: int | None) -> None:
        if value is not None and value < 1:
            raise ValueError("page_size must be at least 1 (or None for no pagination)")
        self.registry.page_size = value

    # ================================================================== identity

    @property
    def server_info(self) -> dict[str, Any]:
        """The ``serverInfo`` object (an ``Implementation``)."""
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title is not None:
            info["title"] = self.title
        if self.description is not None:
            info["description"] = self.description
        if self.icons:
            info["icons"] = [to_wire(i) for i in self.icons]
        if self.website_url is not None:
            info["websiteUrl"] = self.website_url
        return info

    @property
    def capabilities(self) -> dict[str, Any]:
        """The capabilities declared to clients: derived from what is registered."""
        return declared_capabilities(self)

    @property
    def stateless_capabilities(self) -> dict[str, Any]:
        """The capabilities declared to 2026-07-28 clients: core tasks there are the tasks
        extension's."""
        return stateless_view(self, self.capabilities)

    @property
    def task_store(self) -> TaskStore:
        """Where this server keeps its tasks."""
        return self.tasks_manager.store

    # ================================================================== tools

    @overload
    def tool(self, name: F) -> F: ...

    @overload
    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: Any = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        task_support: Literal["forbidden", "optional", "required"] | None = None,
        defer_task: bool = False,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | bool | None = None,
        allow_refs: bool = False,
        scopes: Sequence[str] | None = None,
        app: Any = None,
        inline: bool = False,
        extra_arguments: Literal["forbid", "ignore"] = "forbid",
        tags: Collection[str] | None = None,
        version: str | None = None,
    ) -> Callable[[F], F]: ...

    def tool(self, name: Any = None, **options: Any) -> Any:
        """Decorator: offer a function as a tool.

        The input schema comes from the type hints (and parameter descriptions from
        ``Annotated[..., Field(description=...)]`` or the docstring); the description from
        the docstring. A parameter annotated :class:`Context` receives the context.

        Example::

            @server.tool(annotations=ToolAnnotations(read_only_hint=True))
            async def search(query: str, limit: int = 10) -> list[str]:
                \"\"\"Search the catalogue.\"\"\"
                ...

        Options: ``name``, ``title``, ``description``, ``annotations`` (``ToolAnnotations`` or
        dict), ``icons``, ``meta`` (``_meta``), ``task_support``, ``defer_task`` (a task of the
        tasks extension starts only when the tool calls ``ctx.begin_task()``: before, it runs in the
        request and may ask for input), ``input_schema`` (an explicit JSON schema, kept exactly as
        written), ``output_schema`` (a schema, or False for none), ``allow_refs`` (let the derived
        schema use ``$ref``), ``scopes`` (OAuth scopes a caller needs beyond the server's; over HTTP
        a token without them gets the 403 step-up challenge), ``app`` (its MCP Apps view: a
        ``ui://`` URI or an ``AppToolMeta``; see docs/apps.md), ``inline`` (run a sync function on
        the event loop instead of a worker thread: it holds every other request while it runs, so
        only for functions that take microseconds; docs/server.md, "Sync functions"),
        ``extra_arguments`` ("ignore": drop arguments the function does not name, not refuse them),
        ``tags`` and ``version`` (listed in its ``_meta``; see :meth:`enable`).
        """
        if callable(name):
            self.add_tool(name)
            return name

        def decorator(fn: F) -> F:
            self.add_tool(fn, name=name, **options)
            return fn

        return decorator

    @shared_registration("tool", "add")
    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Any = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        task_support: Literal["forbidden", "optional", "required"] | None = None,
        defer_task: bool = False,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | bool | None = None,
        allow_refs: bool = False,
        scopes: Sequence[str] | None = None,
        app: Any = None,
        inline: bool = False,
        extra_arguments: Literal["forbid", "ignore"] = "forbid",
        tags: Collection[str] | None = None,
        version: str | None = None,
    ) -> None:
        """Register ``fn`` as a tool (at any time: connected clients are told the list changed)."""
        tool_name = name if name is not None else name_of(fn)
        check_tool_name(tool_name)
        if tool_name in self.registry.tools:
            raise ValueError(f"a tool named {tool_name!r} is already registered (remove it first)")
        info = self._describe(fn, allow_refs=allow_refs, allow_asks=True, extras=extra_arguments)
        tool = ToolDef(
            fn,
            info,
            name=tool_name,
            title=title,
            description=description if description is not None else info.description,
            input_schema=input_schema,
            output_schema=output_schema,
            annotations=annotations,
            icons=icons,
            meta=labelled(tool_meta(self, meta, app), tags, version),
            task_support=task_support,
            defer_task=defer_task,
            mask_errors=self.mask_errors,
            inline=inline,
        )
        self.registry.tools[tool_name] = tool
        self._set_scopes("tool", tool_name, scopes)
        self._changed("tools")

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools as listed to clients (``Tool`` dicts), in registration order."""
        return [t.definition for t in self.registry.tools.values()]

    def _set_scopes(self, kind: str, key: str, scopes: Sequence[str] | None) -> None:
        if isinstance(scopes, str):
            raise TypeError("scopes must be a list of scope names, not one string")
        if scopes:
            self.registry.scopes[(kind, key)] = tuple(scopes)
        else:
            self.registry.scopes.pop((kind, key), None)

    # ================================================================== resources

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Any = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        cache_ttl_ms: int | None = None,
        cache_scope: Literal["public", "private"] | None = None,
        scopes: Sequence[str] | None = None,
        inline: bool = False,
        tags: Collection[str] | None = None,
        version: str | None = None,
    ) -> Callable[[F], F]:
        """Decorator: serve a resource at ``uri``, or every URI matching a template.

        A URI with ``{variables}`` (RFC 6570) is a template: each variable is passed to the
        parameter of the same name. The function returns ``str`` (text), ``bytes`` (a
        blob), JSON-able data (JSON text), or ``TextResourceContents``/``BlobResourceContents``.

        ``cache_ttl_ms`` and ``cache_scope`` are the caching hints of its reads under
        revision 2026-07-28 (how long a client may reuse the contents, and whether shared
        caches may hold them); unset, the server's :class:`StatelessSettings` apply.
        ``scopes``: OAuth scopes a caller needs to read it (or subscribe to it).
        ``inline``: run a sync function on the event loop, not in a worker thread (as for
        :meth:`tool`). ``tags``, ``version``: listed in its ``_meta`` (see :meth:`enable`).

        Example::

            @server.resource("users://{user_id}/profile", mime_type="application/json")
            def profile(user_id: int) -> dict:
                return load_profile(user_id)

            @server.resource("docs://changelog", cache_ttl_ms=3_600_000, cache_scope="public")
            def changelog() -> str:
                return CHANGELOG
        """

        def decorator(fn: F) -> F:
            self.add_resource(
                uri,
                fn,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                size=size,
                annotations=annotations,
                icons=icons,
                meta=meta,
                cache_ttl_ms=cache_ttl_ms,
                cache_scope=cache_scope,
                scopes=scopes,
                inline=inline,
                tags=tags,
                version=version,
            )
            return fn

        return decorator

    @shared_registration("resource", "add")
    def add_resource(
        self,
        uri: str,
        source: Any,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Any = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        cache_ttl_ms: int | None = None,
        cache_scope: Literal["public", "private"] | None = None,
        scopes: Sequence[str] | None = None,
        inline: bool = False,
        tags: Collection[str] | None = None,
        version: str | None = None,
    ) -> None:
        """Register a resource: ``source`` is a function, or the content itself (str or bytes).

        ``cache_ttl_ms``/``cache_scope``: the caching hints of its reads (see :meth:`resource`).

        Example::

            server.add_resource("docs://readme", "# Read me", mime_type="text/markdown")
        """
        hints = cache_hints(cache_ttl_ms, cache_scope)
        register_resource(
            self.registry,
            self._describe,
            uri,
            source,
            name=name,
            title=title,
            description=description,
            mime_type=mime_type,
            size=size,
            annotations=annotations,
            icons=icons,
            meta=labelled(meta, tags, version),
            inline=inline,
        )
        if hints:
            self.registry.read_hints[uri] = hints
        self._set_scopes("resource", uri, scopes)
        self._changed("resources")

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed (``notifications/resources/updated``).

        With shared state (``http_app(redis=...)``) that is every subscribed client of
        every worker, each told once."""
        self.listeners.post("notifications/resources/updated", {"uri": uri})
        for mount in self._mounted_on:
            await mount.resource_updated(uri)
        if self._shared is not None:
            await self._shared.resource_updated(uri)
            return
        for session in list(self._sessions):
            if uri in state_of(session).subscriptions and session.initialized:
                with contextlib.suppress(
                    MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError
                ):
                    await session.notify("notifications/resources/updated", {"uri": uri})

    # ================================================================== prompts

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Sequence[str] | None = None,
        inline: bool = False,
        tags: Collection[str] | None = None,
        version: str | None = None,
    ) -> Callable[[F], F]:
        """Decorator: offer a function as a prompt template (``scopes``: OAuth scopes a
        caller needs to get it; ``inline``: run a sync function on the event loop, as for
        :meth:`tool`).

        Its parameters are the prompt's arguments (those without a default are required);
        it returns a string, a message, a content block, or a list of these.

        Example::

            @server.prompt()
            def review(code: str) -> str:
                \"\"\"Ask for a code review.\"\"\"
                return f"Please review:\\n{code}"
        """
        if callable(name):
            self.add_prompt(name)
            return name

        def decorator(fn: F) -> F:
            self.add_prompt(
                fn,
                name=name,
                title=title,
                description=description,
                icons=icons,
                meta=meta,
                scopes=scopes,
                inline=inline,
                tags=tags,
                version=version,
            )
            return fn

        return decorator

    @shared_registration("prompt", "add")
    def add_prompt(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Sequence[str] | None = None,
        inline: bool = False,
        tags: Collection[str] | None = None,
        version: str | None = None,
    ) -> None:
        """Register ``fn`` as a prompt (at any time: connected clients are told)."""
        prompt_name = name or name_of(fn)
        if prompt_name in self.registry.prompts:
            raise ValueError(f"a prompt named {prompt_name!r} is already registered")
        info = self._describe(fn)
        self.registry.prompts[prompt_name] = PromptDef(
            fn,
            info,
            name=prompt_name,
            title=title,
            description=description if description is not None else info.description,
            icons=icons,
            meta=labelled(meta, tags, version),
            inline=inline,
        )
        self._set_scopes("prompt", prompt_name, scopes)
        self._changed("prompts")

    # ================================================================== mounts

    def mount(self, source: Any, *, prefix: str | None = None) -> None:
        """Serve another server's tools, resources and prompts here, under ``prefix``.

        ``source`` is a :class:`Server` of this process (served in place, its lifespan
        entered with this one's) or a :class:`~mcpkit.Client` for any other server (a
        command, a ``.py`` file, a URL: connected while this server serves, every call
        forwarded; requests the mounted server makes of its client go to this server's
        client). Tools and prompts are named ``<prefix>_<name>``, resources and templates
        ``scheme://<prefix>/...``; the mounted server's list changes reach this server's
        clients.

        Example::

            weather = Server("weather")
            hub = Server("hub")
            hub.mount(weather, prefix="weather")                 # tool "weather_forecast"
            hub.mount(Client("python files.py"), prefix="files")  # a stdio server
        """
        found = mount_of(self, source, prefix)
        self._mounts.append(found)
        if isinstance(found, LocalMount):
            found.sync()

    # ================================================================== serving

    def create_session(self, transport: Transport, **kw: Any) -> ServerSession:
        """A session serving one client over ``transport``, registered with this server.

        Run it with ``await session.run()``; it receives list-changed and
        resource-updated notifications until ``run()`` returns. Keywords go to
        :class:`ServerSession` (``max_concurrency``, ``supported_versions``).
        """
        session = open_session(self, transport, kw)
        self._sessions.add(session)
        return session

    def hosting(self) -> ServerHosting:
        """What an HTTP app (or a shared session registry) hosting this server uses: its
        kernel, header-mirrored arguments, per-target scopes, sessions as snapshots. Not
        needed by applications; see :class:`~mcpkit.lowlevel.ServerHosting`."""
        return ServerHosting(self)

    def _unregister(self, session: ServerSession) -> None:
        self._sessions.discard(session)

    @property
    def sessions(self) -> frozenset[ServerSession]:
        """The client sessions currently connected."""
        return frozenset(self._sessions)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Server]:
        """Enter the lifespan (once, however many transports serve at the same time).

        The lifespan is exited by whoever leaves last; transports serving many clients
        should enter this once for their whole life (an HTTP app's own lifespan).
        """
        if not self._lifespan_users:
            self.refresh()  # attributes set since construction (name, instructions) count
        async with hosting(self):
            yield self

    async def serve(self, transport: Transport) -> None:
        """Serve one client over ``transport`` until it disconnects (lifespan included)."""
        async with self.running():
            await self.create_session(transport).run()

    def http_app(
        self, path: str | None = "/mcp", **options: Unpack[ServerAppKeywords]
    ) -> StreamableHTTPApp:
        """This server as an ASGI application speaking Streamable HTTP at ``path``.

        Mount it in Starlette or FastAPI, or run it with any ASGI server. ``options`` are
        those of :func:`mcpkit.create_http_app` (``json_response``, ``sessionless``,
        ``allowed_hosts``, ``allowed_origins``, ``legacy_sse``, the budgets, ...). Needs
        the ``[http]`` extra only to be served by uvicorn, not to be built.

        ``redis="redis://host:6379/0"`` (or ``$MCPKIT_REDIS_URL``) keeps sessions, events,
        tasks and the routing between workers in Redis, so many workers behind any load
        balancer serve one deployment (the ``[redis]`` extra; see docs/deploy.md).

        Example::

            app = server.http_app(json_response=True)   # uvicorn module:app
        """
        return _serving.http_app(self, path, options)

    async def serve_stdio(self) -> None:
        """Serve one client over this process's stdin/stdout."""
        from .._transports._stdio import stdio_server

        async with stdio_server() as transport, self.running():
            await self.create_session(transport).run()

    def run(self, transport: str = "stdio", **options: Unpack[RunKeywords]) -> None:
        """Serve (blocking): ``"stdio"``, or ``"http"``/``"sse"`` with uvicorn (the
        ``[http]`` extra); ``options`` (``host``, ``port``, ``redis``, the app's keywords)
        are for HTTP only."""
        _serving.run(self, transport, **options)

    # ================================================================== handlers

    def _describe(self, fn: Callable[..., Any], **options: Any) -> FuncInfo:
        return describe(fn, Context, **options)

    def _changed(self, kind: str | None) -> None:
        """``kind`` of list changed (None: only the capabilities, an extension added)."""
        if kind == "tools":
            reapply(self)  # transformed tools follow their sources
        announce_change(self, kind)
