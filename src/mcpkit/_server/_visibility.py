"""Tags, versions and visibility: which of a server's tools, resources and prompts a client
sees, server-wide and per session.

A component's tags and version are listed in its ``_meta`` (``_rules``: :data:`TAGS_META_KEY`,
:data:`VERSION_META_KEY`; a vendor prefix, as the spec asks of keys it does not define) and
read back from there: a component mounted from another server, in process or through a
client, keeps the tags its own server gave it.

Visibility is an ordered list of :class:`Rule` (enable or disable what matches), the later
deciding over the earlier: the server's own (``include_tags``/``exclude_tags`` at
construction, then ``server.enable``/``server.disable``), then the session's
(``ctx.enable``/``ctx.disable``), so a session may see what the server hides (admin tools
unlocked by a login tool). A rule that decides every component (no criteria, or
``only=True``) replaces the rules before it, and one with the criteria of an earlier rule
replaces that one: the lists stay as short as what they say.

A hidden component is left out of lists, and calling, reading, subscribing to or getting it
is answered as for one that does not exist. Server-wide changes at run time are made on
every worker sharing a backend through the registration log (a change function, as
``@server.runtime_change``); a session's rules are part of its snapshot, so every worker
serving the session applies them.

Per session means per handshake-era session (a connection's ``initialize``): revision
2026-07-28 has no session, so ``ctx.enable``/``ctx.disable`` raise there (see
:func:`session_change`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .._session._base import RequestContext
from .._session._server import ServerSession
from ._hosted import announce_change
from ._registry import decode_cursor, encode_cursor
from ._rules import CHANGE_NAME, CHANGED, LISTS, MAX_SESSION_RULES, Rule, added, shown
from ._session import state_of

if TYPE_CHECKING:
    from ._face import ServerLike


class Visibility:
    """What one server shows: its rules, and the lists and lookups filtered by them with a
    request's session's rules (module docs). ``server.visibility``."""

    def __init__(
        self,
        server: ServerLike,
        include_tags: Collection[str] | None = None,
        exclude_tags: Collection[str] | None = None,
    ) -> None:
        self._server = server
        rules: tuple[Rule, ...] = ()
        if include_tags is not None:
            if not include_tags:
                raise ValueError("include_tags is empty: nothing would be shown")
            rules = (Rule.of(True, tags=include_tags, only=True),)
        if exclude_tags:
            rules = (*rules, Rule.of(False, tags=exclude_tags))
        #: The server-wide rules, in order.
        self.rules = rules
        # Registered now, so that a worker makes the changes of the others from the start.
        runtime_change = cast(Any, server).runtime_change
        self._shared_change = runtime_change(name=CHANGE_NAME)(self._make)

    # ------------------------------------------------------------------ server-wide

    def change(self, rule: Rule) -> None:
        """Add a server-wide ``rule`` here and on every worker sharing the backend."""
        self._shared_change(rule.to_json())

    def _make(self, rule: dict[str, Any]) -> None:
        before = self.shown_keys(self.rules)
        self.rules = added(self.rules, Rule.from_json(rule))
        after = self.shown_keys(self.rules)
        for kind, keys in after.items():
            if keys != before[kind]:
                announce_change(self._server, kind)

    def shown_keys(self, rules: Sequence[Rule]) -> dict[str, set[tuple[str, str]]]:
        """Per list-changed kind, the components ``rules`` show."""
        registry = self._server.registry
        found: dict[str, set[tuple[str, str]]] = {k: set() for k in CHANGED.values()}
        for kind, table in LISTS.values():
            for key, item in getattr(registry, table).items():
                if shown(rules, kind, key, item.definition):
                    found[CHANGED[kind]].add((table, key))
        return found

    # ------------------------------------------------------------------ serving

    def rules_for(self, rc: RequestContext | None) -> tuple[Rule, ...]:
        """The rules deciding what request ``rc`` sees: the server's, then its session's."""
        return self.session_rules(rc.session if rc is not None else None)

    def session_rules(self, session: object) -> tuple[Rule, ...]:
        """The rules deciding what ``session`` sees (the server's alone when it is not a
        handshake-era :class:`ServerSession`)."""
        own = state_of(session).visibility if isinstance(session, ServerSession) else ()
        return (*self.rules, *own) if own else self.rules

    def hides_target(self, session: object, method: str, params: Mapping[str, Any] | None) -> bool:
        """Whether the tool, prompt or resource that request ``method`` with ``params``
        names is hidden from ``session`` (None: the server's rules alone). What the HTTP
        authorization gate asks before it checks the target's own scopes: a hidden target
        is answered as an unknown one there too, not with a 403 naming its scopes."""
        rules = self.session_rules(session)
        if not rules or not params:
            return False
        registry = self._server.registry
        if method in ("tools/call", "prompts/get"):
            kind = "tool" if method == "tools/call" else "prompt"
            name = params.get("name")
            table = registry.tools if kind == "tool" else registry.prompts
            found = table.get(name) if isinstance(name, str) else None
            return found is not None and not shown(rules, kind, str(name), found.definition)
        uri = params.get("uri")
        if method in ("resources/read", "resources/subscribe") and isinstance(uri, str):
            return self._hides_uri(rules, uri)
        return False

    def hides(self, rc: RequestContext | None, kind: str, key: str, definition: Any) -> bool:
        """Whether component ``key`` of ``kind`` is hidden from request ``rc``."""
        rules = self.rules_for(rc)
        return bool(rules) and not shown(rules, kind, key, definition)

    def hides_uri(self, rc: RequestContext | None, uri: str) -> bool:
        """Whether the resource (or template) serving ``uri`` is hidden from ``rc``."""
        rules = self.rules_for(rc)
        return bool(rules) and self._hides_uri(rules, uri)

    def _hides_uri(self, rules: Sequence[Rule], uri: str) -> bool:
        registry = self._server.registry
        found = registry.resources.get(uri)
        if found is not None:
            return not shown(rules, "resource", uri, found.definition)
        for template, entry in registry.templates.items():
            if entry.match(uri) is not None:
                return not shown(rules, "resource", template, entry.definition)
        return False

    def definitions(self, rc: RequestContext | None, kind: str) -> list[dict[str, Any]]:
        """Every definition of list ``kind`` (``tools``, ``resources``, ``templates``,
        ``prompts``) that request ``rc`` may see, in registration order (unpaged)."""
        return self._definitions(self.rules_for(rc), kind)

    def _definitions(self, rules: Sequence[Rule], kind: str) -> list[dict[str, Any]]:
        component, table = LISTS[kind]
        return [
            d.definition
            for key, d in getattr(self._server.registry, table).items()
            if not rules or shown(rules, component, key, d.definition)
        ]

    def page(
        self, rc: RequestContext | None, kind: str, params: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The page of list ``kind`` that ``params`` asks for, of what ``rc`` may see."""
        registry = self._server.registry
        keys = self._server.stateless
        rules = self.rules_for(rc)
        if not rules:  # nothing hidden: the registry's cached pages
            return registry.page(kind, params, keys)
        items = self._definitions(rules, kind)
        cursor = params.get("cursor") if params else None
        start = decode_cursor(kind, cursor, keys) if cursor is not None else 0
        size = registry.page_size
        if size is None:
            return {kind: items[start:]}
        end = start + size
        result: dict[str, Any] = {kind: items[start:end]}
        if end < len(items):
            result["nextCursor"] = encode_cursor(kind, end, keys)
        return result


async def session_change(server: ServerLike, rc: RequestContext | None, rule: Rule | None) -> None:
    """Add ``rule`` to the rules of the session request ``rc`` came on (None: drop them all),
    for every worker serving it, and tell its client which lists changed.

    Revision 2026-07-28 has no session, so this raises ``RuntimeError`` there. Keying the
    rules by the caller's principal instead would carry one conversation's unlocking into
    every other conversation of the same user (each of their clients, at once), and would
    mean nothing without authorization; what a caller may see there follows from who calls
    (the server's rules and each component's ``scopes``).
    """
    session = rc.session if rc is not None else None
    n = rc.negotiated if rc is not None else None
    if rc is None or not isinstance(session, ServerSession) or (n is not None and n.stateless):
        raise RuntimeError(
            "ctx.enable/ctx.disable change what one session sees, and this request has no "
            "session (revision 2026-07-28 is sessionless): use server.enable/server.disable"
        )
    state = state_of(session)
    if rule is None:
        rules: tuple[Rule, ...] = ()
    else:
        rules = added(state.visibility, rule)
        if len(rules) > MAX_SESSION_RULES:
            raise ValueError(
                f"a session holds at most {MAX_SESSION_RULES} visibility rules (enable or "
                "disable by tag, or with only=True, to say more in fewer)"
            )
    vis = server.visibility
    before = vis.shown_keys((*vis.rules, *state.visibility))
    state.visibility = rules
    after = vis.shown_keys((*vis.rules, *rules))
    # Saved first: the worker holding the session's stream learns the rules before the
    # list change it forwards, so the client listing again sees the new set anywhere.
    await session.state_changed()
    for kind, keys in after.items():
        if keys != before[kind] and session.initialized and kind in session.capabilities:
            state.post_list_changed(f"notifications/{kind}/list_changed")


class VisibilityControl:
    """``Server.enable`` and ``Server.disable`` (the server's rules, on every worker)."""

    __slots__ = ()

    def enable(
        self,
        *,
        names: Collection[str] | None = None,
        tags: Collection[str] | None = None,
        kinds: Collection[str] | None = None,
        versions: Collection[str] | None = None,
        only: bool = False,
    ) -> None:
        """Show the tools, resources and prompts matching every criterion given (all of
        them when none is): a name (a resource's URI or template), one of ``tags``, one of
        ``kinds`` (``"tool"``, ``"resource"``, ``"prompt"``), one of ``versions``.
        ``only=True``: hide everything else. Later calls decide over earlier ones; made at
        run time with a shared backend, every worker makes it. Clients whose lists changed
        are told.

        Example::

            server.enable(tags={"public"}, only=True)   # only what is tagged public
            server.enable(names={"status"})             # and the status tool
        """
        rule = Rule.of(True, names=names, tags=tags, kinds=kinds, versions=versions, only=only)
        cast("ServerLike", self).visibility.change(rule)

    def disable(
        self,
        *,
        names: Collection[str] | None = None,
        tags: Collection[str] | None = None,
        kinds: Collection[str] | None = None,
        versions: Collection[str] | None = None,
    ) -> None:
        """Hide the tools, resources and prompts matching every criterion given (as for
        :meth:`enable`): they leave the lists, and calling, reading or getting one is
        answered as for one that does not exist.

        Example::

            server.disable(tags={"admin"})
        """
        rule = Rule.of(False, names=names, tags=tags, kinds=kinds, versions=versions)
        cast("ServerLike", self).visibility.change(rule)


class MountedNames:
    """The names a server mounted in process gives its components on the server hosting the
    session (``host``: the outermost server, whose visibility reads the session's rules).

    A tool of the mounted server names its own components in ``ctx.enable(names=...)``
    (``status``, ``config://app``); the session's rules are read by the host, which serves
    them under the mount's prefix (``c_status``, ``config://c/app``): the names are mapped
    so, through every mount between the two.
    """

    __slots__ = ("_name", "_uri", "host")

    def __init__(
        self, host: ServerLike, name: Callable[[str], str], uri: Callable[[str], str]
    ) -> None:
        self.host = host
        self._name = name
        self._uri = uri

    @classmethod
    def under(cls, outer: MountedNames | None, parent: ServerLike, mount: Any) -> MountedNames:
        """The names under ``mount`` (of ``parent``), itself reached through ``outer``
        (None: ``parent`` hosts the session)."""
        if outer is None:
            return cls(parent, mount.name, mount.uri)
        return cls(
            outer.host,
            lambda n: outer._name(mount.name(n)),
            lambda u: outer._uri(mount.uri(u)),
        )

    def rule(self, rule: Rule) -> Rule:
        """``rule`` with its names as the host serves them (a URI or template, with its
        ``://``, mapped as one; any other name as a tool's or prompt's)."""
        if not rule.names:
            return rule
        names = frozenset(self._uri(n) if "://" in n else self._name(n) for n in rule.names)
        return dataclasses.replace(rule, names=names)


class SessionVisibility:
    """``ctx.enable``, ``ctx.disable`` and ``ctx.reset_visibility`` (the session's rules)."""

    __slots__ = ()

    if TYPE_CHECKING:
        _server: ServerLike
        _request: RequestContext | None
        _mounted: MountedNames | None

    async def _change(self, rule: Rule | None) -> None:
        mounted = self._mounted
        if mounted is None:
            await session_change(self._server, self._request, rule)
        else:  # a tool of a server mounted in process: the names are its own
            mapped = None if rule is None else mounted.rule(rule)
            await session_change(mounted.host, self._request, mapped)

    async def enable(
        self,
        *,
        names: Collection[str] | None = None,
        tags: Collection[str] | None = None,
        kinds: Collection[str] | None = None,
        versions: Collection[str] | None = None,
        only: bool = False,
    ) -> None:
        """Show this session what matches (criteria as for ``Server.enable``), even what
        the server hides; every worker serving the session sees it, and its client is told
        which lists changed. Raises ``RuntimeError`` under revision 2026-07-28 (no session).
        In a server mounted in process, ``names`` are its own (mapped to the hub's by the
        mount's prefix).

        Example::

            @server.tool()
            async def login(password: str, ctx: Context) -> str:
                if not check(password):
                    return "denied"
                await ctx.enable(tags={"admin"})   # this session now lists the admin tools
                return "welcome"
        """
        rule = Rule.of(True, names=names, tags=tags, kinds=kinds, versions=versions, only=only)
        await self._change(rule)

    async def disable(
        self,
        *,
        names: Collection[str] | None = None,
        tags: Collection[str] | None = None,
        kinds: Collection[str] | None = None,
        versions: Collection[str] | None = None,
    ) -> None:
        """Hide from this session what matches (as :meth:`enable`, the other way)."""
        rule = Rule.of(False, names=names, tags=tags, kinds=kinds, versions=versions)
        await self._change(rule)

    async def reset_visibility(self) -> None:
        """Drop this session's rules: it sees what the server shows."""
        await self._change(None)
