"""Protocol extensions on the server side: the seam the tasks and skills extensions use.

An extension (``capabilities.extensions``, revision 2026-07-28's versioning.mdx) is named by
a reverse-domain identifier, declares a settings object under it, and serves request
methods of its own. :class:`Extension` is all a server needs to know of one: its id, its
settings, its methods and which of them give cacheable results. ``Server.add_extension``
declares it and routes its methods; :func:`client_supports` tells a handler whether the
request's client declared the extension too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._exceptions import MethodNotFound, MissingRequiredClientCapability
from .._session._base import RequestContext, RequestHandlerFn
from .._session._stateless import CACHEABLE_METHODS

if TYPE_CHECKING:
    from ._face import ServerLike


class Extension:
    """A protocol extension a :class:`~mcpkit.Server` serves; subclass it to write one.

    ``id`` names it under ``capabilities.extensions``; :meth:`settings` is the object
    declared there; :meth:`methods` maps the request methods it adds to handlers
    ``async fn(rc, params) -> result``. A method the core protocol also has (``tasks/get``)
    is served by the extension for the requests of the eras it is declared in
    (``handshake``: also on sessions opened with ``initialize``; else only on stateless
    2026-07-28 requests) and by the core for the others.

    Example::

        class Weather(Extension):
            id = "com.example/weather"

            def methods(self):
                return {"weather/now": self.now}

            async def now(self, rc, params):
                return {"temperature": 21}

        server.add_extension(Weather())
    """

    #: The extension's identifier (a reverse-domain prefix, then a name).
    id: str = ""
    #: Also declared and served on sessions of the handshake revisions (2025-11-25 and
    #: before), not only on stateless requests.
    handshake: bool = True
    #: Methods whose results carry the caching hints ``ttlMs`` and ``cacheScope``.
    cacheable: frozenset[str] = frozenset()

    def attach(self, server: ServerLike) -> None:
        """Called once by ``Server.add_extension``: keep the server if you need it."""

    def settings(self) -> dict[str, Any] | None:
        """The settings object declared under ``capabilities.extensions[id]`` (``{}``: no
        settings); None leaves the extension undeclared for now."""
        return {}

    def methods(self) -> Mapping[str, RequestHandlerFn]:
        """Request method -> handler, for the methods the extension adds."""
        return {}


def client_supports(rc: RequestContext | None, extension_id: str) -> bool:
    """Whether the client of the request declared ``extension_id`` (in the request's
    ``_meta`` under 2026-07-28, at ``initialize`` before)."""
    n = rc.negotiated if rc is not None else None
    if n is None:
        return False
    exts = n.peer_capabilities.get("extensions")
    return isinstance(exts, dict) and isinstance(exts.get(extension_id), dict)


def require_client_extension(rc: RequestContext, extension_id: str, why: str) -> None:
    """Raise -32021 (MissingRequiredClientCapability) naming the extension unless the
    request's client declared it."""
    if not client_supports(rc, extension_id):
        raise MissingRequiredClientCapability(
            message=f"Missing required client capability: {why}",
            data={"requiredCapabilities": {"extensions": {extension_id: {}}}},
        )


def route(
    core: RequestHandlerFn | None, handler: RequestHandlerFn, handshake: bool
) -> RequestHandlerFn:
    """One handler for a method an extension serves: the extension's for the eras it is
    declared in, the core's (or -32601) for the others."""
    if handshake:
        return handler

    async def routed(rc: RequestContext, params: dict[str, Any] | None) -> Any:
        n = rc.negotiated
        if n is not None and n.stateless:
            return await handler(rc, params)
        if core is None:
            raise MethodNotFound(message=f"Method not found: {rc.method}")
        return await core(rc, params)

    return routed


class Extensions:
    """The extensions of one server: declared per era, their methods routed."""

    def __init__(self, server: ServerLike) -> None:
        self.server = server
        self.by_id: dict[str, Extension] = {}

    def add(self, extension: Extension) -> None:
        ext_id = extension.id
        if not isinstance(ext_id, str) or "/" not in ext_id:
            raise ValueError(
                f"an extension id is a reverse-domain prefix and a name, like "
                f"'com.example/name' (got {ext_id!r})"
            )
        if ext_id in self.by_id:
            raise ValueError(f"extension {ext_id!r} is already added")
        extension.attach(self.server)
        self.by_id[ext_id] = extension

    def table(self, core: Mapping[str, RequestHandlerFn]) -> dict[str, RequestHandlerFn]:
        """The server's handler table with the extensions' methods routed in."""
        table = dict(core)
        for ext in self.by_id.values():
            for method, handler in ext.methods().items():
                table[method] = route(core.get(method), handler, ext.handshake)
        return table

    def methods(self, *, handshake: bool) -> frozenset[str]:
        """The methods extensions serve (on handshake sessions: those declared there)."""
        return frozenset(
            m
            for ext in self.by_id.values()
            if ext.handshake or not handshake
            for m in ext.methods()
        )

    def cacheable(self) -> frozenset[str]:
        """The methods whose stateless results carry caching hints: the core's and the
        extensions'."""
        return CACHEABLE_METHODS.union(*(ext.cacheable for ext in self.by_id.values()))

    def declared(self, *, stateless: bool) -> dict[str, Any]:
        """``capabilities.extensions`` for one era: id -> settings of those declared in it."""
        out: dict[str, Any] = {}
        for ext_id, ext in self.by_id.items():
            if stateless or ext.handshake:
                settings = ext.settings()
                if settings is not None:
                    out[ext_id] = settings
        return out
