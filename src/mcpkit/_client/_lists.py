"""The server's lists as a :class:`Client` keeps them: paging, caching, output schemas.

A list (tools, resources, resource templates, prompts) is fetched page by page. How long it
is cached depends on the era: under a handshake revision, only while the server declared
``listChanged`` for it (only then will it say when the cache goes stale); under the
stateless revision (2026-07-28), for the ``ttlMs`` the server's answer gives (its first
page's; 0 or absent: not cached). ``use_cache=False`` always asks, and a change the server
announces drops the cached list in both eras.

The tools' ``outputSchema`` values are remembered from the last full ``tools/list``, so that
:meth:`Client.check_tool_result` can check results without asking again on every call; so
are the names of the tools annotated ``readOnlyHint`` or ``idempotentHint``: a call of one
whose answer was lost may be sent again (2026-07-28; docs/client.md, "Lost answers").

Over Streamable HTTP under the stateless revision, the tools' ``x-mcp-header`` marks are
read from every full ``tools/list`` into the transport's ``header_params`` (what it mirrors
into ``Mcp-Param-{Name}`` headers); a tool whose marks break the rules is left out of the
list with a warning (streamable-http.mdx: clients MUST reject such tool definitions).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from .._exceptions import CapabilityError, InvalidResponse, ProtocolError
from .._http._headers import header_params
from ..types import CallToolResult
from ._jsonschema import schema_errors
from ._util import DEFAULT, ListKind
from ._util import parse_result as _parse

if TYPE_CHECKING:
    from .._session._client import ClientSession
    from ._face import ClientLike

logger = logging.getLogger("mcpkit.client")

#: Pages fetched at most when listing everything (a server looping on cursors cannot hang us).
MAX_PAGES = 1000

#: ``(header name, property path)`` pairs of a tool's ``x-mcp-header`` marks.
HeaderParams = list[tuple[str, tuple[str, ...]]]


class Listings:
    """The list requests of one :class:`Client`, with their caches."""

    def __init__(self, client: ClientLike) -> None:
        self.client = client
        #: Seconds, monotonic: when a stateless list's ``ttlMs`` runs out. Tests give a
        #: clock they move.
        self.clock: Callable[[], float] = time.monotonic
        # The cached lists, and (stateless revision) when each stops being fresh.
        self._cache: dict[str, list[Any]] = {}
        self._expires: dict[str, float] = {}
        # Bumped by each invalidation, so that a listing that was under way when the server
        # announced a change does not cache what it fetched before the change.
        self._generation: dict[str, int] = {
            "tools": 0,
            "resources": 0,
            "prompts": 0,
            "templates": 0,
        }
        self._output_schemas: dict[str, dict[str, Any] | None] | None = None
        # Tools the last full tools/list annotated readOnlyHint or idempotentHint: safe to
        # call again when an answer was lost. Unknown (not listed yet, or the list changed
        # since) counts as unsafe: never a round trip per call to find out.
        self._repeatable: frozenset[str] = frozenset()
        # Tools left out of the last full tools/list for bad x-mcp-header marks (name ->
        # reason), and names a tools/list made for them did not show: neither is listed
        # again for a call (until the next full listing).
        self._rejected: dict[str, str] = {}
        self._unlisted: set[str] = set()
        # The session all of the above was learned on: a new connection starts afresh.
        self._session: ClientSession | None = None
        #: One ``tools/list`` at a time to learn output schemas or header marks; made at
        #: connect.
        self.schema_fetch: anyio.Lock | None = None

    def _follow_connection(self) -> None:
        """Forget what an earlier connection of the client learned."""
        session = self.client.session
        if session is not self._session:
            self._session = session
            self._cache.clear()
            self._expires.clear()
            self._output_schemas = None
            self._repeatable = frozenset()
            self._rejected.clear()
            self._unlisted.clear()

    def _fresh(self, kind: str) -> bool:
        """Whether the cached ``kind`` list may be served."""
        if kind not in self._cache:
            return False
        expires = self._expires.get(kind)
        return expires is None or self.clock() < expires

    async def list_all(
        self,
        kind: str,
        method: str,
        model: type[Any],
        field: str,
        use_cache: bool,
        timeout: float | None,
    ) -> list[Any]:
        """Every item of ``method``'s pages (``field`` of each ``model`` page), maybe cached."""
        self._follow_connection()
        if use_cache and self._fresh(kind):
            return list(self._cache[kind])
        generation = self._generation[kind]
        items: list[Any] = []
        raw_items: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        expires: float | None = None
        for _ in range(MAX_PAGES):
            raw = await self.client.send_request(
                method, {"cursor": cursor} if cursor else None, timeout=timeout
            )
            page = _parse(model, raw, method)
            if expires is None:
                expires = self.clock() + _ttl_seconds(raw)
            items.extend(getattr(page, field))
            if kind == "tools" and isinstance(raw, dict) and isinstance(raw.get("tools"), list):
                raw_items.extend(raw["tools"])
            cursor = page.next_cursor
            if not cursor:
                break
            if cursor in seen:
                raise InvalidResponse(
                    f"{method}: the server repeated the cursor {cursor!r} (pagination loop)"
                )
            seen.add(cursor)
        else:
            raise InvalidResponse(f"{method}: more than {MAX_PAGES} pages; giving up")
        if kind == "tools":
            rejected = self._learn_header_params(raw_items)
            if rejected:
                items = [t for t in items if t.name not in rejected]
                raw_items = [t for t in raw_items if t.get("name") not in rejected]
            self._remember_output_schemas(raw_items)
            self._repeatable = _repeatable(raw_items)
        if self._generation[kind] == generation:
            self._store(kind, items, expires)
        return list(items)

    def _store(self, kind: str, items: list[Any], expires: float | None) -> None:
        """Cache a fresh list as the era allows."""
        if self.client.session.stateless:
            if expires is not None and expires > self.clock():
                self._cache[kind] = items
                self._expires[kind] = expires
            else:
                self._cache.pop(kind, None)
                self._expires.pop(kind, None)
        elif self._announces_changes(kind):
            self._cache[kind] = items
            self._expires.pop(kind, None)

    def mirrors_header_params(self) -> bool:
        """Whether :meth:`ensure_header_params` has anything to do (Streamable HTTP under
        the stateless revision): checked first, so other calls skip its coroutine."""
        return self._header_params_of() is not None

    def _header_params_of(self) -> dict[str, HeaderParams] | None:
        """The transport's table of ``x-mcp-header`` marks, when it mirrors them (Streamable
        HTTP, stateless revision); None otherwise."""
        if not self.client.session.stateless:
            return None
        table = getattr(self.client._transport, "header_params", None)
        return table if isinstance(table, dict) else None

    def _learn_header_params(self, raw_tools: list[Any]) -> set[str]:
        """Record the listed tools' ``x-mcp-header`` marks in the transport; the names of
        the tools whose marks are invalid (to leave out of the list) are returned."""
        table = self._header_params_of()
        if table is None:
            return set()
        learned: dict[str, HeaderParams] = {}
        rejected: dict[str, str] = {}
        for tool in raw_tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str):
                continue
            try:
                learned[name] = header_params(tool.get("inputSchema"))
            except ValueError as e:
                rejected[name] = str(e)
                logger.warning(
                    "tools/list: rejected tool %r: invalid x-mcp-header annotation: %s", name, e
                )
        for name in rejected:
            learned.pop(name, None)  # a name listed twice, once valid and once not
        # The full list replaces what an earlier one said.
        table.clear()
        table.update(learned)
        self._rejected = rejected
        self._unlisted.clear()
        return set(rejected)

    async def ensure_header_params(self, name: str, timeout: Any = DEFAULT) -> None:
        """Before tool ``name`` is called over Streamable HTTP under the stateless revision,
        make sure its ``x-mcp-header`` marks are known (so its ``Mcp-Param-*`` headers are
        sent): when no listing showed the tool yet, list the tools once (``tools/list``).

        Does nothing over other transports and revisions. A listing that fails is logged
        and the call goes ahead without the headers (the server will say what it misses).
        ``timeout`` bounds the listing (default: the client's).
        """
        if self._header_params_of() is None:
            return
        self._follow_connection()
        if self._known(name):
            return
        assert self.schema_fetch is not None
        async with self.schema_fetch:
            if self._known(name):
                return
            try:
                await self.client.list_tools(use_cache=False, timeout=timeout)
            except (ProtocolError, InvalidResponse, CapabilityError) as e:
                logger.debug("cannot list tools to learn the headers of %r: %s", name, e)
            table = self._header_params_of()
            if table is not None and name not in table and name not in self._rejected:
                self._unlisted.add(name)

    def _known(self, name: str) -> bool:
        table = self._header_params_of()
        return table is None or name in table or name in self._rejected or name in self._unlisted

    def _remember_output_schemas(self, raw_tools: list[Any]) -> None:
        # From the raw answer: the parsed Tool holds a model of the schema, the validator
        # wants the JSON the server sent.
        self._output_schemas = {
            t["name"]: t.get("outputSchema") if isinstance(t.get("outputSchema"), dict) else None
            for t in raw_tools
            if isinstance(t, dict) and isinstance(t.get("name"), str)
        }

    def _announces_changes(self, kind: str) -> bool:
        caps = self.client.session.server_capabilities
        key = "resources" if kind == "templates" else kind
        cap = caps.get(key)
        return isinstance(cap, dict) and cap.get("listChanged") is True

    def invalidate(self, kind: ListKind) -> None:
        """Forget the cached ``kind`` list (the server said it changed)."""
        kinds = ("resources", "templates") if kind == "resources" else (kind,)
        for k in kinds:
            self._generation[k] += 1
            self._cache.pop(k, None)
            self._expires.pop(k, None)
        if kind == "tools":
            self._output_schemas = None
            self._repeatable = frozenset()  # a changed tool may have lost its hints
            self._unlisted.clear()

    def safe_to_repeat(self, name: Any) -> bool:
        """Whether tool ``name`` was listed (by this connection's last full ``tools/list``)
        as read-only or idempotent: a call of it may be sent again if its answer is lost."""
        self._follow_connection()
        return name in self._repeatable

    def has_no_output_schema(self, name: str) -> bool:
        """Known already (this connection listed tool ``name``) to declare no
        ``outputSchema``: :meth:`check_output` would do nothing, so its coroutine is spared
        (checked on every ``tools/call``)."""
        self._follow_connection()
        schemas = self._output_schemas
        return schemas is not None and name in schemas and schemas[name] is None

    async def check_output(self, name: str, result: CallToolResult) -> None:
        """Raise :class:`InvalidResponse` if the result of tool ``name`` breaks its outputSchema."""
        self._follow_connection()
        schema = await self._output_schema(name)
        if schema is None:
            return
        structured = result.structured_content
        if structured is None:
            raise InvalidResponse(
                f"tool {name!r} declares an outputSchema but its result has no structuredContent"
            )
        errors = schema_errors(structured, schema)
        if errors:
            raise InvalidResponse(
                f"tool {name!r} returned structuredContent that violates its outputSchema: "
                + "; ".join(errors)
            )

    async def _output_schema(self, name: str) -> dict[str, Any] | None:
        schemas = self._output_schemas
        if schemas is None or name not in schemas:
            # First call of this tool: learn its schema. A tool that is not listed (or a
            # server without a usable list) has nothing to check against.
            assert self.schema_fetch is not None
            async with self.schema_fetch:
                if self._output_schemas is None or name not in self._output_schemas:
                    try:
                        await self.client.list_tools(use_cache=False)
                    except (ProtocolError, InvalidResponse) as e:
                        logger.debug("cannot list tools to check output of %r: %s", name, e)
                    if self._output_schemas is None:
                        self._output_schemas = {}
                    self._output_schemas.setdefault(name, None)
            schemas = self._output_schemas
        return schemas.get(name)


def _repeatable(raw_tools: list[Any]) -> frozenset[str]:
    """The names of the listed tools whose annotations say calling them twice does no more
    than once: ``readOnlyHint`` (no effect at all) or ``idempotentHint`` (tools.mdx).

    Hints, which a server could get wrong; they decide only whether a call whose answer was
    lost is sent again, as the server's author said would be harmless."""
    safe: set[str] = set()
    unsafe: set[str] = set()  # a name listed twice counts as safe only if both say so
    for tool in raw_tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        hints = tool.get("annotations")
        if isinstance(hints, dict) and (
            hints.get("readOnlyHint") is True or hints.get("idempotentHint") is True
        ):
            safe.add(tool["name"])
        else:
            unsafe.add(tool["name"])
    return frozenset(safe - unsafe)


def _ttl_seconds(raw: Any) -> float:
    """How long a stateless list answer may be cached, from its ``ttlMs`` (0 if none)."""
    ttl = raw.get("ttlMs") if isinstance(raw, dict) else None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl <= 0:
        return 0.0
    return float(ttl) / 1000.0
