"""Where an OAuth client keeps what it was given: client registrations and tokens.

Registrations are kept per authorization server (``client:<issuer>``): credentials one
issuer gave are never shown to another, and a server that moves to a new authorization
server gets a new registration. Tokens are kept per protected server (``token:<resource>``)
together with the issuer that granted them.

:class:`MemoryTokenStore` forgets at exit; :class:`FileTokenStore` keeps a JSON file only
its owner can read (mode 0600, replaced atomically), by default
``$MCPKIT_AUTH_FILE`` or ``~/.config/mcpkit/auth.json``. Any object with the three methods
of :class:`TokenStore` works too (a keyring, a database).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio

from .. import _env


@runtime_checkable
class TokenStore(Protocol):
    """Storage for OAuth client state: JSON-able dicts under string keys."""

    async def get(self, key: str) -> dict[str, Any] | None:
        """The value under ``key``, or None."""
        ...

    async def set(self, key: str, value: dict[str, Any]) -> None:
        """Keep ``value`` under ``key``."""
        ...

    async def delete(self, key: str) -> None:
        """Forget ``key`` (nothing happens when it is absent)."""
        ...


class MemoryTokenStore:
    """A :class:`TokenStore` in memory (the default: nothing outlives the process)."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}

    def __repr__(self) -> str:  # never the tokens
        return f"MemoryTokenStore({len(self._data)} entries)"

    async def get(self, key: str) -> dict[str, Any] | None:
        value = self._data.get(key)
        return dict(value) if value is not None else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        self._data[key] = dict(value)

    async def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def names(self) -> list[str]:
        """The keys held (for tools that list logins)."""
        return sorted(self._data)


def default_auth_file() -> Path:
    """``$MCPKIT_AUTH_FILE``, else ``~/.config/mcpkit/auth.json`` (``$XDG_CONFIG_HOME``)."""
    named = _env.AUTH_FILE.value()
    if named:
        return Path(named)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mcpkit" / "auth.json"


class FileTokenStore:
    """A :class:`TokenStore` in one JSON file readable by its owner alone (mode 0600).

    Example::

        store = FileTokenStore()  # ~/.config/mcpkit/auth.json
        auth = OAuth(store=store, redirect_handler=LoopbackRedirect())
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_auth_file()
        self._lock = anyio.Lock()

    def __repr__(self) -> str:
        return f"FileTokenStore({str(self.path)!r})"

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            # A damaged file is not silently replaced: its owner should look at it.
            raise ValueError(f"{self.path}: not a JSON token store") from None
        return data if isinstance(data, dict) else {}

    def _save(self, data: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Written beside the target, 0600 from the start, then renamed over it: a reader
        # never sees half a file and nobody else ever sees the tokens.
        fd, tmp = tempfile.mkstemp(prefix=".auth-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    async def get(self, key: str) -> dict[str, Any] | None:
        async with self._lock:
            value = self._load().get(key)
        return dict(value) if isinstance(value, dict) else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        async with self._lock:
            data = self._load()
            data[key] = dict(value)
            self._save(data)

    async def delete(self, key: str) -> None:
        async with self._lock:
            data = self._load()
            if data.pop(key, None) is not None:
                self._save(data)

    def names(self) -> list[str]:
        """The keys held (for ``mcpkit auth status``)."""
        return sorted(self._load())
