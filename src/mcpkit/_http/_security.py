"""Host and Origin validation: the DNS-rebinding defence of a local HTTP server.

A web page on ``evil.example`` can make a browser send requests to ``127.0.0.1`` once its
DNS name resolves there; those requests carry ``Host: evil.example`` and
``Origin: http://evil.example``. Checking both against an allow-list stops it.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Hosts a server reachable only on the loopback interface answers to.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def _split_host(value: str) -> tuple[str, str | None]:
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        host, rest = value[: end + 1], value[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    host, sep, port = value.rpartition(":")
    if not sep:
        return value, None
    return host, port


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
        self._hosts = [_split_host(h) for h in hosts if h != "*"]
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
                continue
            h, p = _split_host(rest)
            self._origins.append((scheme, h, p))

    def host_ok(self, host: str | None) -> bool:
        if self.any_host:
            return True
        if not host:
            return False
        h, p = _split_host(host)
        return any(h == ah and (ap is None or ap == "*" or ap == p) for ah, ap in self._hosts)

    def origin_ok(self, origin: str | None) -> bool:
        # No Origin header: not a browser's cross-site request (CLI tools, SDK clients).
        if origin is None or self.any_origin:
            return True
        scheme, sep, rest = origin.strip().lower().rstrip("/").partition("://")
        if not sep:
            return False
        h, p = _split_host(rest)
        return any(
            scheme == s and h == ah and (ap == "*" or ap == p) for s, ah, ap in self._origins
        )
