"""The sessions a :class:`~mcpkit.Server` hosts: what each is opened with (capabilities,
handlers, notification routes), and what they are told when the server's offer changes."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from .._session._kernel import ServerSpec
from .._session._server import ServerSession
from .._transports._base import Transport
from ._session import ClientState, state_of

if TYPE_CHECKING:
    from ._face import ServerLike

_LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
    "prompts": "notifications/prompts/list_changed",
}

#: The server making a run-time change and its list-changed notifications so far (None:
#: none is): told by whoever made the change once it is made whole (and logged for the
#: other workers, so that theirs are told after they made it too), not by each
#: registration within it. Another server's (a parent it is mounted on) are told at once.
_deferred: ContextVar[tuple[object, list[str]] | None] = ContextVar(
    "mcpkit_deferred_changes", default=None
)


@contextlib.contextmanager
def deferring(server: ServerLike) -> Iterator[list[str]]:
    """Collect the list-changed notifications of ``server``'s registrations made in the
    block instead of telling them (the list yielded, in order, each once)."""
    told: list[str] = []
    token = _deferred.set((server, told))
    try:
        yield told
    finally:
        _deferred.reset(token)


def declared_capabilities(server: ServerLike) -> dict[str, Any]:
    """The capabilities ``server`` declares: derived from what is registered and mounted,
    then the extensions and the author's ``extra_capabilities`` (merged per key)."""
    registry = server.registry
    caps: dict[str, Any] = {"logging": {}}
    if registry.tools:
        caps["tools"] = {"listChanged": True}
    if registry.resources or registry.templates:
        caps["resources"] = {"subscribe": True, "listChanged": True}
    if registry.prompts:
        caps["prompts"] = {"listChanged": True}
    if any(m.pending() for m in server._mounts):
        # A mounted server still connecting: what it serves arrives later, announced as a
        # list change, which a client hears of only for the lists declared now.
        for kind in ("tools", "prompts"):
            caps.setdefault(kind, {"listChanged": True})
        caps.setdefault("resources", {"subscribe": True, "listChanged": True})
    if registry.completion is not None or any(m.completes() for m in server._mounts):
        caps["completions"] = {}
    if registry.has_task_tools():
        caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    exts = server._extensions.declared(stateless=False)
    if exts:
        caps["extensions"] = exts
    for key, value in server.extra_capabilities.items():
        if isinstance(value, dict) and isinstance(caps.get(key), dict):
            caps[key] = {**caps[key], **value}
        else:
            caps[key] = value
    return caps


def stateless_view(server: ServerLike, capabilities: dict[str, Any]) -> dict[str, Any]:
    """``capabilities`` as 2026-07-28 clients see them: core tasks there are the tasks
    extension's, and extensions declare themselves per era."""
    caps = {k: v for k, v in capabilities.items() if k != "tasks"}
    exts = {**caps.get("extensions", {}), **server._extensions.declared(stateless=True)}
    extra = server.extra_capabilities.get("extensions")
    if isinstance(extra, dict):
        exts.update(extra)
    if exts:
        caps["extensions"] = exts
    return caps


def build_spec(server: ServerLike) -> ServerSpec:
    """What ``server`` serves with now, as one immutable :class:`ServerSpec`."""
    capabilities = server.capabilities
    extensions = server._extensions
    return ServerSpec(
        server_info=server.server_info,
        capabilities=capabilities,
        handlers=server._handlers,
        instructions=server.instructions,
        stateless_capabilities=stateless_view(server, capabilities),
        extension_methods=extensions.methods(handshake=False),
        handshake_extension_methods=extensions.methods(handshake=True),
        cache_hints={
            "ttlMs": server.stateless.cache_ttl_ms,
            "cacheScope": server.stateless.cache_scope,
        },
        cacheable_methods=extensions.cacheable(),
        # Middleware may wait on anything (the client too): then no request is known short.
        at_once=None if server.middleware else server._protocol.at_once,
    )


def open_session(server: ServerLike, transport: Transport, kw: dict[str, Any]) -> ServerSession:
    """A session of ``server`` over ``transport`` (not yet registered with it), served by
    the server's kernel: every session shares its spec by reference."""
    state = ClientState(server)
    session = ServerSession(
        transport, state=state, around_run=state.serving, kernel=server.kernel, **kw
    )
    state.session = session
    session.set_notification_handler(
        "notifications/roots/list_changed",
        functools.partial(server._protocol.roots_list_changed, session),
    )
    session.set_notification_handler(
        "notifications/tasks/status", server.tasks_manager.on_client_status
    )
    return session


def announce_change(server: ServerLike, kind: str | None) -> None:
    """Tell everyone concerned that ``server``'s ``kind`` list changed (None: only its
    capabilities did, an extension added): caches, mounts, listen streams, sessions."""
    method: str | None = None
    if kind is not None:
        server.registry.invalidate(kind)
        for mount in server._mounted_on:
            mount.sync()
        for mw in server.middleware:  # a list cache drops what changed
            getattr(mw, "invalidate", lambda kind: None)(kind)
        method = _LIST_CHANGED[kind]
    # One new spec for every session and request from now on (a session opened with
    # initialize keeps what it declared then).
    server.kernel.spec = build_spec(server)
    if method is None:
        return
    announce(server, (method,))


def announce(server: ServerLike, methods: Sequence[str]) -> None:
    """Tell list-changed ``methods`` to ``server``'s clients now, or, while a run-time
    change is being made (:func:`deferring`), add them to what it tells when made."""
    deferred = _deferred.get()
    for method in methods:
        if deferred is None or deferred[0] is not server:
            tell_clients(server, method)
        elif method not in deferred[1]:
            deferred[1].append(method)


def tell_clients(server: ServerLike, method: str) -> None:
    """List-changed ``method`` to ``server``'s clients: listen streams and sessions."""
    kind = method.split("/")[1]
    if server._shared is not None:
        # Sessions and listen streams on every worker (each told once, by the worker
        # serving its stream).
        server._shared.list_changed(method)
        return
    server.listeners.post(method)
    # A copy of the sessions: registration may happen in a worker thread while sessions
    # come and go.
    for s in list(server._sessions):
        if s.initialized and kind in s.capabilities:
            state_of(s).post_list_changed(method)
