"""What a :class:`~mcpkit.Server` serves: its tools, resources, templates and prompts.

The registry holds the definitions and the cached list pages, resolves and reads resources;
it knows nothing of sessions or the protocol (the server's handlers and facade use it).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .._exceptions import InvalidParams, MCPError, ProtocolError
from ._prompts import PromptDef
from ._resources import ResourceDef, TemplateDef, not_found, read_error
from ._tools import ToolDef

if TYPE_CHECKING:
    from ._callface import CallContext

logger = logging.getLogger("mcpkit.server")


class Registry:
    """The definitions a server serves, and their list pages (built once per change).

    Args:
        page_size: items per page of the ``*/list`` answers (None: one page).
    """

    def __init__(self, page_size: int | None) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1 (or None for no pagination)")
        self.page_size = page_size
        self.tools: dict[str, ToolDef] = {}
        self.resources: dict[str, ResourceDef] = {}
        self.templates: dict[str, TemplateDef] = {}
        self.prompts: dict[str, PromptDef] = {}
        #: The completion function and the name of its Context parameter, if any.
        self.completion: Callable[..., Any] | None = None
        self.completion_ctx: str | None = None
        #: Resource URI or template -> the caching hints its reads carry (2026-07-28).
        self.read_hints: dict[str, dict[str, Any]] = {}
        #: ("tool" | "prompt" | "resource", name, URI or template) -> the scopes it needs.
        self.scopes: dict[tuple[str, str], tuple[str, ...]] = {}
        #: Sources of resources read but not listed (the files of skills), asked in turn
        #: for a URI no resource or template serves: ``resolves(uri)``, ``read(uri)``.
        self.sources: list[Any] = []
        self._lists: dict[str, list[dict[str, Any]]] = {}

    def has_task_tools(self) -> bool:
        """True when a tool may run as a task (the server then declares ``tasks``)."""
        return any(t.task_support in ("optional", "required") for t in self.tools.values())

    def invalidate(self, kind: str) -> None:
        """Forget the cached pages of ``kind`` (``tools``, ``resources``, ``prompts``)."""
        self._lists.pop(kind, None)
        if kind == "resources":
            self._lists.pop("templates", None)

    def page(
        self, kind: str, params: dict[str, Any] | None, keys: CursorKeys | None = None
    ) -> dict[str, Any]:
        """The page of ``kind`` that ``params["cursor"]`` asks for, with ``nextCursor``
        (cursors sealed with ``keys``, see :func:`encode_cursor`).

        Items come in registration order, the same on every request while the set is
        unchanged: the deterministic order tools.mdx asks of ``tools/list`` (2026-07-28),
        and one the server's author chose (models weigh the tools listed first).
        """
        items = self._lists.get(kind)
        if items is None:
            items = self._lists[kind] = self._definitions(kind)
        start = 0
        cursor = params.get("cursor") if params else None
        if cursor is not None:
            start = decode_cursor(kind, cursor, keys)
        size = self.page_size
        if size is None:
            return {kind: items[start:] if start else items}
        end = start + size
        result: dict[str, Any] = {kind: items[start:end]}
        if end < len(items):
            result["nextCursor"] = encode_cursor(kind, end, keys)
        return result

    def _definitions(self, kind: str) -> list[dict[str, Any]]:
        table: dict[str, dict[str, Any]] = {
            "tools": self.tools,
            "resources": self.resources,
            "templates": self.templates,
            "prompts": self.prompts,
        }
        defs = table[kind].values()
        return [d.definition for d in defs]

    def resolves(self, uri: str) -> bool:
        """True when ``uri`` names a resource, directly or through a template."""
        return (
            uri in self.resources
            or any(t.match(uri) is not None for t in self.templates.values())
            or any(src.resolves(uri) for src in self.sources)
        )

    def entry_for(self, uri: str) -> Any:
        """The resource, or else the first template, that serves ``uri`` (None: neither)."""
        found = self.resources.get(uri)
        if found is not None:
            return found
        return next((t for t in self.templates.values() if t.match(uri) is not None), None)

    def scopes_for(self, method: str, params: Any) -> tuple[str, ...]:
        """The scopes the target of request ``method`` needs (empty: none of its own)."""
        if not self.scopes or not isinstance(params, dict):
            return ()
        if method == "tools/call":
            return self.scopes.get(("tool", params.get("name")), ())  # type: ignore[arg-type]
        if method == "prompts/get":
            return self.scopes.get(("prompt", params.get("name")), ())  # type: ignore[arg-type]
        uri = params.get("uri")
        if method not in ("resources/read", "resources/subscribe") or not isinstance(uri, str):
            return ()
        if uri in self.resources:
            return self.scopes.get(("resource", uri), ())
        for template, definition in self.templates.items():
            if definition.match(uri) is not None:
                return self.scopes.get(("resource", template), ())
        return ()

    def hints_for(self, uri: str) -> dict[str, Any] | None:
        """The caching hints registered for the resource (or template) serving ``uri``."""
        if not self.read_hints:
            return None
        if uri in self.resources:
            return self.read_hints.get(uri)
        for template, definition in self.templates.items():
            if definition.match(uri) is not None:
                return self.read_hints.get(template)
        return None

    async def read(self, uri: str, ctx: CallContext | None, *, mask_errors: bool) -> list[Any]:
        """The contents of resource ``uri``; a failure is a protocol error for the caller."""
        try:
            resource = self.resources.get(uri)
            if resource is not None:
                return await resource.read(ctx)
            for template in self.templates.values():
                variables = template.match(uri)
                if variables is not None:
                    return await template.read(uri, variables, ctx)
            for src in self.sources:
                if src.resolves(uri):
                    contents: list[Any] = src.read(uri)
                    return contents
        except ProtocolError:
            raise
        except Exception as e:  # its SystemExit too: a RaisedBaseException by then
            if not isinstance(e, MCPError):
                logger.exception("reading resource %r failed", uri)
            if not mask_errors and not isinstance(e, MCPError):
                raise ProtocolError(
                    message=f"Error reading resource {uri}: {type(e).__name__}: {e}"
                ) from e
            raise read_error(uri, e) from e
        raise not_found(uri)


class CursorKeys(Protocol):
    """Where the keys that seal cursors come from: a server's
    :class:`~mcpkit.StatelessSettings` (the keys of ``requestState``, shared by the workers
    behind one load balancer, so a cursor one issued is good at another)."""

    def key(self) -> bytes:
        """The key new cursors are sealed with."""
        ...

    def verifying_keys(self) -> Sequence[bytes]:
        """Every key a cursor may have been sealed with."""
        ...


#: The key of cursors sealed without a server's keys (a registry used on its own).
_OWN_KEY = secrets.token_bytes(32)
#: Bytes of the HMAC-SHA256 tag a cursor carries: enough that guessing one is hopeless.
_TAG_BYTES = 12


def _cursor_tag(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, b"mcpkit-cursor\0" + body, hashlib.sha256).digest()[:_TAG_BYTES]


def encode_cursor(kind: str, offset: int, keys: CursorKeys | None = None) -> str:
    """An opaque cursor for the page of ``kind`` starting at ``offset``: the position and
    an HMAC of it, so a client cannot compute one from the page size it has seen (clients
    MUST treat cursors as opaque; one they make up is refused, -32602)."""
    body = f"{kind}:{offset}".encode()
    tag = _cursor_tag(keys.key() if keys is not None else _OWN_KEY, body)
    return (base64.urlsafe_b64encode(body + b"." + tag)).decode("ascii").rstrip("=")


def decode_cursor(kind: str, cursor: Any, keys: CursorKeys | None = None) -> int:
    """The offset in ``cursor``; -32602 when it is not one we issued for ``kind``."""
    bad = InvalidParams(
        message=f"Invalid params: invalid cursor {cursor!r}", data={"cursor": cursor}
    )
    if not isinstance(cursor, str) or len(cursor) > 96:
        raise bad
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except ValueError:
        raise bad from None
    body, tag = raw[:-_TAG_BYTES], raw[-_TAG_BYTES:]
    if not body.endswith(b"."):
        raise bad
    body = body[:-1]
    candidates = keys.verifying_keys() if keys is not None else (_OWN_KEY,)
    if not any(hmac.compare_digest(tag, _cursor_tag(k, body)) for k in candidates):
        raise bad
    prefix, _, num = body.decode("ascii", "replace").partition(":")
    if prefix != kind or not num.isdigit():
        raise bad
    return int(num)
