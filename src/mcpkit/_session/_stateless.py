"""Serving a request of a stateless revision (2026-07-28) in the server role.

There is no handshake: what ``initialize`` used to settle once per session (the revision,
the client's capabilities and identity) rides in every request's ``_meta``, the server says
who it is in every result's ``_meta``, and every result names its ``resultType``. This
module reads the one and writes the other; :class:`~mcpkit._session.ServerSession` calls it
for requests that carry a modern ``_meta`` and never for a session opened with
``initialize``, so the handshake revisions pay nothing for it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from .._exceptions import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    InternalError,
    InvalidParams,
    ProtocolError,
    ResourceNotFound,
    UnsupportedProtocolVersion,
)
from ..types._levels import LOG_LEVELS
from ..types._metakeys import LOG_LEVEL_META_KEY, SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY
from ..types._revisions import HANDSHAKE_PROTOCOL_VERSIONS, STATELESS_PROTOCOL_VERSIONS
from ._base import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, Negotiated

# ``_meta`` keys, named once in ``mcpkit.types._metakeys``, under the names the layers use:
#: the log level a request asks for (no ``notifications/message`` without it);
META_LOG_LEVEL = LOG_LEVEL_META_KEY
#: the server that produced a result;
META_SERVER_INFO = SERVER_INFO_META_KEY
#: the ``subscriptions/listen`` stream a notification belongs to.
META_SUBSCRIPTION_ID = SUBSCRIPTION_ID_META_KEY

#: Results that carry caching hints (``CacheableResult``: ``ttlMs`` and ``cacheScope``).
CACHEABLE_METHODS = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
    }
)
#: The caching hints a cacheable result gets when nobody set any: stale at once, and
#: never shared between users. Safe for any server; servers that know better say so.
DEFAULT_CACHE_HINTS: Mapping[str, Any] = {"ttlMs": 0, "cacheScope": "private"}

#: Methods only the stateless revisions have: a request for one is of that era, ``_meta``
#: or not (without it, it is refused as a stateless request missing it, -32602).
STATELESS_ONLY_METHODS = frozenset({"server/discover", "subscriptions/listen"})

#: The codes 2026-07-28 defines in the sub-range it reserves for the specification
#: (-32020 to -32099, basic/index.mdx "Error Codes"): no other code of it may be emitted.
DEFINED_RESERVED_CODES = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)
#: The codes of that sub-range it does not define (-32042 among them): one lookup per error.
UNDEFINED_RESERVED_CODES = frozenset(range(-32099, -32019)) - DEFINED_RESERVED_CODES

logger = logging.getLogger("mcpkit.server")
_warned_codes: set[int] = set()


def request_version(meta: Any) -> Any:
    """The revision a request names in its ``_meta`` (None when it names none)."""
    return meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None


def is_stateless(
    method: str,
    meta: Any,
    header_version: str | None = None,
    *,
    handshake_versions: tuple[str, ...] | frozenset[str] = HANDSHAKE_PROTOCOL_VERSIONS,
    stateless_versions: tuple[str, ...] | frozenset[str] = STATELESS_PROTOCOL_VERSIONS,
) -> bool:
    """Whether a request arriving outside an initialized session belongs to the stateless
    era (2026-07-28): the one place the era is decided, for every transport.

    A request is of that era when it names a revision in its ``_meta`` that no handshake
    settles (versioning.mdx: a request carrying modern per-request ``_meta`` is served
    statelessly; a handshake revision named there does not bypass ``initialize``), when
    its ``MCP-Protocol-Version`` header (HTTP) names a stateless revision, or when its
    method exists only in that era. ``initialize`` opens the handshake era unless the
    request says it is of the stateless one, where it is a removed method (-32601).
    """
    named = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if header_version in STATELESS_PROTOCOL_VERSIONS:
        return True
    if method == "initialize":
        return named in STATELESS_PROTOCOL_VERSIONS
    if method in STATELESS_ONLY_METHODS:
        return True
    return named is not None and (named in stateless_versions or named not in handshake_versions)


def read_request_meta(
    meta: Mapping[str, Any] | None,
    *,
    stateless_versions: tuple[str, ...] | frozenset[str],
    supported_versions: tuple[str, ...],
) -> Negotiated:
    """The context a stateless request is served under, read from its ``_meta``.

    Raises :class:`InvalidParams` for a missing or malformed required member and
    :class:`UnsupportedProtocolVersion` for a revision we do not serve statelessly.
    """
    if not isinstance(meta, Mapping):
        raise InvalidParams(
            message="Invalid params: the request has no _meta; revision 2026-07-28 needs "
            f"{META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES} in every request"
        )
    version = meta.get(META_PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise InvalidParams(
            message=f"Invalid params: _meta must carry {META_PROTOCOL_VERSION} (a string)"
        )
    if version not in stateless_versions:
        raise UnsupportedProtocolVersion(
            message=f"Unsupported protocol version: {version!r}",
            data={"supported": list(supported_versions), "requested": version},
        )
    caps = meta.get(META_CLIENT_CAPABILITIES)
    if not isinstance(caps, dict):
        raise InvalidParams(
            message=f"Invalid params: _meta must carry {META_CLIENT_CAPABILITIES} (an object; "
            "{} declares none)"
        )
    info = meta.get(META_CLIENT_INFO)
    level = meta.get(META_LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        raise InvalidParams(
            message=f"Invalid params: {META_LOG_LEVEL} must be one of {', '.join(LOG_LEVELS)}"
        )
    return Negotiated(version, caps, info if isinstance(info, dict) else {}, log_level=level)


def finish_result(
    method: str,
    result: Any,
    server_info: Mapping[str, Any],
    cache_hints: Mapping[str, Any] = DEFAULT_CACHE_HINTS,
    cacheable: frozenset[str] = CACHEABLE_METHODS,
) -> Any:
    """``result`` as a stateless revision sends it: ``resultType``, the server's identity in
    ``_meta`` and, for the methods in ``cacheable`` (extensions add theirs), caching hints
    (those the handler set win)."""
    if not isinstance(result, dict):
        return result
    out = dict(result)
    out.setdefault("resultType", "complete")
    meta = out.get("_meta")
    meta = dict(meta) if isinstance(meta, dict) else {}
    # The server's own mapping, not a copy: it is serialized, never changed, per result.
    meta.setdefault(META_SERVER_INFO, server_info)
    out["_meta"] = meta
    if method in cacheable and out["resultType"] == "complete":
        for key, value in cache_hints.items():
            out.setdefault(key, value)
    return out


def translate_error(exc: ProtocolError) -> ProtocolError:
    """An error as the stateless revision codes it, never with a code it forbids.

    Resource-not-found is -32602 there (-32002 is retired). A code of the sub-range the
    specification reserves (-32020 to -32099) that it does not define, -32042 (URL
    elicitation required, retired) included, goes out as -32603 with its message and data:
    2026-07-28 implementations "MUST NOT emit" them (basic/index.mdx, Error Codes).
    """
    code = exc.code
    if code == RESOURCE_NOT_FOUND or isinstance(exc, ResourceNotFound):
        return InvalidParams(message=exc.message, data=exc.data)
    if code in UNDEFINED_RESERVED_CODES:
        if code not in _warned_codes:
            _warned_codes.add(code)
            logger.warning(
                "error code %d is reserved by revision 2026-07-28; sent as -32603 instead "
                "(use a code outside -32768..-32000 for errors of your own)",
                code,
            )
        return InternalError(message=exc.message, data=exc.data)
    return exc


def capabilities_for_stateless(capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """Our capabilities as 2026-07-28 declares them: tasks left the core for an extension."""
    return {k: v for k, v in capabilities.items() if k != "tasks"}
