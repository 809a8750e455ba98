"""What a :class:`~mcpkit.Client` does differently under the stateless revision (2026-07-28).

* Era detection: ``server/discover`` first (the spec's probe, on stdio and HTTP alike); a
  modern answer keeps the client stateless, anything else falls back to ``initialize``.
* Change notifications: no session to push them to, so one ``subscriptions/listen``
  request stays open with the filter the client needs (resource subscriptions, and the
  lists whose changes someone listens for); a new filter replaces the stream.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from .._exceptions import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ConnectionClosed,
    MCPError,
    ProtocolError,
    RequestTimeout,
    TransportError,
    VersionError,
)
from .._session._client import LATEST_STATELESS_VERSION, ClientSession
from ..types import InitializeResult
from ..types._revisions import STATELESS_PROTOCOL_VERSIONS
from ._targets import describe, stdout_note
from ._util import parse_result, undeliverable

if TYPE_CHECKING:
    from ._client import Client

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
        return await open_session(session, version, timeout)
    except ConnectionClosed as e:
        raise ConnectionClosed(
            f"{describe(target)}: connection lost during initialize: {e}" + stdout_note(session)
        ) from None
    except RequestTimeout as e:
        raise RequestTimeout(f"{e}{stdout_note(session)}") from None
    except ProtocolError as e:
        if undeliverable(e):
            raise TransportError(f"cannot reach {describe(target)}: {e.message}") from None
        raise


async def open_session(
    session: ClientSession, version: str | None, timeout: float
) -> InitializeResult:
    """Open ``session`` in the era the server speaks; the result in ``initialize`` shape.

    ``version`` None: try the newest stateless revision, fall back to the handshake. A
    stateless revision forces the stateless era, a handshake one forces ``initialize``.
    """
    if version is None or version in STATELESS_PROTOCOL_VERSIONS:
        forced = version is not None
        try:
            raw = await session.discover(
                version or LATEST_STATELESS_VERSION,
                timeout=timeout if forced else min(timeout, PROBE_TIMEOUT),
            )
        except VersionError:
            if forced:
                raise
            logger.debug("the server shares no stateless revision with us: initialize")
        except ProtocolError as e:
            if forced or e.code in _MODERN_CODES:
                raise
            logger.debug("server/discover refused (%s): the server needs initialize", e)
        except RequestTimeout:
            if forced:
                raise
            logger.debug("no answer to server/discover: the server needs initialize")
        else:
            return _as_initialize_result(session, raw)
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


class Listener:
    """The one ``subscriptions/listen`` stream of a stateless :class:`Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.uris: set[str] = set()
        self.tg: TaskGroup | None = None
        self._scope: anyio.CancelScope | None = None
        self._acked: anyio.Event | None = None

    def wanted(self) -> dict[str, Any]:
        """The filter: the resources subscribed to, and every list change when someone
        listens for them (the client's list caches follow them too)."""
        filt: dict[str, Any] = {}
        if self.client._wants_list_changes():
            filt.update(toolsListChanged=True, promptsListChanged=True, resourcesListChanged=True)
        if self.uris:
            filt["resourceSubscriptions"] = sorted(self.uris)
        return filt

    async def refresh(self, timeout: float | None) -> None:
        """Replace the stream with one asking for :meth:`wanted`; wait for its acknowledgement."""
        if self._scope is not None:
            self._scope.cancel()
            self._scope = None
        filt = self.wanted()
        if not filt or self.tg is None:
            return
        acked = self._acked = anyio.Event()
        scope = self._scope = anyio.CancelScope()
        self.tg.start_soon(self._listen, filt, scope)
        with anyio.fail_after(timeout):
            await acked.wait()

    def acknowledged(self) -> None:
        """The server acknowledged the current stream (``notifications/subscriptions/acknowledged``)."""
        if self._acked is not None:
            self._acked.set()

    async def _listen(self, filt: dict[str, Any], scope: anyio.CancelScope) -> None:
        with scope:
            try:
                await self.client.session.send_request(
                    "subscriptions/listen", {"notifications": filt}, timeout=None
                )
            except MCPError as e:
                logger.warning("the subscriptions/listen stream ended: %s", e)
            finally:
                if self._acked is not None:
                    self._acked.set()  # nobody waits forever for an ack that will not come
