"""The settings of the Streamable HTTP app, in one object."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict

from .._auth._resource import ResourceServer
from .._http._asgi import BODY_TIMEOUT
from .._http._events import EventStore
from .._http._security import OwnerFn

#: Seconds the requests in flight have to finish when the server is stopped (SIGTERM,
#: Ctrl-C); those still running then are cancelled, each answered with an error. uvicorn:
#: ``uvicorn_options={"timeout_graceful_shutdown": N}`` changes it; granian: the same bound.
DRAIN_TIMEOUT = 5.0


@dataclass
class HTTPAppOptions:
    """How a Streamable HTTP app serves (see :func:`mcpkit.create_http_app` for each field).

    The app reads these while it serves, so limits such as ``session_idle_timeout`` and
    ``max_sessions`` may be changed on a running app (``app.options.max_sessions = 100``).

    Example::

        opts = HTTPAppOptions(json_response=True, max_sessions=1000)
        app = create_http_app(server, options=opts)
    """

    path: str | None = "/mcp"
    json_response: bool = False
    #: Handshake-era HTTP without sessions: each POST is served by a session of its own,
    #: none is kept (no ``Mcp-Session-Id``, no GET/DELETE). Not the stateless era
    #: (2026-07-28), which the app serves on the same endpoint whatever this says.
    sessionless: bool = False
    allowed_hosts: Iterable[str] | None = None
    allowed_origins: Iterable[str] | None = None
    event_store: EventStore | None = None
    resumable: bool = True
    get_stream: bool = True
    session_idle_timeout: float | None = 1800.0
    max_sessions: int = 10_000
    max_body_size: int = 4 * 1024 * 1024
    #: Seconds a POST body may take to arrive in full; slower is answered 408 (slowloris).
    body_timeout: float = BODY_TIMEOUT
    retry_ms: int = 1000
    sse_ping_interval: float | None = 15.0
    session_owner: OwnerFn | None = None
    legacy_sse: bool = False
    #: Bearer-token authorization (OAuth 2.1 resource server); None: no authorization.
    auth: ResourceServer | None = None
    #: Where sessions and their events live, shared by many workers (a
    #: :class:`~mcpkit.lowlevel.SessionBackend`, e.g. Redis); None: in this process.
    backend: Any = None
    #: 2026-07-28 requests (no session) served at once by the app, listen streams aside;
    #: past it new ones get 503 with Retry-After. Each is served in the task of its own
    #: POST: no request waits for a slot another client holds.
    max_stateless_requests: int = 4096
    #: Of those, how many one verified principal may hold (429 past it); requests without
    #: a principal (no authorization) count against the app-wide bound only.
    max_stateless_requests_per_principal: int = 512
    #: Open ``subscriptions/listen`` streams, a budget of their own: a listen stream holds
    #: no request slot, and listeners cannot crowd out calls (503 past it).
    max_listen_streams: int = 1024
    #: Of those, how many one client may hold (429 past it): one verified principal, or
    #: without one, one client address.
    max_listen_streams_per_principal: int = 64

    @property
    def stateless(self) -> bool:
        """Deprecated: the old name of :attr:`sessionless` (warns; removed in the next
        release). "Stateless" names the 2026-07-28 era only."""
        _warn_stateless(".stateless", ".sessionless")
        return self.sessionless

    @stateless.setter
    def stateless(self, value: bool) -> None:
        _warn_stateless(".stateless", ".sessionless")
        self.sessionless = value


def _warn_stateless(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old``, a spelling of the sessionless setting, is deprecated for ``new``
    (``stacklevel`` counted from this function's caller's caller, the user's code)."""
    warnings.warn(
        f"{old} is deprecated, use {new}: the same setting (handshake-era HTTP without "
        'sessions), renamed because "stateless" names the 2026-07-28 era only; the old '
        "spelling goes in the next release",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def stateless_keyword(value: bool, stacklevel: int = 3) -> bool:
    """``value``, given as the deprecated ``stateless=`` keyword: warns (DeprecationWarning)
    naming ``sessionless=``. ``stacklevel`` as for :func:`warnings.warn` called here (3:
    the caller of the function that took the keyword)."""
    _warn_stateless("stateless=", "sessionless=", stacklevel + 1)
    return value


def sessionless_alias(options: dict[str, Any], stacklevel: int = 3) -> dict[str, Any]:
    """``options`` (keywords of an HTTP entry point) with the deprecated ``stateless=``
    moved to ``sessionless=`` (see :func:`stateless_keyword`); ``sessionless=`` wins when
    both are given."""
    if "stateless" not in options:
        return options
    out = dict(options)
    old = stateless_keyword(bool(out.pop("stateless")), stacklevel + 1)
    out.setdefault("sessionless", old)
    return out


class HTTPAppKeywords(TypedDict, total=False):
    """The keywords of :func:`mcpkit.create_http_app` (besides ``server``, ``options`` and
    ``path``), for the entry points that pass them on (``Server.http_app``,
    ``Server.run``): type checkers and IDEs see each by name and type."""

    json_response: bool
    sessionless: bool
    #: Deprecated: the old name of ``sessionless`` (warns; removed in the next release).
    stateless: bool
    allowed_hosts: Iterable[str] | None
    allowed_origins: Iterable[str] | None
    event_store: EventStore | None
    resumable: bool
    get_stream: bool
    session_idle_timeout: float | None
    max_sessions: int
    max_body_size: int
    body_timeout: float
    retry_ms: int
    sse_ping_interval: float | None
    session_owner: Callable[[dict[str, str]], str | None] | None
    legacy_sse: bool
    auth: ResourceServer | None
    backend: Any
    max_stateless_requests: int
    max_stateless_requests_per_principal: int
    max_listen_streams: int
    max_listen_streams_per_principal: int


def announcement(what: str, host: str, port: int | None, path: str) -> str:
    """``mcpkit: serving WHAT at URL (Ctrl-C to stop)``: the line each HTTP server prints
    once it listens (tests and supervisors wait for it)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"mcpkit: serving {what} at http://{shown}:{port}{path} (Ctrl-C to stop)"
