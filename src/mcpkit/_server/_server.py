"""The high-level server: register tools, resources and prompts; serve them to clients."""

from __future__ import annotations

import base64
import contextlib
import functools
import inspect
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, TypeVar, overload

import anyio

from .._exceptions import InvalidParams, MCPError, MethodNotFound, ProtocolError
from .._session._base import RequestContext
from .._transports._base import Transport
from ._context import Context
from ._func import FuncInfo, describe
from ._logging import LEVELS, ClientLogHandler, current_context
from ._prompts import PromptDef
from ._resources import ResourceDef, TemplateDef, not_found, read_error
from ._session import BoundSession
from ._task_store import TaskStore
from ._tasks import TaskManager
from ._tools import ToolDef, check_tool_name
from ._util import make_caller, to_wire

logger = logging.getLogger("mcpkit.server")

F = TypeVar("F", bound=Callable[..., Any])

Lifespan = Callable[["Server"], AbstractAsyncContextManager[Any]]

_LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
    "prompts": "notifications/prompts/list_changed",
}

#: Most values a completion answer may carry (the spec's limit).
MAX_COMPLETIONS = 100


class Server:
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
    """

    #: Seconds a request to the client (``ctx.sample``, ``ctx.elicit``, ``ctx.list_roots``)
    #: made without ``timeout=`` may wait for its answer before it fails with
    #: :class:`~mcpkit.RequestTimeout`. Set it on the instance to change it.
    client_request_timeout: float = 600.0

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
        lifespan: Lifespan | None = None,
        page_size: int | None = None,
        mask_errors: bool = True,
        capabilities: Mapping[str, Any] | None = None,
        task_store: TaskStore | None = None,
        task_ttl: int | None = 3_600_000,
        max_task_ttl: int | None = 86_400_000,
        task_poll_interval: int | None = 1000,
        task_owner: Callable[[Context], str | None] | None = None,
        max_tasks_per_owner: int | None = 100,
    ) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1 (or None for no pagination)")
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.instructions = instructions
        self.icons = list(icons or ())
        self.website_url = website_url
        self.lifespan = lifespan
        self.page_size = page_size
        self.mask_errors = mask_errors
        self.extra_capabilities = dict(capabilities or {})
        #: What the lifespan yielded, while serving.
        self.lifespan_state: Any = None
        self._lifespan_users = 0
        self._lifespan_stack: contextlib.AsyncExitStack | None = None
        self._lifespan_ready: anyio.Event | None = None
        self._tools: dict[str, ToolDef] = {}
        self._resources: dict[str, ResourceDef] = {}
        self._templates: dict[str, TemplateDef] = {}
        self._prompts: dict[str, PromptDef] = {}
        self._completion: Callable[..., Any] | None = None
        self._completion_ctx: str | None = None
        self._roots_changed: list[Callable[..., Any]] = []
        self._sessions: set[BoundSession] = set()
        self._bridge = False
        self._lists: dict[str, list[dict[str, Any]]] = {}
        self._tasks = TaskManager(
            self,
            task_store,
            default_ttl=task_ttl,
            max_ttl=max_task_ttl,
            poll_interval=task_poll_interval,
            owner=task_owner,
            page_size=page_size or 100,
            max_per_owner=max_tasks_per_owner,
        )
        self._handlers = {
            "tools/list": self._h_tools_list,
            "tools/call": self._h_tools_call,
            "resources/list": self._h_resources_list,
            "resources/templates/list": self._h_templates_list,
            "resources/read": self._h_resources_read,
            "resources/subscribe": self._h_subscribe,
            "resources/unsubscribe": self._h_unsubscribe,
            "prompts/list": self._h_prompts_list,
            "prompts/get": self._h_prompts_get,
            "completion/complete": self._h_complete,
            "logging/setLevel": self._h_set_level,
            "tasks/get": self._tasks.h_get,
            "tasks/result": self._tasks.h_result,
            "tasks/list": self._tasks.h_list,
            "tasks/cancel": self._tasks.h_cancel,
        }

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
        caps: dict[str, Any] = {"logging": {}}
        if self._tools:
            caps["tools"] = {"listChanged": True}
        if self._resources or self._templates:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self._prompts:
            caps["prompts"] = {"listChanged": True}
        if self._completion is not None:
            caps["completions"] = {}
        if self._task_tools():
            caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        for key, value in self.extra_capabilities.items():
            if isinstance(value, dict) and isinstance(caps.get(key), dict):
                caps[key] = {**caps[key], **value}
            else:
                caps[key] = value
        return caps

    def _task_tools(self) -> bool:
        return any(t.task_support in ("optional", "required") for t in self._tools.values())

    @property
    def task_store(self) -> TaskStore:
        """Where this server keeps its tasks."""
        return self._tasks.store

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
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | bool | None = None,
        allow_refs: bool = False,
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

        Options: ``name``, ``title``, ``description``, ``annotations`` (``ToolAnnotations``
        or dict), ``icons``, ``meta`` (``_meta``), ``task_support``, ``input_schema`` (an
        explicit JSON schema, kept exactly as written), ``output_schema`` (a schema, or
        False for none), ``allow_refs`` (let the derived schema use ``$ref``).
        """
        if callable(name):
            self.add_tool(name)
            return name

        def decorator(fn: F) -> F:
            self.add_tool(fn, name=name, **options)
            return fn

        return decorator

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
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | bool | None = None,
        allow_refs: bool = False,
    ) -> None:
        """Register ``fn`` as a tool (at any time: connected clients are told the list changed)."""
        tool_name = name if name is not None else _name_of(fn)
        check_tool_name(tool_name)
        if tool_name in self._tools:
            raise ValueError(f"a tool named {tool_name!r} is already registered (remove it first)")
        info = self._describe(fn, allow_refs=allow_refs)
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
            meta=meta,
            task_support=task_support,
            mask_errors=self.mask_errors,
        )
        self._tools[tool_name] = tool
        self._changed("tools")

    def remove_tool(self, name: str) -> None:
        """Stop offering a tool; raises ``KeyError`` if there is none by that name."""
        del self._tools[name]
        self._changed("tools")

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools as listed to clients (``Tool`` dicts)."""
        return [t.definition for t in self._tools.values()]

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
    ) -> Callable[[F], F]:
        """Decorator: serve a resource at ``uri``, or every URI matching a template.

        A URI with ``{variables}`` (RFC 6570) is a template: each variable is passed to the
        parameter of the same name. The function returns ``str`` (text), ``bytes`` (a
        blob), JSON-able data (JSON text), or ``TextResourceContents``/``BlobResourceContents``.

        Example::

            @server.resource("users://{user_id}/profile", mime_type="application/json")
            def profile(user_id: int) -> dict:
                return load_profile(user_id)
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
            )
            return fn

        return decorator

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
    ) -> None:
        """Register a resource: ``source`` is a function, or the content itself (str or bytes).

        Example::

            server.add_resource("docs://readme", "# Read me", mime_type="text/markdown")
        """
        if "{" in uri:
            if not callable(source):
                raise TypeError(
                    f"resource template {uri!r} needs a function to produce each resource"
                )
            if uri in self._templates:
                raise ValueError(f"a resource template {uri!r} is already registered")
            tinfo = self._describe(source)
            self._templates[uri] = TemplateDef(
                uri,
                source,
                tinfo,
                name=name or _name_of(source),
                title=title,
                description=description if description is not None else tinfo.description,
                mime_type=mime_type,
                annotations=annotations,
                icons=icons,
                meta=meta,
            )
        else:
            if uri in self._resources:
                raise ValueError(f"a resource {uri!r} is already registered")
            if callable(source):
                fn: Callable[..., Any] | None = source
                info: FuncInfo | None = self._describe(source)
                doc = info.description if info is not None else None
                default_name = name or _name_of(source)
                value = None
            else:
                if not isinstance(source, (str, bytes)):
                    raise TypeError(
                        "a static resource's content must be str or bytes (or pass a function)"
                    )
                fn, info, doc, default_name, value = None, None, None, uri, source
                if size is None:
                    size = len(source.encode() if isinstance(source, str) else source)
            self._resources[uri] = ResourceDef(
                uri,
                fn,
                info,
                value,
                name=name or default_name,
                title=title,
                description=description if description is not None else doc,
                mime_type=mime_type,
                size=size,
                annotations=annotations,
                icons=icons,
                meta=meta,
            )
        self._changed("resources")

    def remove_resource(self, uri: str) -> None:
        """Stop offering a resource (or template, given its template string)."""
        if uri in self._resources:
            del self._resources[uri]
        elif uri in self._templates:
            del self._templates[uri]
        else:
            raise KeyError(uri)
        self._changed("resources")

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed (``notifications/resources/updated``)."""
        for session in list(self._sessions):
            if uri in session.subscriptions and session.initialized:
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
    ) -> Callable[[F], F]:
        """Decorator: offer a function as a prompt template.

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
                fn, name=name, title=title, description=description, icons=icons, meta=meta
            )
            return fn

        return decorator

    def add_prompt(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Register ``fn`` as a prompt (at any time: connected clients are told)."""
        prompt_name = name or _name_of(fn)
        if prompt_name in self._prompts:
            raise ValueError(f"a prompt named {prompt_name!r} is already registered")
        info = self._describe(fn)
        self._prompts[prompt_name] = PromptDef(
            fn,
            info,
            name=prompt_name,
            title=title,
            description=description if description is not None else info.description,
            icons=icons,
            meta=meta,
        )
        self._changed("prompts")

    def remove_prompt(self, name: str) -> None:
        """Stop offering a prompt."""
        del self._prompts[name]
        self._changed("prompts")

    # ================================================================== completion, roots, logging

    def completion(self) -> Callable[[F], F]:
        """Decorator: the function completing prompt arguments and template variables.

        It is called as ``fn(ref, argument, context)`` with ``ref`` a ``PromptReference`` or
        ``ResourceTemplateReference``, ``argument`` a ``CompletionArgument`` (``name``,
        ``value``) and ``context`` a ``CompletionContext`` or None (``context.arguments``
        holds arguments already filled in); a parameter annotated :class:`Context` gets
        the context. It returns a list of strings (at most 100 are sent; ``total`` and
        ``hasMore`` are filled in), a ``Completion``, or None.

        Example::

            @server.completion()
            def complete(ref, argument, context):
                if argument.name == "language":
                    return [l for l in LANGUAGES if l.startswith(argument.value)]
                return []
        """

        def decorator(fn: F) -> F:
            self._completion = fn
            self._completion_ctx = _context_param(fn)
            return fn

        return decorator

    def on_roots_changed(self) -> Callable[[F], F]:
        """Decorator: ``async fn(ctx)`` called when a client says its roots changed."""

        def decorator(fn: F) -> F:
            self._roots_changed.append(fn)
            return fn

        return decorator

    def bridge_logging(
        self, logger_name: str | None = None, level: int = logging.INFO
    ) -> logging.Handler:
        """Forward Python ``logging`` records emitted while serving a request to its client.

        Records are sent as ``notifications/message`` (subject to the client's
        ``logging/setLevel``). Returns the installed handler (remove it to stop).

        Example::

            server.bridge_logging("myapp")   # logging.getLogger("myapp").info(...) reaches the client
        """
        handler = ClientLogHandler(level)
        logging.getLogger(logger_name).addHandler(handler)
        self._bridge = True
        return handler

    # ================================================================== serving

    def create_session(self, transport: Transport, **kw: Any) -> BoundSession:
        """A session serving one client over ``transport``, registered with this server.

        Run it with ``await session.run()``; it receives list-changed and
        resource-updated notifications until ``run()`` returns. Keywords go to
        :class:`ServerSession` (``max_concurrency``, ``supported_versions``).
        """
        session = BoundSession(
            self,
            transport,
            server_info=self.server_info,
            capabilities=self.capabilities,
            handlers=self._handlers,
            instructions=self.instructions,
            **kw,
        )
        session.set_notification_handler(
            "notifications/roots/list_changed", functools.partial(self._roots_list_changed, session)
        )
        session.set_notification_handler("notifications/tasks/status", self._tasks.on_client_status)
        self._sessions.add(session)
        return session

    def _unregister(self, session: BoundSession) -> None:
        self._sessions.discard(session)

    @property
    def sessions(self) -> frozenset[BoundSession]:
        """The client sessions currently connected."""
        return frozenset(self._sessions)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Server]:
        """Enter the lifespan (once, however many transports serve at the same time).

        The lifespan is exited by whoever leaves last; transports serving many clients
        should enter this once for their whole life (an HTTP app's own lifespan).
        """
        self._lifespan_users += 1
        try:
            if self._lifespan_users == 1 and self.lifespan is not None:
                ready = self._lifespan_ready = anyio.Event()
                try:
                    stack = contextlib.AsyncExitStack()
                    self.lifespan_state = await stack.enter_async_context(self.lifespan(self))
                    self._lifespan_stack = stack
                finally:
                    ready.set()
            elif self._lifespan_ready is not None:
                # Another task is entering it right now: serve only once it is ready.
                await self._lifespan_ready.wait()
                if self._lifespan_stack is None and self.lifespan is not None:
                    raise RuntimeError("the server's lifespan failed to start")
            if self._tasks._tg is None:
                # Tasks outlive the request (and the session) that created them: they run
                # in a task group held by the outermost serving frame.
                async with self._tasks.host():
                    yield self
            else:
                yield self
        finally:
            self._lifespan_users -= 1
            if self._lifespan_users == 0:
                self._lifespan_ready = None
                if self._lifespan_stack is not None:
                    stack, self._lifespan_stack = self._lifespan_stack, None
                    try:
                        with anyio.CancelScope(shield=True):
                            await stack.aclose()
                    finally:
                        self.lifespan_state = None

    async def serve(self, transport: Transport) -> None:
        """Serve one client over ``transport`` until it disconnects (lifespan included)."""
        async with self.running():
            await self.create_session(transport).run()

    def http_app(self, path: str | None = "/mcp", **options: Any) -> Any:
        """This server as an ASGI application speaking Streamable HTTP at ``path``.

        Mount it in Starlette or FastAPI, or run it with any ASGI server. ``options`` are
        those of :func:`mcpkit.create_http_app` (``json_response``, ``stateless``,
        ``allowed_hosts``, ``allowed_origins``, ``legacy_sse``, ...). Needs the ``[http]``
        extra only to be served by uvicorn, not to be built.

        Example::

            app = server.http_app(json_response=True)   # uvicorn module:app
        """
        import importlib

        http = importlib.import_module("mcpkit._http")
        return http.create_http_app(self, path=path, **options)

    async def serve_stdio(self) -> None:
        """Serve one client over this process's stdin/stdout."""
        from .._transports._stdio import stdio_server

        async with stdio_server() as transport, self.running():
            await self.create_session(transport).run()

    def run(self, transport: str = "stdio", **options: Any) -> None:
        """Serve (blocking): ``"stdio"``, or an HTTP transport when ``mcpkit`` has it.

        ``options`` go to the HTTP transport (``host``, ``port``, ...).
        """
        if transport == "stdio":
            if options:
                raise TypeError(f"the stdio transport takes no options (got {sorted(options)})")
            from .._transports._loop import run

            run(self.serve_stdio)
            return
        from ._cli import http_runner

        http_runner()(self, transport, **options)

    # ================================================================== handlers

    def _describe(self, fn: Callable[..., Any], *, allow_refs: bool = False) -> FuncInfo:
        try:
            return describe(fn, Context, allow_refs=allow_refs)
        except (TypeError, ValueError):
            raise
        except Exception as e:
            raise TypeError(f"cannot serve {_name_of(fn)!r}: {e}") from e

    def _changed(self, kind: str) -> None:
        self._lists.pop(kind, None)
        if kind == "resources":
            self._lists.pop("templates", None)
        method = _LIST_CHANGED[kind]
        # A copy: registration may happen in a worker thread while sessions come and go.
        for s in list(self._sessions):
            if s.initialized and kind in s.capabilities:
                s.post_list_changed(method)

    def _context(self, rc: RequestContext) -> Context:
        return Context(self, rc, rc.session)

    def _page(
        self, kind: str, params: dict[str, Any] | None, build: Callable[[], list[dict[str, Any]]]
    ) -> dict[str, Any]:
        items = self._lists.get(kind)
        if items is None:
            items = self._lists[kind] = build()
        start = 0
        cursor = params.get("cursor") if params else None
        if cursor is not None:
            start = _decode_cursor(kind, cursor)
        size = self.page_size
        if size is None:
            if start:
                return {kind: items[start:]}
            return {kind: items}
        end = start + size
        result: dict[str, Any] = {kind: items[start:end]}
        if end < len(items):
            result["nextCursor"] = _encode_cursor(kind, end)
        return result

    async def _h_tools_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        return self._page("tools", params, lambda: [t.definition for t in self._tools.values()])

    async def _h_tools_call(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        if params is None:
            raise InvalidParams(message="Invalid params: tools/call needs 'name'")
        name = params.get("name")
        tool = self._tools.get(name) if type(name) is str else None
        if tool is None:
            if type(name) is not str:
                raise InvalidParams(message="Invalid params: 'name' must be a string")
            raise InvalidParams(message=f"Unknown tool: {name}", data={"name": name})
        args = params.get("arguments")
        if args is None:
            args = {}
        elif type(args) is not dict:
            raise InvalidParams(message="Invalid params: 'arguments' must be an object")
        support = tool.task_support
        if support is not None and support != "forbidden":
            task = params.get("task")
            if task is not None:
                return await self._tasks.create_tool_task(rc, tool, args, task)
            if support == "required":
                raise MethodNotFound(
                    message=f"Method not found: tool {name!r} must be called as a task",
                    data={"name": name, "taskSupport": "required"},
                )
        elif "task" in params and "tasks" in rc.session.capabilities:
            raise MethodNotFound(
                message=f"Method not found: tool {name!r} does not support task execution",
                data={"name": name, "taskSupport": "forbidden"},
            )
        if tool.context_param is None and not self._bridge:
            return await tool.call(args, None)
        ctx = Context(self, rc, rc.session)
        token = current_context.set(ctx)
        try:
            return await tool.call(args, ctx)
        finally:
            current_context.reset(token)

    async def _h_resources_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        return self._page(
            "resources", params, lambda: [r.definition for r in self._resources.values()]
        )

    async def _h_templates_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        result = self._page(
            "templates", params, lambda: [t.definition for t in self._templates.values()]
        )
        result["resourceTemplates"] = result.pop("templates")
        return result

    def _uri_param(self, params: dict[str, Any] | None) -> str:
        uri = params.get("uri") if params else None
        if not isinstance(uri, str) or not uri:
            raise InvalidParams(message="Invalid params: 'uri' must be a non-empty string")
        return uri

    def _resolves(self, uri: str) -> bool:
        return uri in self._resources or any(
            t.match(uri) is not None for t in self._templates.values()
        )

    async def _read(self, uri: str, ctx: Context | None) -> list[dict[str, Any]]:
        """The contents of a resource of this server."""
        try:
            resource = self._resources.get(uri)
            if resource is not None:
                return await resource.read(ctx)
            for template in self._templates.values():
                variables = template.match(uri)
                if variables is not None:
                    return await template.read(uri, variables, ctx)
        except ProtocolError:
            raise
        except (Exception, SystemExit) as e:
            if not isinstance(e, MCPError):
                logger.exception("reading resource %r failed", uri)
            if not self.mask_errors and not isinstance(e, MCPError):
                raise ProtocolError(
                    message=f"Error reading resource {uri}: {type(e).__name__}: {e}"
                ) from e
            raise read_error(uri, e) from e
        raise not_found(uri)

    async def _h_resources_read(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        uri = self._uri_param(params)
        ctx = self._context(rc)
        token = current_context.set(ctx)
        try:
            return {"contents": await self._read(uri, ctx)}
        finally:
            current_context.reset(token)

    async def _h_subscribe(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        uri = self._uri_param(params)
        if not self._resolves(uri):
            raise not_found(uri)
        rc.session.subscriptions.add(uri)
        return {}

    async def _h_unsubscribe(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        uri = self._uri_param(params)
        rc.session.subscriptions.discard(uri)
        return {}

    async def _h_prompts_list(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        return self._page("prompts", params, lambda: [p.definition for p in self._prompts.values()])

    async def _h_prompts_get(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        name = params.get("name") if params else None
        if not isinstance(name, str):
            raise InvalidParams(message="Invalid params: 'name' must be a string")
        prompt = self._prompts.get(name)
        if prompt is None:
            raise InvalidParams(message=f"Unknown prompt: {name}", data={"name": name})
        args = params.get("arguments") if params else None
        if args is None:
            args = {}
        elif not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
            raise InvalidParams(message="Invalid params: 'arguments' must be an object of strings")
        ctx = self._context(rc)
        token = current_context.set(ctx)
        try:
            return await prompt.get(args, ctx)
        except ProtocolError:
            raise
        except (Exception, SystemExit) as e:
            logger.exception("prompt %r failed", name)
            detail = "" if self.mask_errors else f": {type(e).__name__}: {e}"
            raise ProtocolError(message=f"Error rendering prompt {name}{detail}") from e
        finally:
            current_context.reset(token)

    async def _h_complete(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        from ..types import CompleteRequestParams

        if params is None:
            raise InvalidParams(
                message="Invalid params: completion/complete needs 'ref' and 'argument'"
            )
        try:
            req = CompleteRequestParams.model_validate(params)
        except Exception as e:
            raise InvalidParams(message=f"Invalid params: {_short(e)}") from e
        ref = req.ref
        arg_name = req.argument.name
        if ref.type == "ref/prompt":
            prompt = self._prompts.get(ref.name)
            if prompt is None:
                raise InvalidParams(message=f"Unknown prompt: {ref.name}", data={"name": ref.name})
            if arg_name not in prompt.info.params:
                raise InvalidParams(message=f"Prompt {ref.name!r} has no argument {arg_name!r}")
        else:
            template = self._templates.get(ref.uri)
            if template is None:
                if ref.uri in self._resources:
                    return {"completion": {"values": []}}
                raise InvalidParams(
                    message=f"Unknown resource template: {ref.uri}", data={"uri": ref.uri}
                )
            if arg_name not in template.matcher.variables:
                raise InvalidParams(message=f"Template {ref.uri!r} has no variable {arg_name!r}")
        fn = self._completion
        if fn is None:
            return {"completion": {"values": []}}
        kwargs: dict[str, Any] = {}
        if self._completion_ctx is not None:
            kwargs[self._completion_ctx] = self._context(rc)
        call = make_caller(functools.partial(fn, ref, req.argument, req.context))
        try:
            value = await call(kwargs)
        except ProtocolError:
            raise
        except (Exception, SystemExit) as e:
            logger.exception("completion function failed")
            detail = "" if self.mask_errors else f": {type(e).__name__}: {e}"
            raise ProtocolError(message=f"Error completing {arg_name!r}{detail}") from e
        return {"completion": _completion_of(value)}

    async def _h_set_level(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        level = params.get("level") if params else None
        if not isinstance(level, str) or level not in LEVELS:
            raise InvalidParams(
                message=f"Invalid params: unknown log level {level!r} (one of {', '.join(LEVELS)})",
            )
        rc.session.log_threshold = LEVELS[level]
        return {}

    async def _roots_list_changed(
        self, session: BoundSession, params: dict[str, Any] | None
    ) -> None:
        # Notification handlers run on the reader; the hooks may call the client (list_roots),
        # whose answer that reader must be free to receive.
        if self._roots_changed:
            session.spawn(self._run_roots_hooks, session)

    async def _run_roots_hooks(self, session: BoundSession) -> None:
        for fn in self._roots_changed:
            await self._run_hook(fn, session)

    async def _run_hook(self, fn: Callable[..., Any], session: BoundSession) -> None:
        try:
            result = fn(Context(self, None, session))
            if inspect.isawaitable(result):
                await result
        except Exception:
            logger.exception("roots-changed hook %r failed", fn)


def _name_of(fn: Any) -> str:
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str) or name == "<lambda>":
        raise ValueError("give a name: this callable has no usable __name__")
    return name


def _context_param(fn: Callable[..., Any]) -> str | None:
    try:
        hints = inspect.get_annotations(fn, eval_str=True)
    except Exception:
        hints = getattr(fn, "__annotations__", {})
    for pname, ann in hints.items():
        if pname != "return" and (ann is Context or ann == "Context"):
            return str(pname)
    return None


def _completion_of(value: Any) -> dict[str, Any]:
    if value is None:
        return {"values": []}
    wire = to_wire(value)
    if isinstance(wire, dict):
        if "completion" in wire:
            wire = wire["completion"]
        values = list(wire.get("values") or [])
        out = dict(wire)
        if len(values) > MAX_COMPLETIONS:
            out["values"] = values[:MAX_COMPLETIONS]
            out.setdefault("total", len(values))
            out["hasMore"] = True
        return out
    if isinstance(wire, Iterable) and not isinstance(wire, (str, bytes)):
        values = [str(v) for v in wire]
        out = {"values": values[:MAX_COMPLETIONS], "total": len(values)}
        out["hasMore"] = len(values) > MAX_COMPLETIONS
        return out
    raise TypeError(
        f"a completion function returns a list of strings or a Completion, not {type(value).__name__}"
    )


def _encode_cursor(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode("ascii")


def _decode_cursor(kind: str, cursor: Any) -> int:
    bad = InvalidParams(
        message=f"Invalid params: invalid cursor {cursor!r}", data={"cursor": cursor}
    )
    if not isinstance(cursor, str) or len(cursor) > 64:
        raise bad
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        prefix, _, num = text.partition(":")
        offset = int(num)
    except (ValueError, UnicodeError):
        raise bad from None
    if prefix != kind or offset < 0 or str(offset) != num:
        raise bad
    return offset


def _short(e: Exception) -> str:
    text = str(e)
    return text.splitlines()[0] if text else type(e).__name__
