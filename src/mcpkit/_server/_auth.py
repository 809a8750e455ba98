"""Per-operation scopes where a request is served: who called, and whether they may.

Over HTTP the app's authorization gate already refused a request lacking a tool's,
resource's or prompt's scopes (with the 403 step-up challenge); the handlers check again
where they serve, so that no path around the gate (a batch, a task, a transport added later)
reaches a protected target, and so that a scoped target served over HTTP without any
authorization configured is refused rather than open. The handlers only call here when the
server has scoped registrations at all: an unscoped server pays one truth test per call.
"""

from __future__ import annotations

from .._auth._principal import principal_of
from .._exceptions import INVALID_REQUEST, ProtocolError
from .._session._base import RequestContext


def authorize(rc: RequestContext, needed: tuple[str, ...]) -> None:
    """Refuse the request ``rc`` serves unless its caller holds every scope of ``needed``."""
    if not needed:
        return
    over_http, principal = principal_of(rc)
    if principal is None:
        if not over_http:
            return  # stdio and in-memory peers are local: no OAuth (authorization.mdx)
        raise ProtocolError(
            INVALID_REQUEST,
            f"Forbidden: this needs scope {' '.join(needed)}, and the server checks no "
            "access tokens (give it auth=ResourceServer(...))",
            {"requiredScopes": list(needed)},
        )
    missing = principal.missing(needed)
    if missing:
        raise ProtocolError(
            INVALID_REQUEST,
            f"Forbidden: this needs scope {' '.join(missing)}",
            {"requiredScopes": list(needed)},
        )


def caller_key(rc: RequestContext) -> str | None:
    """The verified caller's identity (for binding state to it), or None."""
    principal = principal_of(rc)[1]
    return principal.key if principal is not None else None
