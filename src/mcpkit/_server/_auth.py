"""Per-operation scopes on the server side: who called, and whether they may.

Over HTTP the app's authorization gate already refused a request lacking a tool's,
resource's or prompt's scopes (with the 403 step-up challenge); this guard is the same
check where the request is served, so that no path around the gate (a batch, a task, a
transport added later) reaches a protected handler, and so that a scoped tool served over
HTTP without any authorization configured is refused rather than open.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .._auth._principal import principal_of
from .._exceptions import INVALID_REQUEST, ProtocolError
from .._session._base import RequestContext
from ._registry import Registry

#: The methods whose target may carry its own required scopes.
GUARDED = ("tools/call", "resources/read", "resources/subscribe", "prompts/get")

Handler = Callable[[Any, Any], Awaitable[Any]]


def guard_scopes(table: Mapping[str, Handler], registry: Registry) -> dict[str, Handler]:
    """``table`` with the guarded methods checking their target's scopes first."""
    guarded = dict(table)
    for method in GUARDED:
        handler = table.get(method)
        if handler is not None:
            guarded[method] = _guard(method, handler, registry)
    return guarded


def _guard(method: str, handler: Handler, registry: Registry) -> Handler:
    async def checked(rc: RequestContext, params: Any) -> Any:
        if registry.scopes:
            needed = registry.scopes_for(method, params)
            if needed:
                over_http, principal = principal_of(rc)
                if over_http and principal is None:
                    raise ProtocolError(
                        INVALID_REQUEST,
                        f"Forbidden: this needs scope {' '.join(needed)}, and the server "
                        "checks no access tokens (give it auth=ResourceServer(...))",
                        {"requiredScopes": list(needed)},
                    )
                missing = principal.missing(needed) if principal is not None else []
                if missing:
                    raise ProtocolError(
                        INVALID_REQUEST,
                        f"Forbidden: this needs scope {' '.join(missing)}",
                        {"requiredScopes": list(needed)},
                    )
        return await handler(rc, params)

    return checked
