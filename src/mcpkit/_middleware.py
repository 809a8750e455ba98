"""Middleware: an ordered chain around every request a :class:`~mcpkit.Server` serves or a
:class:`~mcpkit.Client` sends.

A middleware is ``async def mw(request, call_next) -> result`` (or a :class:`Middleware`
subclass, with per-method hooks). It sees the :class:`MCPRequest`, may change its ``params``,
may answer without calling ``call_next`` (a result, or an exception such as
:class:`~mcpkit.ProtocolError` for a JSON-RPC error), and may time or log what
``call_next(request)`` does. The first middleware given is the outermost.

Shipped: :class:`LoggingMiddleware`, :class:`TimingMiddleware`, :class:`RateLimitMiddleware`,
:class:`ListCacheMiddleware`, :class:`ErrorMappingMiddleware`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._auth._principal import Principal, principal_of
from ._exceptions import INTERNAL_ERROR, ProtocolError

#: The code of a request refused by :class:`RateLimitMiddleware`, in every revision: an
#: application code outside the range JSON-RPC reserves (-32768 to -32000), as revision
#: 2026-07-28 asks of codes it does not define (its -32020 to -32099 are the
#: specification's alone); "429" as in HTTP's Too Many Requests (it was -32029 up to 0.2.0).
RATE_LIMITED = -31429


@dataclass
class MCPRequest:
    """One request going through a middleware chain.

    ``params`` may be replaced or changed in place before ``call_next``; ``state`` is free
    for middleware to pass things along the chain.
    """

    method: str
    params: dict[str, Any] | None
    #: ``"server"`` (a request the server serves) or ``"client"`` (one the client sends).
    role: str
    #: Server side: the low-level request context (session, request id, negotiated revision).
    context: Any = None
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def target(self) -> str | None:
        """What the request names: the tool or prompt name, or the resource URI."""
        p = self.params or {}
        value = p.get("name") if self.method in ("tools/call", "prompts/get") else p.get("uri")
        return value if isinstance(value, str) else None

    @property
    def principal(self) -> Principal | None:
        """Server side: who sent it, when the app checks access tokens (see
        :class:`mcpkit.auth.Principal`); None otherwise."""
        ctx = self.context
        if ctx is None or not hasattr(ctx, "session"):
            return None
        return principal_of(ctx)[1]


CallNext = Callable[[MCPRequest], Awaitable[Any]]


class MiddlewareFn(Protocol):
    """``async def middleware(request, call_next) -> result``."""

    def __call__(self, request: MCPRequest, call_next: CallNext, /) -> Awaitable[Any]: ...


#: Per-method hooks of :class:`Middleware`.
HOOKS = {
    "tools/call": "on_call_tool",
    "tools/list": "on_list_tools",
    "resources/read": "on_read_resource",
    "resources/list": "on_list_resources",
    "resources/templates/list": "on_list_resource_templates",
    "prompts/get": "on_get_prompt",
    "prompts/list": "on_list_prompts",
    "completion/complete": "on_complete",
}


class Middleware:
    """A middleware with hooks: override :meth:`on_request` (every request) and/or any of
    ``on_call_tool``, ``on_list_tools``, ``on_read_resource``, ``on_list_resources``,
    ``on_list_resource_templates``, ``on_get_prompt``, ``on_list_prompts``, ``on_complete``
    (``on_request`` runs first and calls the method's hook as its ``call_next``).

    Example::

        class NoDeletes(Middleware):
            async def on_call_tool(self, request, call_next):
                if request.target == "delete_everything":
                    raise ToolError("not today")
                return await call_next(request)
    """

    async def __call__(self, request: MCPRequest, call_next: CallNext) -> Any:
        hook = getattr(self, HOOKS.get(request.method, ""), None)
        if hook is None:
            return await self.on_request(request, call_next)

        async def then(req: MCPRequest) -> Any:
            return await hook(req, call_next)

        return await self.on_request(request, then)

    async def on_request(self, request: MCPRequest, call_next: CallNext) -> Any:
        """Around every request (default: pass it on)."""
        return await call_next(request)


def chain(middleware: Sequence[MiddlewareFn], last: CallNext) -> CallNext:
    """``last`` wrapped in ``middleware``, the first one outermost."""
    call = last
    for mw in reversed(middleware):
        call = _link(mw, call)
    return call


def _link(mw: MiddlewareFn, call_next: CallNext) -> CallNext:
    async def call(request: MCPRequest) -> Any:
        return await mw(request, call_next)

    return call


# ---------------------------------------------------------------------- shipped


class LoggingMiddleware(Middleware):
    """One structured log record per request: method, target, outcome and milliseconds in
    the record's ``extra`` (``mcp_method``, ``mcp_target``, ``mcp_outcome``, ``mcp_ms``).
    Parameters are not logged (they may hold secrets) unless ``include_params``."""

    def __init__(
        self,
        logger: logging.Logger | None = None,
        *,
        level: int = logging.INFO,
        include_params: bool = False,
    ) -> None:
        self.logger = logger or logging.getLogger("mcpkit.requests")
        self.level = level
        self.include_params = include_params

    async def on_request(self, request: MCPRequest, call_next: CallNext) -> Any:
        start = time.perf_counter()
        outcome = "ok"
        try:
            result = await call_next(request)
            if isinstance(result, Mapping) and result.get("isError") is True:
                outcome = "tool_error"
            return result
        except ProtocolError as e:
            outcome = f"error {e.code}"
            raise
        except BaseException as e:
            outcome = type(e).__name__
            raise
        finally:
            ms = (time.perf_counter() - start) * 1000
            extra: dict[str, Any] = {
                "mcp_method": request.method,
                "mcp_target": request.target,
                "mcp_outcome": outcome,
                "mcp_ms": round(ms, 3),
                "mcp_role": request.role,
            }
            if self.include_params:
                extra["mcp_params"] = request.params
            what = f"{request.method} {request.target}" if request.target else request.method
            self.logger.log(self.level, "%s: %s in %.1f ms", what, outcome, ms, extra=extra)


class TimingMiddleware(Middleware):
    """Durations per method (and target): ``stats[(method, target)]`` is a list of seconds,
    and ``on_timing(request, seconds)`` is called after each request when given."""

    def __init__(
        self,
        on_timing: Callable[[MCPRequest, float], None] | None = None,
        *,
        clock: Callable[[], float] = time.perf_counter,
        keep: int = 1000,
    ) -> None:
        self.on_timing = on_timing
        self.clock = clock
        self.keep = keep
        self.stats: dict[tuple[str, str | None], list[float]] = {}

    async def on_request(self, request: MCPRequest, call_next: CallNext) -> Any:
        start = self.clock()
        try:
            return await call_next(request)
        finally:
            seconds = self.clock() - start
            kept = self.stats.setdefault((request.method, request.target), [])
            kept.append(seconds)
            del kept[: max(0, len(kept) - self.keep)]
            if self.on_timing is not None:
                self.on_timing(request, seconds)


class RateLimitMiddleware(Middleware):
    """A token bucket per caller: ``rate`` requests per second on average, bursts of
    ``burst``. Beyond it a request is refused with code -31429 ("rate limited"), naming
    the seconds to wait in ``data.retryAfter``.

    The caller is ``key(request)``: by default the authenticated principal (issuer and
    subject), else the session (for stateless 2026-07-28 requests, the HTTP client's
    address). ``methods`` limits only those methods (default: every request). ``clock`` is
    injectable (tests move it by hand).
    """

    def __init__(
        self,
        rate: float,
        burst: int | None = None,
        *,
        key: Callable[[MCPRequest], Any] | None = None,
        methods: Sequence[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_callers: int = 100_000,
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.burst = float(burst if burst is not None else max(1, int(rate)))
        self.key = key or _default_key
        self.methods = frozenset(methods) if methods is not None else None
        self.clock = clock
        self.max_callers = max_callers
        self._buckets: dict[Any, tuple[float, float]] = {}

    async def on_request(self, request: MCPRequest, call_next: CallNext) -> Any:
        if self.methods is not None and request.method not in self.methods:
            return await call_next(request)
        caller = self.key(request)
        now = self.clock()
        tokens, last = self._buckets.pop(caller, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if tokens < 1:
            self._buckets[caller] = (tokens, now)
            wait = (1 - tokens) / self.rate
            raise ProtocolError(
                RATE_LIMITED, f"rate limited: retry in {wait:.2f} s", {"retryAfter": wait}
            )
        self._buckets[caller] = (tokens - 1, now)  # most recent last: the oldest go first
        while len(self._buckets) > self.max_callers:
            del self._buckets[next(iter(self._buckets))]
        return await call_next(request)


def _default_key(request: MCPRequest) -> Any:
    principal = request.principal
    if principal is not None:
        return getattr(principal, "key", principal)  # issuer and subject (or client)
    ctx = request.context
    negotiated = getattr(ctx, "negotiated", None)
    if negotiated is not None and getattr(negotiated, "stateless", False):
        # Stateless requests have no session: without a principal, the caller is the HTTP
        # client's address (behind a proxy, give a key= that reads its header).
        http = ctx.transport.http
        if http is not None and http.client is not None:
            return ("address", http.client[0])
    return id(getattr(ctx, "session", None)) if ctx is not None else "client"


_LISTS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "prompts/list": "prompts",
}


class ListCacheMiddleware(Middleware):
    """Caches list results (tools, resources, templates, prompts) for ``ttl`` seconds,
    per page (cursor). A change of the list (what the server announces as list-changed)
    drops its entries at once: :meth:`invalidate` is called for it by the server.
    Worth it where listing is costly (a proxied or mounted server, generated lists)."""

    def __init__(self, ttl: float = 60.0, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._entries: dict[tuple[str, Any, Any], tuple[float, Any]] = {}

    def invalidate(self, kind: str | None = None) -> None:
        """Forget the cached pages of ``kind`` (``tools``, ``resources``, ``prompts``; all
        when None)."""
        for key in list(self._entries):
            if kind is None or _LISTS.get(key[0]) == kind:
                del self._entries[key]

    async def on_request(self, request: MCPRequest, call_next: CallNext) -> Any:
        if request.method not in _LISTS:
            return await call_next(request)
        key = (request.method, (request.params or {}).get("cursor"), _view(request))
        now = self.clock()
        hit = self._entries.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        result = await call_next(request)
        self._entries[key] = (now + self.ttl, result)
        return result


def _view(request: MCPRequest) -> Any:
    """What decides the lists a request's session sees beyond the server's own choice (its
    visibility rules, ``ctx.enable``): sessions that see differently share no cached page."""
    session = getattr(request.context, "session", None)
    return getattr(getattr(session, "state", None), "visibility", ())


class ErrorMappingMiddleware(Middleware):
    """Turns exceptions into the JSON-RPC errors you choose: ``{KeyError: (-32602, "no such
    item")}`` (a code and message) or a function returning the exception to raise. Errors
    that are already :class:`~mcpkit.ProtocolError` pass through; a tool's exception is a
    tool result (``isError``), not an error, so it is not mapped."""

    def __init__(
        self,
        mapping: Mapping[
            type[BaseException], tuple[int, str] | Callable[[BaseException], BaseException]
        ],
    ) -> None:
        self.mapping = dict(mapping)

    async def on_request(self, request: MCPRequest, call_next: CallNext) -> Any:
        try:
            return await call_next(request)
        except Exception as e:
            # The server answers an unexpected exception with -32603 raised from it: the
            # exception it was is what the mapping names.
            original = e.__cause__ if _internal(e) else e
            if original is None or isinstance(original, ProtocolError):
                raise
            for kind, target in self.mapping.items():
                if isinstance(original, kind):
                    if callable(target):
                        raise target(original) from original
                    code, message = target
                    raise ProtocolError(code, message) from original
            raise


def _internal(e: BaseException) -> bool:
    return isinstance(e, ProtocolError) and e.code == INTERNAL_ERROR


def wrap_handlers(
    table: Mapping[str, Callable[[Any, Any], Awaitable[Any]]],
    middleware: Sequence[MiddlewareFn],
    role: str = "server",
) -> dict[str, Callable[[Any, Any], Awaitable[Any]]]:
    """``table`` (method -> ``handler(context, params)``) with each handler behind the chain
    (built once per method, not per request). Without middleware, ``table`` as it is."""
    if not middleware:
        return dict(table)
    return {method: _behind(method, handler, middleware, role) for method, handler in table.items()}


def _behind(
    method: str,
    handler: Callable[[Any, Any], Awaitable[Any]],
    middleware: Sequence[MiddlewareFn],
    role: str,
) -> Callable[[Any, Any], Awaitable[Any]]:
    async def last(request: MCPRequest) -> Any:
        return await handler(request.context, request.params)

    call = chain(middleware, last)

    async def serve(context: Any, params: Any) -> Any:
        return await call(MCPRequest(method, params, role, context))

    return serve
