"""Host and Origin validation: the DNS-rebinding defence of a local HTTP server.

A web page on ``evil.example`` can make a browser send requests to ``127.0.0.1`` once its
DNS name resolves there; those requests carry ``Host: evil.example`` and
``Origin: http://evil.example``. Checking both against an allow-list stops it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

#: Hosts a server reachable only on the loopback interface answers to.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")


#: A host name or IPv4 address, or an IPv6 literal in brackets: nothing else may be in Host.
_HOST = re.compile(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?|\[[0-9a-f:.]+\]")


def _split_host(value: str, *, pattern: bool = False) -> tuple[str, str | None] | None:
    """``(host, port)`` of a ``Host`` value or the authority of an ``Origin``; None if invalid.

    Strict on purpose: a lenient split reads ``localhost:evil@x`` as host ``localhost`` with
    port ``evil@x``, or ``localhost:1@evil.com`` as ``localhost`` — exactly the values a DNS
    rebinding page would try. Userinfo, paths and non-numeric ports are refused. Only allow-list
    patterns (``pattern=True``) may use ``*`` as the port.
    """
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[: end + 1], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:] if rest else None
    else:
        host, sep, port_text = value.partition(":")
        port = port_text if sep else None
    if not _HOST.fullmatch(host):
        return None
    if port == "" or port is None:
        return host, None
    if port == "*" and pattern:
        return host, port
    if not (port.isascii() and port.isdigit() and len(port) <= 5 and int(port) <= 65535):
        return None
    return host, port


def _pattern(value: str) -> tuple[str, str | None]:
    parsed = _split_host(value, pattern=True)
    if parsed is None:
        raise ValueError(f"{value!r} is not a valid host[:port] pattern")
    return parsed


#: Host values whose verdicts a policy remembers.
_SEEN_MAX = 64


class HostOriginPolicy:
    """Decides whether a request's ``Host`` and ``Origin`` headers are acceptable.

    Patterns are ``host`` (any port), ``host:port``, or ``*`` (anything: only behind a
    proxy that checks for you). Origins are ``scheme://host[:port]`` with ``:*`` for any
    port. ``None`` means the loopback defaults.
    """

    def __init__(
        self, allowed_hosts: Iterable[str] | None, allowed_origins: Iterable[str] | None
    ) -> None:
        hosts = list(allowed_hosts) if allowed_hosts is not None else list(LOCAL_HOSTS)
        self.any_host = "*" in hosts
        self._hosts = [_pattern(h) for h in hosts if h != "*"]
        self._seen: dict[str | None, bool] = {}
        # Browser pages on other origins (CORS) are served only for origins named by the
        # deployer: the loopback defaults keep DNS rebinding out, they do not invite every
        # page a local dev server serves to call this one.
        self.origins_named = allowed_origins is not None
        if allowed_origins is None:
            origins = [f"{s}://{h}:*" for s in ("http", "https") for h, _ in self._hosts] + [
                f"{s}://{h}" for s in ("http", "https") for h, _ in self._hosts
            ]
            if self.any_host:
                origins.append("*")
        else:
            origins = list(allowed_origins)
        self.any_origin = "*" in origins
        self._origins: list[tuple[str, str, str | None]] = []
        for o in origins:
            if o == "*":
                continue
            scheme, sep, rest = o.lower().rstrip("/").partition("://")
            if not sep:
                raise ValueError(f"allowed origin {o!r} is not scheme://host[:port]")
            h, p = _pattern(rest)
            self._origins.append((scheme, h, p))

    def host_ok(self, host: str | None) -> bool:
        if self.any_host:
            return True
        # The same few Host values come on every request: their verdicts are remembered
        # (a bounded table; a client sending ever new values only refills it).
        known = self._seen.get(host)
        if known is not None:
            return known
        verdict = self._host_ok(host)
        if len(self._seen) >= _SEEN_MAX:
            self._seen.clear()
        self._seen[host] = verdict
        return verdict

    def _host_ok(self, host: str | None) -> bool:
        parsed = _split_host(host) if host else None
        if parsed is None:
            return False
        h, p = parsed
        return any(h == ah and (ap is None or ap == "*" or ap == p) for ah, ap in self._hosts)

    def origin_ok(self, origin: str | None) -> bool:
        # No Origin header: not a browser's cross-site request (CLI tools, SDK clients).
        if origin is None or self.any_origin:
            return True
        scheme, sep, rest = origin.strip().lower().partition("://")
        parsed = _split_host(rest) if sep else None
        if parsed is None:
            return False
        h, p = parsed
        return any(
            scheme == s and h == ah and (ap == "*" or ap == p) for s, ah, ap in self._origins
        )


#: ``fn(request headers) -> identity``: who is asking (None when anonymous).
OwnerFn = Callable[[dict[str, str]], "str | None"]


class SessionOwnership:
    """The one owner check of every HTTP transport (Streamable HTTP and legacy SSE alike).

    A session belongs to whoever created it: a request on it from anyone else is treated as
    a request on an unknown session, so another principal can neither use it nor learn that it
    exists. Without an ``owner_fn`` there are no owners and every request is allowed.
    """

    __slots__ = ("_fn",)

    def __init__(self, owner_fn: OwnerFn | None) -> None:
        self._fn = owner_fn

    @property
    def enabled(self) -> bool:
        """Whether sessions are bound to owners at all."""
        return self._fn is not None

    def owner(self, headers: dict[str, str]) -> str | None:
        """The identity to record for a session created by this request."""
        return self._fn(headers) if self._fn is not None else None

    def allows(self, recorded: str | None, headers: dict[str, str]) -> bool:
        """Whether this request may use a session created by ``recorded``."""
        return self._fn is None or recorded == self._fn(headers)
