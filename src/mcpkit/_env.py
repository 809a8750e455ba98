"""The ``MCPKIT_*`` environment variables mcpkit reads: each is named here once, with what it
means and its default, and every module that reads one reads it through this module.

docs/deploy.md's table ("Environment variables") lists :data:`VARIABLES`;
``tests/test_env_table.py`` checks that the two agree and that nothing in ``src/mcpkit``
reads an ``MCPKIT_*`` variable this module does not name. Variables that only the test suite
or the benchmarks read are not mcpkit's and are not here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "ALLOWED_HOSTS",
    "ALLOWED_ORIGINS",
    "AUTH_FILE",
    "HOST",
    "HTTP_SERVER",
    "JSON_RESPONSE",
    "LOG_LEVEL",
    "MAX_SESSIONS",
    "PATH",
    "PORT",
    "REDIS_URL",
    "SESSIONLESS",
    "STATELESS",
    "STATE_KEY",
    "TRANSPORT",
    "UVLOOP",
    "VARIABLES",
    "Variable",
    "parse_flag",
]

#: How a yes/no variable is written (either case, spaces around ignored).
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


@dataclass(frozen=True)
class Variable:
    """One environment variable: its name, the ``mcpkit run`` option it stands in for (``""``
    for none), what it means and what applies when it is unset (both one line, as the docs'
    table shows them)."""

    name: str
    option: str
    meaning: str
    default: str

    def value(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The variable's value in ``environ`` (default: this process's environment), or None
        when it is unset or empty: an empty variable counts as unset everywhere."""
        got = (os.environ if environ is None else environ).get(self.name)
        return got or None

    def items(self, environ: Mapping[str, str] | None = None) -> list[str] | None:
        """A comma-separated value as its non-empty items, stripped; None when unset."""
        got = self.value(environ)
        if got is None:
            return None
        return [item.strip() for item in got.split(",") if item.strip()]

    def flag(self, environ: Mapping[str, str] | None = None, *, default: bool = False) -> bool:
        """A yes/no value (``1``/``0``, ``true``/``false``, ``yes``/``no``, ``on``/``off``);
        ``default`` when unset. Raises ValueError naming the variable for anything else."""
        got = self.value(environ)
        return default if got is None else parse_flag(self.name, got)


def parse_flag(name: str, value: str) -> bool:
    """``value`` of the yes/no variable ``name`` as a bool; ValueError names both."""
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"{name}={value!r}: use 1/0, true/false, yes/no or on/off")


TRANSPORT = Variable(
    "MCPKIT_TRANSPORT",
    "--transport",
    "how `mcpkit run` serves: `stdio`, `http` or `sse`",
    "`stdio`",
)
HOST = Variable("MCPKIT_HOST", "--host", "the address `mcpkit run` listens on", "`127.0.0.1`")
PORT = Variable("MCPKIT_PORT", "--port", "the port `mcpkit run` listens on", "`8000`")
PATH = Variable("MCPKIT_PATH", "--path", "the HTTP endpoint's path", "`/mcp`")
JSON_RESPONSE = Variable(
    "MCPKIT_JSON_RESPONSE",
    "--json-response",
    "`1` (or `true`, `yes`, `on`): one JSON body per request instead of an SSE stream",
    "`0`",
)
SESSIONLESS = Variable(
    "MCPKIT_SESSIONLESS",
    "--sessionless",
    "`1`: handshake-era HTTP keeps no sessions (each POST is served by a session of its own)",
    "`0`",
)
#: Deprecated for one release: the old name of :data:`SESSIONLESS`, read (with a warning)
#: only when that one is unset. "Stateless" names the 2026-07-28 era only.
STATELESS = Variable(
    "MCPKIT_STATELESS",
    "",
    "deprecated: the old name of `MCPKIT_SESSIONLESS`, read with a warning when that is unset",
    "as `MCPKIT_SESSIONLESS`",
)
HTTP_SERVER = Variable(
    "MCPKIT_HTTP_SERVER",
    "--http-server",
    "the server the `http` transport runs on: `uvicorn`, or `granian` (RSGI; the `[granian]` extra)",
    "`uvicorn`",
)
MAX_SESSIONS = Variable(
    "MCPKIT_MAX_SESSIONS",
    "--max-sessions",
    "the handshake-era sessions one HTTP process holds at once; past it the least recently "
    "active idle one makes room, else `503` (with Redis, also `RedisBackend(max_shared_sessions=)`)",
    "`10000`",
)
LOG_LEVEL = Variable(
    "MCPKIT_LOG_LEVEL", "--log-level", "the server's own log level on stderr", "`warning`"
)
ALLOWED_HOSTS = Variable(
    "MCPKIT_ALLOWED_HOSTS",
    "--allowed-host",
    "the `Host` values an HTTP server accepts, comma-separated (`*`: any)",
    "loopback names only",
)
ALLOWED_ORIGINS = Variable(
    "MCPKIT_ALLOWED_ORIGINS",
    "--allowed-origin",
    "the `Origin` values an HTTP server accepts, comma-separated (`*`: any)",
    "loopback origins only",
)
REDIS_URL = Variable(
    "MCPKIT_REDIS_URL",
    "--redis",
    "the Redis (or Valkey) many workers share sessions, events, tasks and keys in",
    "none: this process only",
)
STATE_KEY = Variable(
    "MCPKIT_STATE_KEY",
    "",
    "the key sealing 2026-07-28 `requestState` and list cursors (the same on every worker)",
    "drawn by each process (workers on one Redis share theirs)",
)
UVLOOP = Variable(
    "MCPKIT_UVLOOP",
    "",
    "`0` (or `false`, `no`, `off`) keeps the standard event loop in `Server.run` and `mcpkit run`",
    "uvloop when installed",
)
AUTH_FILE = Variable(
    "MCPKIT_AUTH_FILE",
    "",
    "the file a client keeps its OAuth logins in",
    "`~/.config/mcpkit/auth.json`",
)

#: Every variable, in the order docs/deploy.md's table lists them.
VARIABLES: tuple[Variable, ...] = (
    TRANSPORT,
    HOST,
    PORT,
    PATH,
    JSON_RESPONSE,
    SESSIONLESS,
    STATELESS,
    HTTP_SERVER,
    MAX_SESSIONS,
    LOG_LEVEL,
    ALLOWED_HOSTS,
    ALLOWED_ORIGINS,
    REDIS_URL,
    STATE_KEY,
    UVLOOP,
    AUTH_FILE,
)
