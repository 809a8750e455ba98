"""The request kernel: one request in, its result out, whichever era it belongs to.

Both eras go through :meth:`Kernel.serve`. A handshake session (2024-11-05 ... 2025-11-25)
calls it from its engine after the session's own lifecycle checks; a 2026-07-28 request
reaches it straight from the transport that received it (the HTTP app calls it in the task
serving the POST, with no session and no engine in between; stdio calls it from the
connection's session, which has no handshake to check then). The kernel gates the method
(a handler, the revision has it, our capability declared), runs the handler, and fits the
result to the revision.

What it serves with is a :class:`ServerSpec`: immutable, shared by reference by every
session and request of a server, and replaced as a whole when the server's offer changes
(a tool added, an extension served), so nothing is copied into sessions or pushed to them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from .. import _telemetry
from .._exceptions import InvalidParams, MethodNotFound, ProtocolError
from ..types._revisions import (
    NATIVE_PROTOCOL_VERSION,
    STATELESS_PROTOCOL_VERSIONS,
    SUPPORTED_PROTOCOL_VERSIONS,
    adapt_result,
    request_methods_for,
)
from ._base import Negotiated, RequestContext, RequestHandlerFn
from ._capabilities import SERVER_METHOD_CAPABILITY, has_capability
from ._stateless import (
    CACHEABLE_METHODS,
    DEFAULT_CACHE_HINTS,
    STATELESS_ONLY_METHODS,
    capabilities_for_stateless,
    finish_result,
    read_request_meta,
    translate_error,
)

#: Requests of the handshake revisions that the stateless ones dropped, and why.
_REMOVED = {
    "initialize": "has no handshake; the request's _meta carries what it settled",
    "ping": "removed ping",
    "logging/setLevel": "sets the log level per request, in _meta",
    "resources/subscribe": "subscribes with subscriptions/listen",
    "resources/unsubscribe": "ends a subscription by closing the subscriptions/listen stream",
}


@dataclasses.dataclass(frozen=True, eq=False)
class ServerSpec:
    """What a server serves with, as one immutable value.

    Args:
        server_info: the ``serverInfo`` object.
        capabilities: the capabilities declared at ``initialize`` (latest handshake form).
        handlers: method -> ``async fn(rc, params) -> result``.
        instructions: the ``instructions`` of the initialize and discover results.
        supported_versions: revisions served, newest first.
        stateless_capabilities: the capabilities 2026-07-28 declares (default: derived).
        extension_methods: methods extensions add, served to stateless requests whatever
            the core gates say (the extension's handler decides).
        handshake_extension_methods: those also served on handshake sessions.
        cache_hints: the caching hints of a cacheable stateless result that set none.
        cacheable_methods: the methods whose stateless results carry caching hints.
        at_once: ``fn(method, params)``: whether serving that request ends without waiting
            on anything (a sync tool run on the loop, ``inline=True``); a session's reader
            then serves it in its own step, with no task of its own, and the HTTP app
            answers a 2026-07-28 one in one body, with no cancel scope and no task watching
            for the client leaving.
    """

    server_info: dict[str, Any]
    capabilities: dict[str, Any]
    handlers: Mapping[str, RequestHandlerFn]
    instructions: str | None = None
    supported_versions: tuple[str, ...] = SUPPORTED_PROTOCOL_VERSIONS
    stateless_capabilities: dict[str, Any] | None = None
    extension_methods: frozenset[str] = frozenset()
    handshake_extension_methods: frozenset[str] = frozenset()
    cache_hints: Mapping[str, Any] = dataclasses.field(
        default_factory=lambda: dict(DEFAULT_CACHE_HINTS)
    )
    cacheable_methods: frozenset[str] = CACHEABLE_METHODS
    at_once: Callable[[str, dict[str, Any] | None], bool] | None = None
    #: Revisions served per request from ``_meta``, of those supported (empty: the
    #: stateless ones; a low-level server may serve a handshake revision so too).
    stateless_versions: frozenset[str] = frozenset()
    #: Revisions ``initialize`` may settle on, newest first (derived).
    handshake_versions: tuple[str, ...] = dataclasses.field(init=False)
    _caps_by_version: dict[str, dict[str, Any]] = dataclasses.field(
        init=False, default_factory=dict, repr=False
    )
    _served: dict[str, frozenset[str]] = dataclasses.field(
        init=False, default_factory=dict, repr=False
    )

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        # Plain copies (they are serialized as they are), never changed once here.
        set_(self, "server_info", dict(self.server_info))
        set_(self, "capabilities", dict(self.capabilities))
        set_(self, "handlers", dict(self.handlers))
        if self.stateless_capabilities is None:
            set_(self, "stateless_capabilities", capabilities_for_stateless(self.capabilities))
        else:
            set_(self, "stateless_capabilities", dict(self.stateless_capabilities))
        versions = self.supported_versions
        stateless = frozenset(self.stateless_versions or STATELESS_PROTOCOL_VERSIONS)
        stateless &= frozenset(versions)  # never a revision the spec does not support
        set_(self, "stateless_versions", stateless)
        set_(self, "handshake_versions", tuple(v for v in versions if v not in stateless))

    def replace(self, **changes: Any) -> ServerSpec:
        """A copy with ``changes`` (a new spec: what is shared is never mutated). What
        is derived from a changed field is derived again unless given too: the stateless
        capabilities from ``capabilities``."""
        if "capabilities" in changes:
            changes.setdefault("stateless_capabilities", None)
        return dataclasses.replace(self, **changes)

    def capabilities_in(self, version: str) -> dict[str, Any]:
        """Our capabilities as revision ``version`` expresses them (computed once each)."""
        if version in STATELESS_PROTOCOL_VERSIONS:
            assert self.stateless_capabilities is not None
            return self.stateless_capabilities
        if version == NATIVE_PROTOCOL_VERSION:
            return self.capabilities
        caps = self._caps_by_version.get(version)
        if caps is None:
            init = {"protocolVersion": version, "capabilities": dict(self.capabilities)}
            caps = self._caps_by_version[version] = adapt_result("initialize", init, version)[
                "capabilities"
            ]
        return caps

    def served(self, version: str) -> frozenset[str]:
        """The methods a stateless request of ``version`` may call (computed once each):
        handled, in the revision, their capability declared, or an extension's."""
        methods = self._served.get(version)
        if methods is None:
            caps = self.capabilities_in(version)
            in_revision = request_methods_for(version)
            methods = self._served[version] = frozenset(
                m
                for m in self.handlers
                if m in self.extension_methods or (m in in_revision and _declared(caps, m))
            )
        return methods

    def discover(self) -> dict[str, Any]:
        """The ``server/discover`` result."""
        result: dict[str, Any] = {
            "supportedVersions": list(self.supported_versions),
            "capabilities": self.stateless_capabilities,
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result


class Kernel:
    """Serves requests with the current :class:`ServerSpec` (replace :attr:`spec` to
    change what is served; requests already running keep the spec they started with)."""

    __slots__ = ("spec",)

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec

    def negotiate(self, meta: Mapping[str, Any] | None) -> Negotiated:
        """The context of a stateless request, read from its ``_meta`` (-32602/-32022)."""
        spec = self.spec
        return read_request_meta(
            meta,
            stateless_versions=spec.stateless_versions,
            supported_versions=spec.supported_versions,
        )

    def at_once(self, method: str, params: dict[str, Any] | None) -> bool:
        """Whether serving that request ends without waiting on anything (the spec served
        now says so: :attr:`ServerSpec.at_once`)."""
        at_once = self.spec.at_once
        return at_once is not None and at_once(method, params)

    def serve(self, rc: RequestContext) -> Coroutine[Any, Any, Any]:
        """The result of the request ``rc`` serves (a ProtocolError becomes its error), to
        await. A plain function returning the coroutine that serves: one coroutine less
        on every request's path (each one also stays alive while the request waits)."""
        if _telemetry.active():  # an application configured OpenTelemetry
            return self._traced(rc)
        return self._serve(rc)

    async def _traced(self, rc: RequestContext) -> Any:
        req = rc.request
        return await _telemetry.operation(
            "server",
            req.method,
            req.params,
            lambda: self._serve(rc),
            extra=span_attributes(rc),
            parent_meta=req.meta,
        )

    async def _serve(self, rc: RequestContext) -> Any:
        meta = rc.request.meta
        if (
            meta is not None
            and meta.get("progressToken") is not None
            and rc.request.progress_token is None
        ):
            # Given, but not a token the engine reads as one (the schema's ProgressToken is
            # string | integer): refused here, once, rather than silently ignored.
            raise InvalidParams(
                message="Invalid params: _meta.progressToken must be a string or an integer"
            )
        spec = self.spec
        n = rc.negotiated
        assert n is not None
        version = n.protocol_version
        method = rc.request.method
        stateless = version in STATELESS_PROTOCOL_VERSIONS
        if stateless and method == "server/discover":
            return finish_result(method, spec.discover(), spec.server_info)
        handler = self._gate(spec, method, n, stateless)
        params = rc.request.params
        if stateless:
            try:
                result = await handler(rc, params)
            except ProtocolError as e:
                raise translate_error(e) from None
            return finish_result(
                method, result, spec.server_info, spec.cache_hints, spec.cacheable_methods
            )
        if version == NATIVE_PROTOCOL_VERSION:
            return await handler(rc, params)
        if params is not None and "task" in params and "tasks" not in self._ours(spec, n):
            # A revision without tasks: the call is processed normally, as the spec says of
            # a server that does not offer them.
            rc.request.params = params = {k: v for k, v in params.items() if k != "task"}
        return adapt_result(method, await handler(rc, params), version)

    @staticmethod
    def _ours(spec: ServerSpec, n: Negotiated) -> dict[str, Any]:
        """What we declared to the peer of ``n``: fixed at its ``initialize`` (a session
        keeps it), else what the spec declares in its revision."""
        if n.declared is not None:
            return n.declared
        return spec.capabilities_in(n.protocol_version)

    def _gate(
        self, spec: ServerSpec, method: str, n: Negotiated, stateless: bool
    ) -> RequestHandlerFn:
        """The handler of ``method``, or -32601: no handler, a method the revision lacks,
        or one whose capability we did not declare (an extension's method passes)."""
        version = n.protocol_version
        # One set lookup: what may be called is computed once per spec and revision (and,
        # on a handshake session, per what its initialize declared).
        served = spec.served(version) if stateless else _served_on_session(spec, n)
        handler = spec.handlers.get(method) if method in served else None
        if handler is None:
            if stateless and method in _REMOVED:
                raise MethodNotFound(
                    message=f"Method not found: {method} (revision {version} {_REMOVED[method]})"
                )
            raise MethodNotFound(message=f"Method not found: {method}")
        return handler


def _served_on_session(spec: ServerSpec, n: Negotiated) -> frozenset[str]:
    """The methods a handshake session may call: handled, not of the stateless era only,
    in its revision and declared to it at ``initialize`` (or an extension's). Kept on its
    ``Negotiated`` until the spec is replaced."""
    cached = n.served
    if cached is not None and cached[0] is spec:
        return cached[1]
    version = n.protocol_version
    ours = n.declared if n.declared is not None else spec.capabilities_in(version)
    in_revision = None if version == NATIVE_PROTOCOL_VERSION else request_methods_for(version)
    served = frozenset(
        m
        for m in spec.handlers
        if m not in STATELESS_ONLY_METHODS
        and (
            m in spec.handshake_extension_methods
            or (_declared(ours, m) and (in_revision is None or m in in_revision))
        )
    )
    n.served = (spec, served)
    return served


def _declared(caps: dict[str, Any], method: str) -> bool:
    """Whether ``caps`` declares what serving ``method`` needs (nothing, for most)."""
    cap = SERVER_METHOD_CAPABILITY.get(method)
    return cap is None or has_capability(caps, cap)


def span_attributes(rc: RequestContext) -> dict[str, Any]:
    """The OpenTelemetry attributes of the server span of ``rc``."""
    req = rc.request
    info = rc.transport
    n = rc.negotiated
    if n is not None:
        version: Any = n.protocol_version
    elif req.method == "initialize":
        version = (req.params or {}).get("protocolVersion")
    else:
        version = None
    return {
        "jsonrpc.request.id": str(req.id),
        "mcp.session.id": info.session_id,
        "mcp.protocol.version": version,
        "network.transport": info.network,
    }
