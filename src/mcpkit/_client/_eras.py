"""The era each HTTP server was found to speak, remembered in this process.

versioning.mdx: "The era determination is a property of the server, not of an individual
request. Clients SHOULD cache the result for the lifetime of the server process (stdio) or
origin (HTTP)". A stdio server lives as long as its one connection, so only HTTP servers are
remembered: by the origin of their MCP endpoint and its path (one origin may host several
endpoints, as a gateway does, each with its own era). A server remembered as one of the
handshake era is sent ``initialize`` at once, without the ``server/discover`` probe; a
stateless one is probed at the revision it spoke. When that assumption fails, the entry is
forgotten and the server probed afresh.

The memory is bounded (the least recently used entries go first) and cleared by
:meth:`mcpkit.Client.clear_era_cache`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from urllib.parse import urlsplit

from ._targets import HTTPTarget

#: Endpoints remembered at most.
MAX_ENTRIES = 256

_DEFAULT_PORTS = {"http": 80, "https": 443}


class EraCache:
    """Endpoint key -> the protocol revision its server spoke (which says the era)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[str, str] = OrderedDict()
        # Clients run on several event loops at once (SyncClient's thread, the caller's).
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            version = self._entries.get(key)
            if version is not None:
                self._entries.move_to_end(key)
            return version

    def put(self, key: str, version: str) -> None:
        with self._lock:
            self._entries[key] = version
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def forget(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


#: The one memory of the process.
ERAS = EraCache()


def endpoint_key(url: str) -> str:
    """``url`` as the cache knows it: scheme, host and port (the origin), and the path."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal, as it is written in a URL
    port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    return f"{scheme}://{host}:{port}{parts.path or '/'}"


def key_of(target: object) -> str | None:
    """The cache key of a client's target: its endpoint for an HTTP server, else None."""
    return endpoint_key(target.url) if isinstance(target, HTTPTarget) else None
