"""The server's lists as a :class:`Client` keeps them: paging, caching, output schemas.

A list (tools, resources, resource templates, prompts) is fetched page by page and cached
only while the server declared ``listChanged`` for it, since only then will it say when the
cache goes stale. The tools' ``outputSchema`` values are remembered from the last full
``tools/list``, so that :meth:`Client.check_tool_result` can check results without asking
again on every call.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio

from .._exceptions import InvalidResponse, ProtocolError
from ..types import CallToolResult
from ._jsonschema import schema_errors
from ._util import ListKind
from ._util import parse_result as _parse

if TYPE_CHECKING:
    from ._client import Client

logger = logging.getLogger("mcpkit.client")

#: Pages fetched at most when listing everything (a server looping on cursors cannot hang us).
MAX_PAGES = 1000


class Listings:
    """The list requests of one :class:`Client`, with their caches."""

    def __init__(self, client: Client) -> None:
        self.client = client
        # Caches, valid only while the server promised to tell us about changes.
        self._cache: dict[str, list[Any]] = {}
        # Bumped by each invalidation, so that a listing that was under way when the server
        # announced a change does not cache what it fetched before the change.
        self._generation: dict[str, int] = {
            "tools": 0,
            "resources": 0,
            "prompts": 0,
            "templates": 0,
        }
        self._output_schemas: dict[str, dict[str, Any] | None] | None = None
        #: One ``tools/list`` at a time to learn output schemas; made at connect.
        self.schema_fetch: anyio.Lock | None = None

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
        if use_cache and kind in self._cache:
            return list(self._cache[kind])
        generation = self._generation[kind]
        items: list[Any] = []
        raw_items: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            raw = await self.client.send_request(
                method, {"cursor": cursor} if cursor else None, timeout=timeout
            )
            page = _parse(model, raw, method)
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
            self._remember_output_schemas(raw_items)
        if self._generation[kind] == generation and self._announces_changes(kind):
            self._cache[kind] = items
        return list(items)

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
        if kind == "tools":
            self._output_schemas = None

    async def check_output(self, name: str, result: CallToolResult) -> None:
        """Raise :class:`InvalidResponse` if the result of tool ``name`` breaks its outputSchema."""
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
