"""``Server.mount``: another server's tools, resources and prompts served under a prefix.

A mounted server is either a local :class:`~mcpkit.Server` (its definitions are served in
place: no copy of the arguments, no second session; its handlers get a ``Context`` of their
own server, so ``ctx.lifespan_state`` is the child's and its requests to the client ride the
parent's session) or any server a :class:`~mcpkit.Client` reaches (a command, a file, a URL:
one connection, opened when the parent starts serving, forwards every call).

Names are prefixed ``<prefix>_<name>`` (tools, prompts) and URIs ``scheme://<prefix>/rest``
(resources, templates); without a prefix they are served as they are. A change of the
mounted server's lists (its own registrations, or its ``list_changed`` notifications) is
a change of the parent's: its clients are told.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from .._exceptions import InvalidParams, MCPError, ProtocolError, RequestTimeout, TransportError
from .._middleware import MCPRequest, chain
from ..types._appconst import APP_MIME_TYPE, APPS_EXTENSION
from ._apps import declare_mounted_apps, moved_app_meta, serves_apps
from ._context import Context
from ._relay import Flight, Relay, check_capability, rounds_of
from ._tools import error_result
from ._uritemplate import UriTemplate
from ._util import to_wire
from ._visibility import MountedNames

if TYPE_CHECKING:
    from ._server import Server

logger = logging.getLogger("mcpkit.server")

#: Registry table -> the field of a definition that names it.
FIELDS = {"tools": "name", "prompts": "name", "resources": "uri", "templates": "uriTemplate"}
#: Seconds a mounted server is given to cancel a task whose call ended on the parent.
CANCEL_SECONDS = 5.0
#: Seconds before the first attempt to reconnect to a mounted server that went away, and
#: the most between attempts (doubling in between).
RECONNECT_FIRST = 0.5
RECONNECT_MAX = 30.0
#: Seconds the parent's start waits for its remote mounts' first connections (together);
#: a mount not connected by then is served once it connects (its clients told then).
START_WAIT = 5.0
#: Subscriptions one remote mount holds on its server at most.
MAX_UPSTREAM_SUBSCRIPTIONS = 1000

#: Registry table -> the list kind whose change it is.
KINDS = {"tools": "tools", "prompts": "prompts", "resources": "resources", "templates": "resources"}


class Mount:
    """One mounted server: how its names map to the parent's, and its entries there."""

    def __init__(self, parent: Server, prefix: str | None) -> None:
        if prefix is not None and (not prefix or "/" in prefix or ":" in prefix):
            raise ValueError(
                f"invalid mount prefix {prefix!r}: a non-empty name without '/' or ':'"
            )
        self.parent = parent
        self.prefix = prefix
        #: What this mount serves in the parent: table -> parent key -> entry.
        self.entries: dict[str, dict[str, Any]] = {}
        #: (table, key) of the entries this mount put there (a key the parent had stays).
        self.keys: set[tuple[str, str]] = set()

    def name(self, name: str) -> str:
        """The parent's name for a tool or prompt named ``name`` by the mounted server."""
        return name if self.prefix is None else f"{self.prefix}_{name}"

    def uri(self, uri: str) -> str:
        """The parent's URI (or template) for the mounted server's ``uri``."""
        if self.prefix is None:
            return uri
        scheme, sep, rest = uri.partition("://")
        return f"{scheme}://{self.prefix}/{rest}" if sep else f"{self.prefix}/{uri}"

    def inner_uri(self, uri: str) -> str | None:
        """The mounted server's URI for the parent's ``uri`` (None: not under the prefix)."""
        if self.prefix is None:
            return uri
        scheme, sep, rest = uri.partition("://")
        head = f"{self.prefix}/"
        if not sep:
            return uri[len(head) :] if uri.startswith(head) else None
        return f"{scheme}://{rest[len(head) :]}" if rest.startswith(head) else None

    def tool(self, definition: dict[str, Any]) -> dict[str, Any]:
        """The parent's definition of the mounted server's tool: its name prefixed, and the
        view it names (``_meta.ui.resourceUri``) moved as that view's resource is."""
        moved = {**definition, "name": self.name(definition["name"])}
        if self.prefix is not None and "_meta" in definition:
            moved["_meta"] = moved_app_meta(definition["_meta"], self.uri)
        return moved

    def declares_apps(self) -> bool:
        """True when the mounted server declares the MCP Apps extension."""
        raise NotImplementedError

    def install(self, entries: dict[str, dict[str, Any]]) -> None:
        """Serve ``entries`` (table -> key -> entry) in the parent instead of this mount's
        previous ones, and tell the parent's clients of each list that changed."""
        registry = self.parent.registry
        changed: set[str] = set()
        for table in set(self.entries) | set(entries):
            before, after = self.entries.get(table, {}), entries.get(table, {})
            if before.keys() != after.keys() or any(
                before[k].definition != after[k].definition for k in after
            ):
                changed.add(KINDS[table])
            target: dict[str, Any] = getattr(registry, table)
            for key in before:
                if (table, key) in self.keys:
                    target.pop(key, None)
                    registry.scopes.pop((_scope_kind(table), key), None)
                    self.keys.discard((table, key))
            for key, entry in after.items():
                if key in target:
                    logger.warning("mount: %s %r is served by the parent already; kept", table, key)
                    continue
                target[key] = entry
                self.keys.add((table, key))
                if entry.scopes:
                    registry.scopes[(_scope_kind(table), key)] = tuple(entry.scopes)
        self.entries = entries
        if self.declares_apps() or serves_apps(entries):
            # Its views and app-only tools served here as there: the extension declared,
            # app-only tools kept from clients that are not hosts.
            declare_mounted_apps(self.parent)
        for kind in sorted(changed):
            self.parent._changed(kind)

    def completes(self) -> bool:
        """True when the mounted server completes arguments (the parent then declares it)."""
        raise NotImplementedError

    def pending(self) -> bool:
        """True while the mounted server is still connecting after the parent started."""
        return False

    def running(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Entered while the parent serves (the mounted server's lifespan, its connection)."""
        raise NotImplementedError

    async def complete(self, ref: dict[str, Any], params: dict[str, Any], rc: Any) -> Any:
        """``completion/complete`` for an entry of this mount (``ref`` is the mounted name)."""
        raise NotImplementedError


def _scope_kind(table: str) -> str:
    return {"tools": "tool", "prompts": "prompt"}.get(table, "resource")


# ---------------------------------------------------------------------------- local


class _Served:
    """A local server's definition under the parent: its own name there, the rest delegated.

    Calls get a ``Context`` of the mounted server (its lifespan state, its registry) over
    the parent's request and session.
    """

    def __init__(self, inner: Any, owner: Server, mount: Mount, definition: dict[str, Any]) -> None:
        self.inner = inner
        self.owner = owner
        self.mount = mount
        self.definition = definition
        self.scopes: tuple[str, ...] = ()

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def inner_ref(self) -> dict[str, Any]:
        """The completion ``ref`` naming this entry on the mounted server."""
        d = self.inner.definition
        if "uriTemplate" in d:
            return {"type": "ref/resource", "uri": d["uriTemplate"]}
        return {"type": "ref/prompt", "name": d["name"]}

    def context(self, ctx: Context[Any] | None) -> Context[Any] | None:
        if ctx is None:
            return None
        own: Context[Any] = Context(self.owner, ctx._request, ctx._session)
        own._begin_task = ctx._begin_task
        # ctx.enable(names=...) in the mounted server names its own components.
        own._mounted = MountedNames.under(ctx._mounted, ctx._server, self.mount)
        return own

    async def _through(
        self,
        method: str,
        params: dict[str, Any],
        ctx: Context[Any] | None,
        run: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        """``run(params)`` behind the mounted server's own middleware, as that server would
        serve ``method`` (names and URIs its own; the request and session the parent's)."""
        middleware = self.owner.middleware
        if not middleware:
            return await run(params)

        async def last(request: MCPRequest) -> Any:
            return await run(request.params or {})

        rc = ctx._request if ctx is not None else None
        return to_wire(await chain(middleware, last)(MCPRequest(method, params, "server", rc)))

    async def _named(
        self, method: str, arguments: dict[str, Any], ctx: Context[Any] | None, how: str
    ) -> Any:
        """A tool call or prompt get (``how``: the inner entry's method) by the mounted name."""
        own = self.context(ctx)
        serve = getattr(self.inner, how)
        params = {"name": self.inner.definition["name"], "arguments": arguments}
        return await self._through(
            method, params, ctx, lambda p: serve(p.get("arguments") or {}, own)
        )

    # tools
    async def call(self, arguments: dict[str, Any], ctx: Context[Any] | None) -> Any:
        return await self._named("tools/call", arguments, ctx, "call")

    # prompts
    async def get(self, arguments: dict[str, Any], ctx: Context[Any] | None) -> Any:
        return await self._named("prompts/get", arguments, ctx, "get")

    # resources and templates
    def match(self, uri: str) -> dict[str, Any] | None:
        inner = self.mount.inner_uri(uri)
        found: dict[str, Any] | None = None if inner is None else self.inner.match(inner)
        return found

    async def subscribe(self, uri: str) -> None:
        """A resource the mounted server forwards from one of its own remote mounts:
        subscribed there, under the mounted server's URI."""
        upstream = getattr(self.inner, "subscribe", None)
        inner = self.mount.inner_uri(uri)
        if upstream is not None and inner is not None:
            await upstream(inner)

    async def read(self, *args: Any) -> list[dict[str, Any]]:
        ctx = args[-1]
        own = self.context(ctx)
        if len(args) == 1:  # a static resource: read(ctx)
            uri = self.inner.definition["uri"]

            async def run(p: dict[str, Any]) -> Any:
                return {"contents": await self.inner.read(own)}
        else:  # a template: read(uri, variables, ctx)
            uri = self.mount.inner_uri(args[0])
            variables = args[1]

            async def run(p: dict[str, Any]) -> Any:
                return {"contents": await self.inner.read(uri, variables, own)}

        result = await self._through("resources/read", {"uri": uri}, ctx, run)
        return [self._outer(c) for c in result.get("contents", [])]

    def _outer(self, content: Any) -> Any:
        if isinstance(content, dict) and isinstance(content.get("uri"), str):
            return {**content, "uri": self.mount.uri(content["uri"])}
        return content


class LocalMount(Mount):
    """A :class:`~mcpkit.Server` of this process, served in place."""

    def __init__(self, parent: Server, child: Server, prefix: str | None) -> None:
        if child is parent:
            raise ValueError("a server cannot mount itself")
        super().__init__(parent, prefix)
        self.child = child
        child._mounted_on.append(self)

    def sync(self) -> None:
        """Serve the child's current definitions (called again on each of its changes)."""
        reg = self.child.registry
        entries: dict[str, dict[str, Any]] = {}
        for table, field in FIELDS.items():
            rename = self.name if field == "name" else self.uri
            items: dict[str, Any] = {}
            entries[table] = items
            for key, inner in getattr(reg, table).items():
                if self.child.visibility.hides(None, _scope_kind(table), key, inner.definition):
                    continue  # hidden by its own server: hidden here too
                new = rename(key)
                if table == "tools":
                    definition = self.tool(inner.definition)
                else:
                    definition = {**inner.definition, field: new}
                items[new] = self._served(inner, definition, (_scope_kind(table), key))
        self.install(entries)

    def _served(
        self, inner: Any, definition: dict[str, Any], scope_key: tuple[str, str]
    ) -> _Served:
        served = _Served(inner, self.child, self, definition)
        served.scopes = self.child.registry.scopes.get(scope_key, ())
        return served

    def completes(self) -> bool:
        return "completions" in self.child.capabilities

    def declares_apps(self) -> bool:
        return APPS_EXTENSION in self.child.extensions

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.child.running():
            yield

    async def resource_updated(self, uri: str) -> None:
        await self.parent.notify_resource_updated(self.uri(uri))

    async def complete(self, ref: dict[str, Any], params: dict[str, Any], rc: Any) -> Any:
        return await self.child._protocol.complete(rc, {**params, "ref": ref})


# ---------------------------------------------------------------------------- remote

#: The parent's request a remote mount's call is serving (read by the client's callbacks).
_serving: contextvars.ContextVar[Context[Any] | None] = contextvars.ContextVar(
    "mcpkit_mount_serving", default=None
)


class _Forwarded:
    """A remote server's tool, prompt, resource or template, forwarded through a Client."""

    context_param = "ctx"
    task_support = None
    defer_task = False
    header_params = ()
    scopes = ()
    #: A forwarded call waits on the mounted server: never served in a reader's step.
    at_once = False

    def __init__(
        self, mount: RemoteMount, kind: str, inner: str, definition: dict[str, Any]
    ) -> None:
        self.mount = mount
        self.kind = kind
        self.inner = inner
        self.definition = definition
        self.name = definition.get("name", inner)
        params = definition.get("arguments") or []
        #: What completion checks of a prompt or template (their argument names).
        self.info = _Params({a.get("name") for a in params if isinstance(a, dict)})
        self.matcher = _Params(set())
        self.validate = None
        if kind == "template":
            self._template = UriTemplate(inner)
            self.matcher = _Params(set(self._template.variables))
        execution = definition.get("execution") if kind == "tool" else None
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        #: As the mounted server runs it: the parent then runs the forwarded call as its
        #: own task for a client that asks (or must ask) for one.
        self.task_support = support if support in ("optional", "required") else None

    def inner_ref(self) -> dict[str, Any]:
        """The completion ``ref`` naming this entry on the mounted server."""
        if self.kind == "template":
            return {"type": "ref/resource", "uri": self.inner}
        return {"type": "ref/prompt", "name": self.inner}

    # tools
    async def call(self, arguments: dict[str, Any], ctx: Context[Any] | None) -> Any:
        async def send(c: Any, progress: Any) -> Any:
            if self.task_support == "required" and not c.session.stateless:
                # A 2025-11-25 server runs it only as a task: start one there, await its end
                # (under 2026-07-28 call_tool follows the task the server answers with).
                handle = await c.call_tool_as_task(self.inner, arguments)
                try:
                    return await handle.result()
                except anyio.get_cancelled_exc_class():
                    with anyio.move_on_after(CANCEL_SECONDS, shield=True):
                        await handle.cancel()  # the parent's call ended: so does its task
                    raise
            return await c.call_tool(self.inner, arguments, progress_handler=progress)

        try:
            result = await self.mount.forward(ctx, send)
        except ProtocolError:
            raise
        except MCPError as e:
            return error_result(f"Error executing tool {self.name}: {e}")
        return result.to_wire()

    # prompts
    async def get(self, arguments: dict[str, Any], ctx: Context[Any] | None) -> Any:
        result = await self.mount.forward(ctx, lambda c, p: c.get_prompt(self.inner, arguments))
        return result.to_wire()

    # resources and templates
    def match(self, uri: str) -> dict[str, Any] | None:
        inner = self.mount.inner_uri(uri)
        if inner is None:
            return None
        found: dict[str, Any] | None = self._template.match(inner)
        return found

    async def subscribe(self, uri: str) -> None:
        """Subscribe upstream to the mounted server's resource behind the parent's ``uri``."""
        inner = self.mount.inner_uri(uri)
        if inner is not None:
            await self.mount.subscribe(inner)

    async def read(self, *args: Any) -> list[dict[str, Any]]:
        ctx = args[-1]
        uri = self.inner if len(args) == 1 else self.mount.inner_uri(args[0])
        result = await self.mount.forward(ctx, lambda c, p: c.read_resource(uri))
        wire = result.to_wire()
        return [
            {**c, "uri": self.mount.uri(c["uri"])} if isinstance(c.get("uri"), str) else c
            for c in wire.get("contents", [])
        ]


async def _first_of(*waits: Callable[[], Awaitable[Any]]) -> None:
    """Return once the first of ``waits`` returns (the others are cancelled)."""
    async with anyio.create_task_group() as tg:

        async def run(wait: Callable[[], Awaitable[Any]]) -> None:
            await wait()
            tg.cancel_scope.cancel()

        for wait in waits:
            tg.start_soon(run, wait)


class _Params:
    """The argument names of a forwarded prompt or template (as completion checks them)."""

    def __init__(self, names: set[Any]) -> None:
        self.params = names
        self.variables = names

    def __contains__(self, name: object) -> bool:
        return name in self.params


class _HostOfApps:
    """The MCP Apps extension as a remote mount's client declares it (a client extension:
    the server layer does not import the client's, its sibling)."""

    id = APPS_EXTENSION
    result_types: frozenset[str] = frozenset()

    def attach(self, client: Any) -> None:
        """Nothing to keep."""

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [APP_MIME_TYPE]}


class RemoteMount(Mount):
    """A server reached through a :class:`~mcpkit.Client` (one connection, while serving)."""

    def __init__(self, parent: Server, target: Any, prefix: str | None) -> None:
        super().__init__(parent, prefix)
        #: A :class:`~mcpkit.Client` (typed loosely: the server layer does not import the
        #: client's, its sibling).
        self.client: Any = target
        # What the mounted server sends goes to the parent's client (a Client given with
        # callbacks of its own keeps them), and list changes re-list.
        inbound = self.client._inbound
        inbound.list_changed_handler = self._list_changed
        for attr, value in (
            ("sampling_handler", self._ask("sampling/createMessage")),
            ("elicitation_handler", self._ask("elicitation/create")),
            ("url_elicitation_handler", self._ask("elicitation/create")),
            ("logging_handler", self._log),
            ("resource_updated_handler", self._updated),
        ):
            if getattr(inbound, attr) is None:
                setattr(inbound, attr, value)
        if not self.client._has_roots and inbound.roots_handler is None:
            inbound.roots_handler = self._roots
        # The parent is the host's server: the mounted server lists it every tool, the
        # app-only ones too, and the parent keeps those from its own clients that are not
        # hosts, as the mounted server would (see declare_mounted_apps).
        self.client.extensions.setdefault(APPS_EXTENSION, _HostOfApps())
        self._tg: TaskGroup | None = None
        #: The parent's requests being forwarded (server requests go to the only one).
        self.in_flight: set[Flight] = set()
        #: Calls kept across the rounds of 2026-07-28 requests (see ``_relay``).
        self.relay = Relay(self)
        #: The mounted server's URIs subscribed to on this connection. A subscription stays
        #: while mounted: whether any parent session (on any worker) still wants it is not
        #: known here, and updates nobody asked for are dropped by the parent per session.
        self.subscribed: set[str] = set()
        #: The first connection's outcome, while the parent starts (see ``running``).
        self._first_error: Exception | None = None
        self._background = False
        self._connecting = False
        self._first: anyio.Event | None = None

    def completes(self) -> bool:
        return self.client.connected and self.client.server_capabilities.completions is not None

    def declares_apps(self) -> bool:
        if not self.client.connected:
            return False
        exts = self.client.server_capabilities.model_dump(by_alias=True).get("extensions")
        return isinstance(exts, dict) and APPS_EXTENSION in exts

    def pending(self) -> bool:
        return self._background and not self.client.connected

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        stop = anyio.Event()
        first = self._first = anyio.Event()
        self._first_error = None
        self._background = False
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._keep, stop, first)
                failed = await self._await_start()
                if failed is None:
                    try:
                        yield
                    finally:
                        # Told, not cancelled: the client is left as it was entered (a
                        # stdio server stopped in full), by the task that entered it. One
                        # still connecting (a silent server) has nothing to leave: cancelled.
                        stop.set()
                        if self._connecting:
                            tg.cancel_scope.cancel()
        finally:
            self._first = None
        if failed is not None:
            raise failed  # outside the task group: the error itself, not a group
        self.subscribed.clear()
        self.install({})

    async def _await_start(self) -> Exception | None:
        """The parent's remote mounts connect together: the last one entered waits for all
        their first connections, at most :data:`START_WAIT` seconds, and returns the error
        of one that failed at once (the parent's startup error). One that has not answered
        by then (a silent server) must not hold the parent's start: it goes on connecting
        in the background, its entries listed (and the clients told) when it arrives."""
        mounts = [m for m in self.parent._mounts if isinstance(m, RemoteMount)]
        if not mounts or mounts[-1] is not self:
            return None
        entered = [(m, m._first) for m in mounts if m._first is not None]
        with anyio.move_on_after(START_WAIT):
            for _, first in entered:
                await first.wait()
        failed = next((m._first_error for m, _ in entered if m._first_error is not None), None)
        if failed is not None:
            return failed
        late = [m for m, first in entered if not first.is_set()]
        for m in late:
            m._background = True
            logger.warning(
                "mount %s: the mounted server did not answer within %g s; serving without "
                "it meanwhile (listed once it connects)",
                m.prefix or "(no prefix)",
                START_WAIT,
            )
        if late:
            self.parent._changed(None)  # declare the lists they may bring
        return None

    async def _keep(self, stop: anyio.Event, first: anyio.Event) -> None:
        """Hold the connection (entered and left in this one task), and make it again when
        the mounted server goes away: its entries leave the parent's lists meanwhile."""
        delay = RECONNECT_FIRST
        while not stop.is_set():
            try:
                self._connecting = True
                async with self.client, anyio.create_task_group() as tg:
                    self._connecting = False
                    self._tg = tg  # list again on changes, in tasks of this connection
                    await self.sync()
                    await self._resubscribe()
                    first.set()
                    delay = RECONNECT_FIRST
                    await _first_of(stop.wait, self.client.session.engine.wait_closed)
                    tg.cancel_scope.cancel()
                if stop.is_set():
                    return
                logger.warning("mount: the mounted server's connection ended; reconnecting")
            except Exception as e:  # whatever the mounted server does, the parent goes on
                if not first.is_set() and not self._background:
                    self._first_error = e  # the parent's startup error (raised there)
                    first.set()
                    return
                logger.warning("mount: the mounted server failed (%r); reconnecting", e)
            finally:
                self._connecting = False
            self._tg = None
            self.install({})
            with anyio.move_on_after(delay):
                await stop.wait()
            delay = min(delay * 2, RECONNECT_MAX)

    async def _resubscribe(self) -> None:
        """The subscriptions held before a reconnection, made again on the new connection."""
        held, self.subscribed = self.subscribed, set()
        for uri in sorted(held):
            await self._subscribe_again(uri)

    async def _subscribe_again(self, uri: str) -> None:
        try:
            await self.subscribe(uri)
        except MCPError as e:
            logger.warning("mount: could not subscribe to %s again: %s", uri, e)

    async def sync(self) -> None:
        """Forward what the mounted server lists now."""
        c = self.client
        caps = c.server_capabilities
        entries: dict[str, dict[str, Any]] = {
            "tools": {},
            "prompts": {},
            "resources": {},
            "templates": {},
        }
        if caps.tools is not None:
            for tool in await c.list_tools(use_cache=False):
                d = self.tool(tool.to_wire())
                entries["tools"][d["name"]] = _Forwarded(self, "tool", tool.name, d)
        if caps.prompts is not None:
            for prompt in await c.list_prompts():
                d = {**prompt.to_wire(), "name": self.name(prompt.name)}
                entries["prompts"][d["name"]] = _Forwarded(self, "prompt", prompt.name, d)
        if caps.resources is not None:
            for res in await c.list_resources():
                d = {**res.to_wire(), "uri": self.uri(res.uri)}
                entries["resources"][d["uri"]] = _Forwarded(self, "resource", res.uri, d)
            for tpl in await c.list_resource_templates():
                d = {**tpl.to_wire(), "uriTemplate": self.uri(tpl.uri_template)}
                entries["templates"][d["uriTemplate"]] = _Forwarded(
                    self, "template", tpl.uri_template, d
                )
        self.install(entries)

    async def subscribe(self, uri: str) -> None:
        """Subscribe once to the mounted server's ``uri`` (if it offers subscriptions)."""
        resources = self.client.server_capabilities.resources
        if uri in self.subscribed or resources is None or not resources.subscribe:
            return
        if len(self.subscribed) >= MAX_UPSTREAM_SUBSCRIPTIONS:
            # Each is a subscription held on the mounted server for as long as the mount:
            # a client naming endless template URIs must not make endless ones.
            raise InvalidParams(
                message=f"too many subscriptions to the mounted server's resources ({uri})"
            )
        await self.client.subscribe(uri)
        self.subscribed.add(uri)

    async def _updated(self, params: Any) -> None:
        await self.parent.notify_resource_updated(self.uri(params.uri))

    async def _list_changed(self, kind: str) -> None:
        # Told on the client's reader, which must stay free to read the lists' answers:
        # list again in a task of our own.
        if self._tg is not None:
            self._tg.start_soon(self._relist, kind)

    async def _relist(self, kind: str) -> None:
        try:
            await self.sync()
        except MCPError as e:
            logger.warning("mount: could not list the mounted server's %s again: %s", kind, e)

    async def forward(self, ctx: Context[Any] | None, send: Any) -> Any:
        """Run ``send(client, progress)`` for the parent's request ``ctx`` serves."""
        rounds = rounds_of(ctx)
        tg = self._tg
        if rounds is not None and ctx is not None and tg is not None and self._handshake_era():
            # A 2026-07-28 request to a server of a handshake revision: what it asks meanwhile
            # reaches the client as input requests, the call kept across the rounds.
            return await self.relay.serve(ctx, rounds, send, tg)
        rc = ctx._request if ctx is not None else None
        progress = None
        if rc is not None and rc.request.progress_token is not None:

            async def progress(value: float, total: float | None, message: str | None) -> None:
                await rc.report_progress(value, total, message)

        token = _serving.set(ctx)
        flight = Flight(ctx)
        self.in_flight.add(flight)
        try:
            return await send(self.client, progress)
        finally:
            self.in_flight.discard(flight)
            _serving.reset(token)

    def _handshake_era(self) -> bool:
        """True when the mounted server is spoken to under a handshake revision."""
        return bool(self.client.connected and not self.client.session.stateless)

    def _flight(self) -> Flight | None:
        """The forwarded request a server request of the mounted server belongs to: the
        only one in flight (a request over stdio names no request of ours)."""
        return next(iter(self.in_flight)) if len(self.in_flight) == 1 else None

    def _related(self) -> Context[Any] | None:
        """The parent's request a notification of the mounted server belongs to: the one
        whose call it arrived in (the stateless revision asks inside the call), else the
        only one in flight."""
        ctx = _serving.get()
        if ctx is None:
            flight = self._flight()
            ctx = flight.ctx if flight is not None else None
        return ctx

    async def _asked(self, method: str, params: dict[str, Any]) -> Any:
        """The parent's client's answer to the mounted server's ``method`` request."""
        ctx = _serving.get()
        try:
            if ctx is not None:
                # Asked inside the call, in the parent's request's own task (a 2026-07-28
                # server's input requests): an InputRequired is that request's to answer with.
                check_capability(ctx, method, params)
                return await ctx._send(method, params, None)
            flight = self._flight()
            if flight is None:
                raise ProtocolError(
                    -32603, f"{method}: no request of the parent's client to ask through"
                )
            # Asked the way the parent's client takes it: a request on its stream, or
            # (2026-07-28) an input request of the relayed call, answered by its retry.
            return await flight.ask(method, params)
        except (TransportError, RequestTimeout) as e:
            # The parent's client left or did not answer: the mounted server is told so. Not
            # a fault of ours to log with a traceback (a flood of questions would be a flood
            # of tracebacks).
            raise ProtocolError(
                -32603, f"{method}: the parent's client could not answer: {e}"
            ) from None

    def _ask(self, method: str) -> Any:
        async def ask(params: Any, _server_rc: Any) -> Any:
            return await self._asked(method, params.to_wire())

        return ask

    async def _roots(self, _server_rc: Any) -> Any:
        return await self._asked("roots/list", {})

    async def _log(self, params: Any) -> None:
        ctx = self._related()
        if ctx is not None and ctx._request is not None:
            with contextlib.suppress(MCPError):
                await ctx._request.notify("notifications/message", params.to_wire())

    async def complete(self, ref: dict[str, Any], params: dict[str, Any], rc: Any) -> Any:
        argument = params.get("argument") or {}
        context = (params.get("context") or {}).get("arguments")
        result = await self.forward(
            None,
            lambda c, p: c.complete(
                ref, argument.get("name"), argument.get("value", ""), context=context
            ),
        )
        wire: dict[str, Any] = result.to_wire()
        return wire


def mount_of(parent: Server, source: Any, prefix: str | None) -> LocalMount | RemoteMount:
    """The mount for ``source``: a local :class:`~mcpkit.Server` or a :class:`~mcpkit.Client`."""
    from ._server import Server  # the facade imports this module: resolved at call time

    if isinstance(source, Server):
        return LocalMount(parent, source, prefix)
    if hasattr(source, "call_tool") and hasattr(source, "_inbound"):
        return RemoteMount(parent, source, prefix)
    raise TypeError(
        f"mount() takes a Server or a Client, not {type(source).__name__}: for a command, a "
        f"file or a URL, mount Client({source!r}) (connected while this server serves)"
    )
