"""``mcpkit.Client``: one connection to any MCP server, with typed results."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any

from .._exceptions import (
    ConnectionClosed,
    InvalidParams,
    MCPError,
    ProtocolError,
    ResourceNotFound,
    TransportError,
    URLElicitationRequired,
)
from .._session._client import ClientSession
from ..types import (
    CallToolResult,
    CompleteResult,
    GetPromptResult,
    Implementation,
    InitializeResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    Prompt,
    PromptReference,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    Root,
    ServerCapabilities,
    Task,
    Tool,
)
from ..types._extensions import SkillEntry
from . import _apps, _skills
from ._apps import AppsClientExtension, LoadedApp
from ._callbacks import (
    ElicitationCompleteHandler,
    ElicitationHandler,
    ListChangedHandler,
    LoggingHandler,
    ProgressHandler,
    ResourceUpdatedHandler,
    SamplingHandler,
    URLElicitationHandler,
    call_back,
)
from ._connect import connect_client
from ._eras import ERAS, endpoint_key
from ._extensions import (
    ClientExtension,
    ExtensionTaskHandle,
    TasksClientExtension,
    parse_detailed,
)
from ._inbound import LOG_LEVELS, Inbound
from ._listen import Listener, Subscription
from ._lists import Listings
from ._middleware import through_middleware
from ._skills import LoadedSkill, SkillsClientExtension
from ._targets import describe, target_of
from ._taskcalls import ClientTasks
from ._tasks import TaskHandle, TaskReceiver
from ._trace import telemetry_active, traced, with_trace
from ._util import DEFAULT as _DEFAULT
from ._util import (
    ListKind,
    ProgressFn,
    RootsSource,
    answer_lost,
    to_root,
    undeliverable,
)
from ._util import package_version as _package_version
from ._util import parse_result as _parse
from ._util import wire as _wire

#: Seconds a request may wait for its answer unless told otherwise (reset by progress).
DEFAULT_TIMEOUT = 60.0
#: Seconds any request may take at most, however much progress it reports.
DEFAULT_MAX_TIMEOUT = 3600.0
#: Seconds the ``initialize`` exchange may take.
DEFAULT_INIT_TIMEOUT = 30.0


#: Requests that may take long enough for progress to matter.
_PROGRESS_METHODS = frozenset({"tools/call", "resources/read", "prompts/get"})


def _client_info(client_info: Mapping[str, Any] | Implementation | None) -> dict[str, Any]:
    """Our ``clientInfo``: the one given, else ``mcpkit`` and its version."""
    info = _wire(client_info) if client_info is not None else None
    return dict(info) if info else {"name": "mcpkit", "version": _package_version()}


def _roots_source(roots: RootsSource) -> RootsSource:
    """``roots`` as the client keeps them: a function as is, a list as :class:`Root` items."""
    return roots if callable(roots) else [to_root(r) for r in roots]


class Client:
    """A connection to one MCP server; use it as ``async with``.

    ``target`` says where the server is:

    * :func:`mcpkit.stdio` ``(command, env=, cwd=, inherit_env=, on_stderr=)``: started as a
      subprocess and spoken to over stdio; a command string (split like a shell would) or an
      argv list is the same with ``env``, ``cwd``, ... given to ``Client`` (only a safe
      subset of our environment is inherited unless ``inherit_env``);
    * :func:`mcpkit.http` ``(url, headers=, auth=)``: Streamable HTTP, falling back to the
      legacy HTTP+SSE transport; an ``http://``/``https://`` URL string is the same;
    * a server object with ``create_session(transport)`` (an :class:`mcpkit.Server`): run in
      this process over an in-memory pipe;
    * a transport object: used as it is.

    Example::

        async with Client("python server.py") as client:
            tools = await client.list_tools()
            result = await client.call_tool("add", {"a": 1, "b": 2})
            print(result.structured_content)

    Every wait is bounded: requests time out after ``timeout`` seconds (each progress
    notification restarts the clock, up to ``max_timeout``, one hour by default, even with
    ``timeout=None``), ``initialize`` after ``init_timeout``. A server that
    exits raises :class:`~mcpkit.ConnectionClosed` (with its exit code and last stderr lines)
    from every call in flight and every later call.

    Callbacks (plain or ``async`` functions; plain ones run in a worker thread) give the
    client its capabilities; the client declares exactly those it has callbacks for:

    * ``sampling_handler(params: CreateMessageRequestParams, ctx) -> CreateMessageResult``
      (or a dict, or a plain string as the assistant's text); ``sampling_tools=True``
      declares support for ``tools``/``toolChoice``;
    * ``elicitation_handler(params: ElicitRequestFormParams, ctx) -> ElicitResult`` (or a
      dict) for form mode; the accepted content is checked against ``requestedSchema`` and,
      unless ``elicitation_defaults=False``, missing fields get the schema's defaults;
    * ``url_elicitation_handler(params: ElicitRequestURLParams, ctx) -> ElicitResult`` for
      URL mode (also called for each elicitation of a ``-32042`` URLElicitationRequired
      error, before it is raised), and ``elicitation_complete_handler(params)`` when the
      server reports one done;
    * ``roots``: a list of roots (paths, ``file://`` URIs, :class:`Root`) or a function
      returning one; change them with :meth:`set_roots`.

    Notifications: ``logging_handler(params)`` (default: the ``mcpkit.client.server_log``
    Python logger), ``progress_handler(params)`` (progress of every tool call, resource read
    and prompt get: with it set, those requests all ask for progress),
    ``resource_updated_handler(params)``, ``list_changed_handler(kind)`` with kind
    ``"tools"``, ``"resources"`` or ``"prompts"`` (the cached list is dropped first).

    Also: ``name`` (how callbacks and :class:`ClientGroup` call this server; default: its
    ``serverInfo.name``), ``client_info`` (our ``clientInfo``; default ``mcpkit`` and its
    version), ``protocol_version`` (the revision to ask for; default the latest; older
    servers are answered in their own revision), ``validate_output`` (check
    ``structuredContent`` against ``outputSchema``; default on), ``on_stderr`` (each stderr
    line of a spawned server; default: copied to ours), ``middleware`` (around every request
    sent, the first outermost: see :mod:`mcpkit.middleware`), ``apps`` (declare the MCP Apps
    extension: this client is a host that renders views, see docs/apps.md).
    """

    def __init__(
        self,
        target: Any,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        inherit_env: bool = False,
        on_stderr: Callable[[str], None] | None = None,
        headers: Mapping[str, str] | None = None,
        auth: Any = None,
        name: str | None = None,
        client_info: Mapping[str, Any] | Implementation | None = None,
        protocol_version: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_timeout: float | None = DEFAULT_MAX_TIMEOUT,
        init_timeout: float = DEFAULT_INIT_TIMEOUT,
        sampling_handler: SamplingHandler | None = None,
        sampling_tools: bool = False,
        elicitation_handler: ElicitationHandler | None = None,
        url_elicitation_handler: URLElicitationHandler | None = None,
        elicitation_complete_handler: ElicitationCompleteHandler | None = None,
        elicitation_defaults: bool = True,
        roots: RootsSource | None = None,
        logging_handler: LoggingHandler | None = None,
        progress_handler: ProgressHandler | None = None,
        resource_updated_handler: ResourceUpdatedHandler | None = None,
        list_changed_handler: ListChangedHandler | None = None,
        validate_output: bool = True,
        accept_tasks: bool = False,
        middleware: Sequence[Any] = (),
        extensions: Sequence[ClientExtension] = (),
        apps: bool = False,
    ) -> None:
        self.target = target
        self.middleware = list(middleware)
        self.name = name
        #: Where the server is: a :class:`StdioTarget`, an :class:`HTTPTarget`, a server
        #: object or a transport (strings and argv lists become a target here).
        self._target = target_of(
            target,
            env=env,
            cwd=cwd,
            inherit_env=inherit_env,
            on_stderr=on_stderr,
            headers=headers,
            auth=auth,
            timeout=timeout,
        )
        self.client_info: dict[str, Any] = _client_info(client_info)
        self._protocol_version = protocol_version
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.init_timeout = init_timeout
        self._has_roots = roots is not None
        self._roots: RootsSource | None = None if roots is None else _roots_source(roots)
        #: Serves task-augmented sampling/elicitation requests when ``accept_tasks``.
        self._task_receiver = TaskReceiver(self) if accept_tasks else None
        #: The callbacks, and the handlers that hand them what the server sends.
        self._inbound = Inbound(
            self,
            task_receiver=self._task_receiver,
            sampling_handler=sampling_handler,
            sampling_tools=sampling_tools,
            elicitation_handler=elicitation_handler,
            url_elicitation_handler=url_elicitation_handler,
            elicitation_complete_handler=elicitation_complete_handler,
            elicitation_defaults=elicitation_defaults,
            logging_handler=logging_handler,
            progress_handler=progress_handler,
            resource_updated_handler=resource_updated_handler,
            list_changed_handler=list_changed_handler,
        )
        self.validate_output = validate_output

        self._stack: AsyncExitStack | None = None
        self._session: ClientSession | None = None
        self._init: InitializeResult | None = None
        #: The lists of tools, resources and prompts, their caches and the output schemas.
        self._lists = Listings(self)
        #: The tasks we started (tools run as tasks) and the handles on them.
        self._tasks = ClientTasks(self)
        #: The subscriptions/listen stream, under the stateless revision.
        self._listener = Listener(self)
        self._transport: Any = None
        #: The protocol extensions declared: tasks and skills, then those given.
        #: (One given with the id of an official one replaces it.)
        given = {ext.id: ext for ext in extensions}
        if len(given) != len(extensions):
            raise ValueError("an extension id is given twice")
        official: list[ClientExtension] = [TasksClientExtension(), SkillsClientExtension()]
        if apps:  # a host of MCP Apps (docs/apps.md)
            official.append(AppsClientExtension())
        self.extensions: dict[str, ClientExtension] = {e.id: e for e in official} | given
        for ext in self.extensions.values():
            ext.attach(self)

    # ------------------------------------------------------------------ lifecycle

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities declared at ``initialize``: exactly what has a callback,
        and the extensions (``extensions``)."""
        caps = self._inbound.capabilities()
        exts = {}
        for ext_id, ext in self.extensions.items():
            settings = ext.settings()
            if settings is not None:
                exts[ext_id] = settings
        if exts:
            caps["extensions"] = exts
        return caps

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Start (or reach) the server and run the ``initialize`` handshake.

        Prefer ``async with``; a client opened with :meth:`connect` must be closed with
        :meth:`close` by the same task.
        """
        if self._stack is not None:
            raise RuntimeError("this Client is already connected")
        await connect_client(self)

    async def close(self) -> None:
        """Disconnect (and stop a server we started). Safe to call twice."""
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(None, None, None)

    @property
    def session(self) -> ClientSession:
        """The underlying session (raises if not connected)."""
        if self._session is None:
            raise ConnectionClosed("the client is not connected (use `async with Client(...)`)")
        return self._session

    @property
    def connected(self) -> bool:
        """True between a successful connect and close, while the server is reachable."""
        return (
            self._session is not None
            and self._stack is not None
            and not self._session.engine.closed
        )

    @property
    def initialize_result(self) -> InitializeResult:
        """The server's whole answer to ``initialize``."""
        if self._init is None:
            raise ConnectionClosed("the client is not connected")
        return self._init

    @property
    def server_info(self) -> Implementation:
        """The server's name, version and so on."""
        return self.initialize_result.server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server declared it supports."""
        return self.initialize_result.capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if it gave any."""
        return self.initialize_result.instructions

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol revision."""
        return self.initialize_result.protocol_version

    # ------------------------------------------------------------------ requests

    async def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
        progress_handler: ProgressFn | None = None,
        idempotent: bool = False,
    ) -> Any:
        """Send any request and return its raw ``result`` (for methods without a helper).

        ``idempotent=True``: sending it twice does no more than once, so a lost answer
        (2026-07-28) sends it again, as for methods without effects (docs/client.md)."""
        try:
            if self.middleware:
                args = (method, params, timeout, progress_handler, idempotent)
                return await through_middleware(self, *args)
            return await self._send(method, params, timeout, progress_handler, idempotent)
        except URLElicitationRequired as e:
            await self._inbound.url_elicitations_required(e)
            raise
        except ProtocolError as e:
            if undeliverable(e):
                raise TransportError(
                    f"{method}: cannot reach {describe(self._target)}: {e.message}"
                ) from None
            if answer_lost(e):  # docs/client.md: unreachable "at connect or later"
                raise TransportError(
                    f"{method}: lost {describe(self._target)} before the answer: {e.message}"
                ) from None
            raise

    # _send and _deliver are plain functions handing back the coroutine that does the work:
    # two frames less per request on the client's hot path (profiled at 64 in flight).

    def _send(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: Any,
        progress_handler: ProgressFn | None,
        idempotent: bool = False,
    ) -> Awaitable[Any]:
        session = self.session
        t = self.timeout if timeout is _DEFAULT else timeout
        if not idempotent and method == "tools/call" and isinstance(params, dict):
            # Here, past the middleware: the tool actually called is the one that counts.
            idempotent = self._lists.safe_to_repeat(params.get("name"))
        if telemetry_active():  # an application configured OpenTelemetry
            return traced(
                session,
                method,
                params,
                lambda p: self._deliver(method, p, t, progress_handler, idempotent),
            )
        return self._deliver(method, with_trace(params), t, progress_handler, idempotent)

    def _deliver(
        self, method: str, params: Any, t: Any, progress_handler: ProgressFn | None, idem: bool
    ) -> Awaitable[Any]:
        kw: dict[str, Any] = {"timeout": t, "max_timeout": self.max_timeout, "idempotent": idem}
        if progress_handler is not None:

            async def on_progress(progress: float, total: float | None, msg: str | None) -> None:
                await call_back(progress_handler, progress, total, msg)

            kw["on_progress"] = on_progress
            kw["reset_timeout_on_progress"] = True
        elif self._inbound.progress_handler is not None and method in _PROGRESS_METHODS:
            # A client-wide progress handler asks for progress on every long request.
            kw["reset_timeout_on_progress"] = True
        return self.session.send_request(method, params, **kw)

    async def ping(self, *, timeout: float | None = _DEFAULT) -> None:
        """Check the server is alive; raises :class:`~mcpkit.RequestTimeout` if it does not answer.

        The stateless revision has no ``ping``: ``server/discover`` serves as one."""
        method = "server/discover" if self.session.stateless else "ping"
        await self.send_request(method, None, timeout=timeout)

    # tools

    async def list_tools_page(
        self, cursor: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> ListToolsResult:
        """One page of ``tools/list`` (pass the previous page's ``next_cursor`` for the next)."""
        raw = await self.send_request(
            "tools/list", {"cursor": cursor} if cursor else None, timeout=timeout
        )
        return _parse(ListToolsResult, raw, "tools/list")

    async def list_tools(
        self, *, use_cache: bool = True, timeout: float | None = _DEFAULT
    ) -> list[Tool]:
        """Every tool of the server (all pages).

        The list is cached while the server promises to announce changes
        (``tools.listChanged``); ``use_cache=False`` always asks.
        """
        tools: list[Tool] = await self._lists.list_all(
            "tools", "tools/list", ListToolsResult, "tools", use_cache, timeout
        )
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
        progress_handler: ProgressFn | None = None,
        meta: Mapping[str, Any] | None = None,
        idempotent: bool = False,
    ) -> CallToolResult:
        """Call a tool and return its result.

        A tool that failed gives a result with ``is_error`` set (not an exception). When the
        tool declares an ``outputSchema``, ``structured_content`` is checked against it
        (:class:`~mcpkit.InvalidResponse` if it does not match; ``validate_output=False``
        on the client turns that off). ``progress_handler(progress, total, message)`` receives
        the tool's progress; each report restarts the ``timeout`` clock. Cancelling the
        awaiting task tells the server (``notifications/cancelled``).

        A call whose answer is lost under 2026-07-28 (a worker killed mid-call) is sent again
        only if the tool is listed ``readOnlyHint``/``idempotentHint`` or ``idempotent=True``
        says calling twice does no more than once; else :class:`~mcpkit.TransportError`.
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments if type(arguments) is dict else dict(arguments)
        if meta:
            params["_meta"] = dict(meta)
        # 2026-07-28 over HTTP: the tool's x-mcp-header marks must be known to send its headers.
        if self._lists.mirrors_header_params():
            await self._lists.ensure_header_params(name, timeout)
        raw = await self.send_request(
            "tools/call",
            params,
            timeout=timeout,
            progress_handler=progress_handler,
            idempotent=idempotent,
        )
        if isinstance(raw, dict) and raw.get("resultType") == "task":
            # The tasks extension: the server runs it as a task; follow it to its end.
            handle = ExtensionTaskHandle(self, parse_detailed(raw, "tools/call"), name)
            return await handle.result(progress_handler=progress_handler)
        return await self.check_tool_result(name, raw)

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl: int | None = None,
        timeout: float | None = _DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> TaskHandle | ExtensionTaskHandle:
        """Start a tool as a task (``tools/call`` with ``task``); returns a :class:`TaskHandle`.

        Under 2026-07-28 the tasks extension decides: the server answers a task-capable
        tool with a task (an :class:`ExtensionTaskHandle`; one answered at once comes back
        as a finished handle with an empty ``task_id``).

        The server answers at once and runs the tool in the background; ``ttl`` (ms) asks
        how long it keeps the task and its result. Raises :class:`~mcpkit.CapabilityError`
        when the server does not declare ``tasks.requests.tools.call``.

        Example::

            handle = await client.call_tool_as_task("build", {"target": "all"})
            result = await handle.result(timeout=600)
        """
        return await self._tasks.call_tool(name, arguments, ttl, timeout, meta)

    async def list_skills(self) -> list[SkillEntry]:
        """The skills the server offers (``skills/list``, every page): names, descriptions
        and file manifests, without reading any file.

        Example::

            for skill in await client.list_skills():
                print(skill.name, "-", skill.description)
        """
        return await _skills.list_skills(self)

    async def get_skill(self, uri: str) -> SkillEntry:
        """One skill's entry (``skills/get``), by the URI of its ``SKILL.md``."""
        return await _skills.get_skill(self, uri)

    async def load_skill(self, skill: SkillEntry | str) -> LoadedSkill:
        """Read a skill's ``SKILL.md`` and verify it (size, digest, frontmatter against the
        listing); :class:`~mcpkit.SkillVerificationError` when anything differs."""
        return await _skills.load_skill(self, skill)

    async def read_app(self, target: str | Tool) -> LoadedApp:
        """An MCP Apps view (a ``ui://`` URI, or a tool's ``_meta.ui.resourceUri``): its
        HTML, its ``_meta.ui`` and the CSP a host enforces on it."""
        return await _apps.read_app(self, target)

    async def list_model_tools(self) -> list[Tool]:
        """The tools a host hands its model: all but the MCP Apps ``["app"]``-only ones."""
        return await _apps.list_model_tools(self)

    async def call_tool_from_app(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> CallToolResult:
        """Call a tool for a view: -32602 (unknown tool) unless its visibility has "app"."""
        return await _apps.call_tool_from_app(self, name, arguments)

    def task(self, task_id: str, tool: str | None = None) -> TaskHandle | ExtensionTaskHandle:
        """A handle on a task known by its id (e.g. created before a reconnection): a
        :class:`TaskHandle`, or under 2026-07-28 an :class:`ExtensionTaskHandle`.

        Its state is unknown until ``status()`` asks.
        """
        return self._tasks.task(task_id, tool)

    async def list_tasks_page(
        self, cursor: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> tuple[list[Task], str | None]:
        """One page of ``tasks/list``: the tasks and the cursor of the next page (or None)."""
        return await self._tasks.list_page(cursor, timeout)

    async def list_tasks(self, *, timeout: float | None = _DEFAULT) -> list[Task]:
        """Every task of ours the server knows (all pages of ``tasks/list``)."""
        return await self._tasks.list_all(timeout)

    async def _on_task_status(self, params: dict[str, Any] | None) -> None:
        # Called by Inbound for notifications/tasks/status.
        await self._tasks.on_status(params)

    async def check_tool_result(self, name: str, raw: Any) -> CallToolResult:
        """Parse a raw ``tools/call`` result and check it against the tool's ``outputSchema``."""
        result = _parse(CallToolResult, raw, "tools/call")
        lists = self._lists
        if self.validate_output and not result.is_error and not lists.has_no_output_schema(name):
            await lists.check_output(name, result)
        return result

    # resources

    async def list_resources_page(
        self, cursor: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> ListResourcesResult:
        """One page of ``resources/list``."""
        raw = await self.send_request(
            "resources/list", {"cursor": cursor} if cursor else None, timeout=timeout
        )
        return _parse(ListResourcesResult, raw, "resources/list")

    async def list_resources(
        self, *, use_cache: bool = True, timeout: float | None = _DEFAULT
    ) -> list[Resource]:
        """Every resource of the server (all pages; cached like :meth:`list_tools`)."""
        out: list[Resource] = await self._lists.list_all(
            "resources", "resources/list", ListResourcesResult, "resources", use_cache, timeout
        )
        return out

    async def list_resource_templates_page(
        self, cursor: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> ListResourceTemplatesResult:
        """One page of ``resources/templates/list``."""
        raw = await self.send_request(
            "resources/templates/list", {"cursor": cursor} if cursor else None, timeout=timeout
        )
        return _parse(ListResourceTemplatesResult, raw, "resources/templates/list")

    async def list_resource_templates(
        self, *, use_cache: bool = True, timeout: float | None = _DEFAULT
    ) -> list[ResourceTemplate]:
        """Every resource template of the server (all pages)."""
        out: list[ResourceTemplate] = await self._lists.list_all(
            "templates",
            "resources/templates/list",
            ListResourceTemplatesResult,
            "resource_templates",
            use_cache,
            timeout,
        )
        return out

    async def read_resource(
        self, uri: str, *, timeout: float | None = _DEFAULT
    ) -> ReadResourceResult:
        """Read a resource: its ``contents`` (text or base64 ``blob`` items).

        Raises :class:`~mcpkit.ResourceNotFound` when the server has no such resource (a
        2026-07-28 server says so with -32602 naming the URI; it is raised the same way).
        """
        try:
            raw = await self.send_request("resources/read", {"uri": str(uri)}, timeout=timeout)
        except InvalidParams as e:
            data = e.data if isinstance(e.data, dict) else {}
            if self.session.stateless and "uri" in data:
                raise ResourceNotFound(message=e.message, data=e.data) from None
            raise
        return _parse(ReadResourceResult, raw, "resources/read")

    async def subscribe(self, uri: str, *, timeout: float | None = _DEFAULT) -> None:
        """Ask for ``notifications/resources/updated`` when ``uri`` changes.

        Under the stateless revision the client's ``subscriptions/listen`` stream is
        reopened with the new URI (returns once the server acknowledged it).
        """
        if self.session.stateless:
            self.session.check_server_capability("resources/subscribe")
            self._listener.uris.add(str(uri))
            await self._listener.refresh(self.timeout if timeout is _DEFAULT else timeout)
            return
        await self.send_request("resources/subscribe", {"uri": str(uri)}, timeout=timeout)

    async def unsubscribe(self, uri: str, *, timeout: float | None = _DEFAULT) -> None:
        """Stop the updates of :meth:`subscribe`."""
        if self.session.stateless:
            self._listener.uris.discard(str(uri))
            await self._listener.refresh(self.timeout if timeout is _DEFAULT else timeout)
            return
        await self.send_request("resources/unsubscribe", {"uri": str(uri)}, timeout=timeout)

    def _wants_list_changes(self) -> bool:
        """Whether someone listens for list changes (a ``list_changed_handler``)."""
        return self._inbound.list_changed_handler is not None

    async def listen(self, *, timeout: float | None = _DEFAULT) -> Subscription | None:
        """Under the stateless revision, open the ``subscriptions/listen`` stream for the
        list changes ``list_changed_handler`` wants (subscribing to a resource opens it too)
        and return it once the server acknowledged it (:attr:`subscription`). Handshake
        revisions push these notifications unasked: nothing to do there (None)."""
        if self.session.stateless:
            return await self._listener.refresh(self.timeout if timeout is _DEFAULT else timeout)
        return None

    @property
    def subscription(self) -> Subscription | None:
        """The ``subscriptions/listen`` stream of a stateless client (None: none open):
        ``requested`` (the filter asked for), ``acknowledged`` (what the server agreed to
        send), ``refused`` (what it left out), ``id``, ``closed``."""
        return self._listener.current

    @staticmethod
    def clear_era_cache(url: str | None = None) -> None:
        """Forget which era (stateless or handshake) HTTP servers were found to speak: the
        server at ``url``, or every one. The next connection probes afresh."""
        if url is None:
            ERAS.clear()
        else:
            ERAS.forget(endpoint_key(url))

    # prompts

    async def list_prompts_page(
        self, cursor: str | None = None, *, timeout: float | None = _DEFAULT
    ) -> ListPromptsResult:
        """One page of ``prompts/list``."""
        raw = await self.send_request(
            "prompts/list", {"cursor": cursor} if cursor else None, timeout=timeout
        )
        return _parse(ListPromptsResult, raw, "prompts/list")

    async def list_prompts(
        self, *, use_cache: bool = True, timeout: float | None = _DEFAULT
    ) -> list[Prompt]:
        """Every prompt of the server (all pages; cached like :meth:`list_tools`)."""
        out: list[Prompt] = await self._lists.list_all(
            "prompts", "prompts/list", ListPromptsResult, "prompts", use_cache, timeout
        )
        return out

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
    ) -> GetPromptResult:
        """Get a prompt filled in with ``arguments`` (values are sent as strings)."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = {
                k: v if isinstance(v, str) else str(v) for k, v in arguments.items()
            }
        raw = await self.send_request("prompts/get", params, timeout=timeout)
        return _parse(GetPromptResult, raw, "prompts/get")

    # utilities

    async def complete(
        self,
        ref: PromptReference | ResourceTemplateReference | Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = _DEFAULT,
    ) -> CompleteResult:
        """Ask for completions of one argument of a prompt or resource template.

        Example::

            r = await client.complete(PromptReference(name="greet"), "language", "fr")
            print(r.completion.values)
        """
        params: dict[str, Any] = {"ref": _wire(ref), "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        raw = await self.send_request("completion/complete", params, timeout=timeout)
        return _parse(CompleteResult, raw, "completion/complete")

    async def set_logging_level(self, level: str, *, timeout: float | None = _DEFAULT) -> None:
        """Ask the server to send log messages of ``level`` and above."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown logging level {level!r}; one of {', '.join(LOG_LEVELS)}")
        if self.session.stateless:
            # No session to set it on: every later request carries it in its _meta.
            self.session.check_server_capability("logging/setLevel")
            self.session.log_level = level
            return
        await self.send_request("logging/setLevel", {"level": level}, timeout=timeout)

    def _invalidate(self, kind: ListKind) -> None:
        # Called by Inbound when the server announces that a list changed.
        self._lists.invalidate(kind)

    # ------------------------------------------------------------------ roots

    async def set_roots(self, roots: RootsSource) -> None:
        """Replace the roots and tell the server (``notifications/roots/list_changed``).

        Only for a client created with ``roots=`` (it declares the capability at connect).
        """
        if not self._has_roots:
            raise MCPError(
                "this client was created without roots=, so it did not declare the roots capability"
            )
        self._roots = _roots_source(roots)
        await self.notify_roots_changed()

    async def notify_roots_changed(self) -> None:
        """Tell the server the roots changed (when ``roots`` is a function whose answer changed)."""
        session = self._session
        if session is not None and not session.engine.closed and not session.stateless:
            # Stateless revisions ask for roots with each request: nothing to announce.
            await session.notify("notifications/roots/list_changed")

    async def _current_roots(self) -> list[Root]:
        src = self._roots
        if src is None:
            return []
        if callable(src):
            got = await call_back(src)
            return [to_root(r) for r in got]
        return list(src)  # type: ignore[arg-type]
