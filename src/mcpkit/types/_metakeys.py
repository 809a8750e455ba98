"""``_meta`` key names: the format the spec prescribes, checked where users give us keys.

A key is an optional prefix (dot-separated labels followed by ``/``) and a name. Labels
start with a letter and end with a letter or digit, with letters, digits and hyphens
between; the name, unless empty, starts and ends with an alphanumeric and may contain
``-``, ``_``, ``.`` between. Prefixes whose second label is ``modelcontextprotocol`` or
``mcp`` are reserved for MCP itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CLIENT_CAPABILITIES_META_KEY",
    "CLIENT_INFO_META_KEY",
    "LOG_LEVEL_META_KEY",
    "PROTOCOL_VERSION_META_KEY",
    "SERVER_INFO_META_KEY",
    "SUBSCRIPTION_ID_META_KEY",
    "check_meta",
    "is_reserved_meta_key",
    "is_valid_meta_key",
]

# Keys MCP itself defines (2026-07-28), under its reserved ``io.modelcontextprotocol/`` prefix.
#: Request ``_meta``: the protocol revision of this request (required).
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
#: Request ``_meta``: the client's capabilities for this request (required).
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
#: Request ``_meta``: who the client is (an ``Implementation``).
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
#: Request ``_meta``: the lowest log level the client wants for this request; without it
#: the server sends no ``notifications/message`` for the request.
LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel"
#: Result ``_meta``: who the server is (an ``Implementation``).
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
#: Notification and ``subscriptions/listen`` result ``_meta``: the id of the
#: ``subscriptions/listen`` request whose stream the message belongs to.
SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_KEY = re.compile(rf"(?:{_LABEL}(?:\.{_LABEL})*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")


def is_valid_meta_key(key: str) -> bool:
    """True when ``key`` has the format of a ``_meta`` key name.

    Example::

        >>> is_valid_meta_key("com.example/trace-id"), is_valid_meta_key("-bad")
        (True, False)
    """
    return _KEY.fullmatch(key) is not None


def is_reserved_meta_key(key: str) -> bool:
    """True when ``key``'s prefix is reserved for MCP (second label ``modelcontextprotocol`` or ``mcp``)."""
    prefix, slash, _ = key.partition("/")
    if not slash:
        return False
    labels = prefix.split(".")
    return len(labels) >= 2 and labels[1] in ("modelcontextprotocol", "mcp")


def check_meta(meta: Mapping[str, Any] | None, where: str) -> None:
    """Raise ``ValueError`` naming every key of ``meta`` that is not a valid key name.

    Values are not inspected: what is under a key is the business of whoever defined it.
    """
    if not meta:
        return
    bad = [k for k in meta if not isinstance(k, str) or not is_valid_meta_key(k)]
    if bad:
        raise ValueError(
            f"{where}: invalid _meta key(s) {bad!r}: a key is an optional reverse-DNS prefix "
            "ending in '/' (e.g. 'com.example/') and a name that starts and ends with a letter or digit"
        )
