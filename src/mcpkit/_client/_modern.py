"""Opening a :class:`~mcpkit.Client`'s session in the era the server speaks.

Era detection (versioning.mdx, the transports' "Backward Compatibility"): ``server/discover``
first, the spec's probe on stdio and HTTP alike. A ``DiscoverResult`` keeps the client
stateless. A recognized modern error identifies a modern server: an
``UnsupportedProtocolVersion`` naming a revision we speak is answered in that revision (a
handshake one through ``initialize``), one naming none is a :class:`~mcpkit.VersionError`
(no fall back to ``initialize``, nor to HTTP+SSE). Anything else, or silence, identifies
a server of the handshake era: ``initialize``. What an HTTP server spoke is remembered
(``_eras``), so the next connection to it skips the probe when it needs none.

The ``subscriptions/listen`` stream of a stateless client is in ``_listen``.
"""

from __future__ import annotations

import logging
from typing import Any

from .._exceptions import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ConnectionClosed,
    ProtocolError,
    RequestTimeout,
    TransportError,
    VersionError,
)
from .._session._client import LATEST_STATELESS_VERSION, ClientSession
from ..types import InitializeResult
from ..types._revisions import HANDSHAKE_PROTOCOL_VERSIONS, STATELESS_PROTOCOL_VERSIONS
from ._eras import ERAS, key_of
from ._targets import describe, stdout_note
from ._util import parse_result, undeliverable

logger = logging.getLogger("mcpkit.client")

#: How long the ``server/discover`` probe may take before a silent server counts as one of
#: the handshake era (versioning.mdx: "the probe returns a non-modern error or times out").
PROBE_TIMEOUT = 10.0
#: Errors only a modern server sends: the server is modern, the request was wrong.
_MODERN_CODES = frozenset({HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY})


async def handshake(
    session: ClientSession, version: str | None, timeout: float, target: Any
) -> InitializeResult:
    """:func:`open_session`, its failures told in terms of ``target`` (the server we reach):
    a lost connection or a silence says what the server wrote that was not JSON-RPC."""
    try:
        return await open_session(session, version, timeout, key_of(target))
    except ConnectionClosed as e:
        raise ConnectionClosed(
            f"{describe(target)}: connection lost during initialize: {e}" + stdout_note(session)
        ) from None
    except RequestTimeout as e:
        raise RequestTimeout(f"{e}{stdout_note(session)}") from None
    except VersionError as e:
        raise VersionError(f"{describe(target)}: {e}", supported=e.supported) from None
    except ProtocolError as e:
        if undeliverable(e):
            raise TransportError(f"cannot reach {describe(target)}: {e.message}") from None
        raise


async def open_session(
    session: ClientSession, version: str | None, timeout: float, era_key: str | None = None
) -> InitializeResult:
    """Open ``session`` in the era the server speaks; the result in ``initialize`` shape.

    ``version`` None: probe with the newest stateless revision, fall back to the handshake
    when the server is of that era. A stateless revision forces the stateless era, a
    handshake one forces ``initialize``. ``era_key``: where the server's era is remembered
    (its HTTP endpoint), used and updated when ``version`` is None.
    """
    if version is not None and version not in STATELESS_PROTOCOL_VERSIONS:
        return await _initialize(session, version, timeout)
    if version is not None:
        raw = await session.discover(version, timeout=timeout)
        return _as_initialize_result(session, raw)
    remembered = ERAS.get(era_key) if era_key is not None else None
    if era_key is not None and remembered in HANDSHAKE_PROTOCOL_VERSIONS:
        try:
            return await _initialize(session, None, timeout)
        except (ProtocolError, VersionError) as e:
            if isinstance(e, ProtocolError) and undeliverable(e):
                raise  # not reached at all: nothing learnt about its era
            # The server changed since (a modern one now): probe it afresh.
            logger.info("initialize failed where it worked before (%s): probing the server", e)
            ERAS.forget(era_key)
            remembered = None
    result = await _probe(session, remembered or LATEST_STATELESS_VERSION, timeout)
    if era_key is not None:
        ERAS.put(era_key, result.protocol_version)
    return result


async def _probe(session: ClientSession, version: str, timeout: float) -> InitializeResult:
    """``server/discover`` at ``version``, then what its answer says (see the module's doc)."""
    try:
        raw = await session.discover(version, timeout=min(timeout, PROBE_TIMEOUT))
    except VersionError as e:
        # A modern server sharing no stateless revision with us: a handshake revision it
        # offers is the one to speak, else there is none.
        shared = [v for v in session.supported_versions if v in e.supported]
        if not shared:
            message = _no_common_version(session, e.supported)
            raise VersionError(message, supported=e.supported) from None
        logger.debug("the server offers %s: initialize", shared[0])
        return await _initialize(session, shared[0], timeout)
    except ProtocolError as e:
        if e.code in _MODERN_CODES:
            raise
        logger.debug("server/discover refused (%s): the server needs initialize", e)
    except RequestTimeout:
        logger.debug("no answer to server/discover: the server needs initialize")
    else:
        return _as_initialize_result(session, raw)
    return await _initialize(session, None, timeout)


def _no_common_version(session: ClientSession, offered: tuple[str, ...]) -> str:
    ours = ", ".join((*STATELESS_PROTOCOL_VERSIONS, *session.supported_versions))
    theirs = ", ".join(offered) or "none it named"
    return f"no common protocol version (the server supports {theirs}; this client speaks {ours})"


async def _initialize(
    session: ClientSession, version: str | None, timeout: float
) -> InitializeResult:
    """The handshake, asking for ``version`` (None: the newest we speak)."""
    if version is not None and version not in session.supported_versions:
        raise VersionError(f"this client does not speak protocol revision {version!r}")
    if version is not None:
        session.requested_version = version
    raw = await session.initialize(timeout=timeout)
    return parse_result(InitializeResult, raw, "initialize")


def _as_initialize_result(session: ClientSession, discovered: dict[str, Any]) -> InitializeResult:
    negotiated = session.negotiated
    assert negotiated is not None
    info = negotiated.peer_info or {"name": "unknown", "version": ""}
    shaped: dict[str, Any] = {
        "protocolVersion": negotiated.protocol_version,
        "capabilities": negotiated.peer_capabilities,
        "serverInfo": {"name": "unknown", "version": "", **info},
    }
    if negotiated.instructions is not None:
        shaped["instructions"] = negotiated.instructions
    return parse_result(InitializeResult, shaped, "server/discover")
