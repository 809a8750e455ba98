"""The ``subscriptions/listen`` stream of a stateless :class:`~mcpkit.Client` (2026-07-28).

There is no session to push change notifications to, so one ``subscriptions/listen``
request stays open with the filter the client needs (resource subscriptions, and the lists
whose changes someone listens for). A new filter opens a new stream; the old one ends once
the new one is acknowledged, so no change is missed in between.

* The acknowledgement says what the server agreed to honour (subscriptions.mdx: the
  client SHOULD check it against what it asked): kept on the :class:`Subscription`, and
  what was left out is logged.
* Every notification of a stream carries its subscription id
  (``io.modelcontextprotocol/subscriptionId``, the listen request's JSON-RPC id); on stdio
  all streams share one channel, so the client MUST correlate by it: a notification tagged
  with the id of a stream that is not the current one (an old filter's, one already
  cancelled) is dropped. Untagged ones (handshake-era servers) are delivered as before.
* A stream the server closed before ending it is a lost request: it is sent again, as a
  new request with a new id (bounded by ``ClientSession.max_reissues`` breaks in a row; a
  stream that had lived a while starts a new count).
* A server that declares what a stream would carry but has no ``subscriptions/listen``
  (-32601) is not asked again on that connection: nothing to listen to, and nothing to warn
  about (said once at debug level).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from .._exceptions import METHOD_NOT_FOUND, MCPError, ProtocolError
from .._transports._base import RequestId, answer_lost
from ..types._metakeys import SUBSCRIPTION_ID_META_KEY as META_SUBSCRIPTION_ID

if TYPE_CHECKING:
    from ._face import ClientLike

logger = logging.getLogger("mcpkit.client")

NotificationFn = Callable[[dict[str, Any] | None], Awaitable[None]]

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
#: The notifications a listen stream delivers (the filter's kinds).
STREAM_NOTIFICATIONS = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    }
)
#: The server capability announcing a list's changes, and the filter's field for them.
_LIST_KINDS = (
    ("tools", "toolsListChanged"),
    ("prompts", "promptsListChanged"),
    ("resources", "resourcesListChanged"),
)
#: Seconds an acknowledged stream must have lived for its breaking to start a new count of
#: re-issues (a server that acknowledges and drops at once is not re-listened to forever).
STABLE_AFTER = 10.0


def subscription_id(params: Mapping[str, Any] | None) -> RequestId | None:
    """The subscription id a notification is tagged with (None: untagged)."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    value = meta.get(META_SUBSCRIPTION_ID) if isinstance(meta, Mapping) else None
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def refused(requested: Mapping[str, Any], acknowledged: Mapping[str, Any]) -> dict[str, Any]:
    """What ``requested`` asked for that ``acknowledged`` leaves out (the same shape)."""
    out: dict[str, Any] = {}
    for kind, asked in requested.items():
        if kind == "resourceSubscriptions":
            got = acknowledged.get(kind)
            kept = set(got) if isinstance(got, list) else set()
            missing = [uri for uri in asked if uri not in kept]
            if missing:
                out[kind] = missing
        elif asked and acknowledged.get(kind) is not True:
            out[kind] = asked
    return out


class Subscription:
    """One ``subscriptions/listen`` stream of a stateless client (:attr:`Client.subscription`).

    ``requested`` is the filter asked for; ``acknowledged`` the part of it the server agreed
    to honour (None until it acknowledged; kinds it does not support are left out);
    ``refused`` what was asked and not agreed to. ``id`` is the subscription id, the JSON-RPC
    id of its listen request (a new one each time the request is sent again); ``closed``
    turns true when the stream ends.
    """

    def __init__(self, requested: dict[str, Any], generation: int) -> None:
        self.requested = requested
        self.id: RequestId | None = None
        self.acknowledged: dict[str, Any] | None = None
        self.closed = False
        self.generation = generation
        #: When the current request was acknowledged (None: not yet).
        self.acked_at: float | None = None
        #: Set once acknowledged or ended: what :meth:`Listener.refresh` waits for.
        self.settled = anyio.Event()
        self.scope = anyio.CancelScope()

    @property
    def refused(self) -> dict[str, Any]:
        """What was requested and not acknowledged (everything, before the acknowledgement)."""
        return refused(self.requested, self.acknowledged or {})

    def sent_as(self, rid: RequestId) -> None:
        """Its listen request goes out with id ``rid`` (the engine tells us, before sending)."""
        self.id = rid
        self.acked_at = None

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return (
            f"Subscription(id={self.id!r}, {state}, requested={self.requested!r}, "
            f"acknowledged={self.acknowledged!r})"
        )


class Listener:
    """The listen streams of a stateless :class:`Client`: the current one, and the one
    opening to replace it."""

    def __init__(self, client: ClientLike) -> None:
        self.client = client
        self.uris: set[str] = set()
        self.tg: TaskGroup | None = None
        #: The stream notifications are taken from.
        self.current: Subscription | None = None
        self._open: list[Subscription] = []
        self._generation = 0
        #: The connection (its task group) whose server has no ``subscriptions/listen``.
        self._unsupported_in: TaskGroup | None = None

    def wanted(self) -> dict[str, Any]:
        """The filter: the resources subscribed to, and the changes of every list the server
        says it announces (``listChanged``) when someone listens for them (the client's
        list caches follow them too)."""
        filt: dict[str, Any] = {}
        if self.client._wants_list_changes():
            caps = self.client.session.server_capabilities
            for kind, key in _LIST_KINDS:
                declared = caps.get(kind)
                if isinstance(declared, Mapping) and declared.get("listChanged") is True:
                    filt[key] = True
        if self.uris:
            filt["resourceSubscriptions"] = sorted(self.uris)
        return filt

    async def refresh(self, timeout: float | None) -> Subscription | None:
        """Open a stream asking for :meth:`wanted` and wait for its acknowledgement; the
        stream it replaces ends then. Nothing wanted: every stream ends."""
        filt = self.wanted()
        if not filt or self.tg is None or self._unsupported_in is self.tg:
            for sub in list(self._open):
                self._close(sub)
            self.current = None
            return None
        self._generation += 1
        sub = Subscription(filt, self._generation)
        self._open.append(sub)
        self.tg.start_soon(self._run, sub)
        try:
            with anyio.fail_after(timeout):
                await sub.settled.wait()
        except BaseException:
            self._close(sub)
            raise
        if self._unsupported_in is self.tg:
            self.current = None  # no such method: nothing listens, as when nothing is wanted
            return None
        if sub is not self.current and sub.generation == self._generation:
            # It ended unacknowledged (refused; logged): what the older stream asked is stale.
            for other in list(self._open):
                self._close(other)
            self.current = sub
        return sub

    def route(self, handlers: Mapping[str, NotificationFn]) -> dict[str, NotificationFn]:
        """``handlers`` with the stream's notifications correlated by subscription id, and
        the acknowledgement read here."""
        out = dict(handlers)
        for method in STREAM_NOTIFICATIONS & out.keys():
            out[method] = self._correlated(method, out[method])
        out[ACKNOWLEDGED] = self.on_acknowledged
        return out

    def accepts(self, params: Mapping[str, Any] | None) -> bool:
        """Whether a stream notification is ours: untagged, or tagged with the current
        stream's subscription id."""
        tag = subscription_id(params)
        session = self.client._session
        if tag is None or session is None or not session.stateless:
            return True
        cur = self.current
        return cur is not None and not cur.closed and tag == cur.id

    def _correlated(self, method: str, handler: NotificationFn) -> NotificationFn:
        async def correlated(params: dict[str, Any] | None) -> None:
            if self.accepts(params):
                await handler(params)
            else:
                logger.debug(
                    "dropped %s of subscription %r (not the current stream)",
                    method,
                    subscription_id(params),
                )

        return correlated

    async def on_acknowledged(self, params: dict[str, Any] | None) -> None:
        """``notifications/subscriptions/acknowledged``: the stream it names is established
        (and becomes the current one, unless a newer one already is). One naming none is
        the newest opening stream's."""
        tag = subscription_id(params)
        sub = self._find(tag)
        if sub is None:
            logger.debug("ignored the acknowledgement of unknown subscription %r", tag)
            return
        given = params.get("notifications") if isinstance(params, Mapping) else None
        sub.acknowledged = dict(given) if isinstance(given, Mapping) else {}
        sub.acked_at = anyio.current_time()
        left_out = sub.refused
        if left_out:
            logger.warning(
                "%s: the server does not send all the notifications asked for; left out: %s",
                self.client.name or "server",
                left_out,
            )
        self._establish(sub)

    def _establish(self, sub: Subscription) -> None:
        """``sub`` was acknowledged: the current stream now, the older ones ended (unless
        a newer one is current already: ``sub`` ends)."""
        cur = self.current
        if cur is None or sub.generation >= cur.generation:
            self.current = sub
            for older in [s for s in self._open if s.generation < sub.generation]:
                self._close(older)
        else:
            self._close(sub)
        sub.settled.set()

    def _find(self, tag: RequestId | None) -> Subscription | None:
        if tag is None:
            waiting = [s for s in self._open if s.acked_at is None]
            return waiting[-1] if waiting else None
        return next((s for s in self._open if s.id == tag), None)

    def _close(self, sub: Subscription, *, cancel: bool = True) -> None:
        sub.closed = True
        if cancel:
            sub.scope.cancel()
        if sub in self._open:
            self._open.remove(sub)
        sub.settled.set()

    async def _run(self, sub: Subscription) -> None:
        with sub.scope:
            try:
                await self._listen(sub)
            except MCPError as e:
                if isinstance(e, ProtocolError) and e.code == METHOD_NOT_FOUND:
                    self._unsupported()
                else:
                    logger.warning("the subscriptions/listen stream ended: %s", e)
            finally:
                # Ended: nobody waits forever for an acknowledgement that will not come.
                self._close(sub, cancel=False)

    def _unsupported(self) -> None:
        """The server has no ``subscriptions/listen``: stop asking on this connection (a new
        one, perhaps to an upgraded server, asks again)."""
        if self._unsupported_in is not self.tg:
            self._unsupported_in = self.tg
            logger.debug(
                "%s has no subscriptions/listen (-32601): not listening for notifications",
                self.client.name or "the server",
            )

    async def _listen(self, sub: Subscription) -> None:
        """Hold ``sub``'s listen request open, sending it again when its stream breaks."""
        breaks = 0
        while True:
            try:
                await self.client.session.send_request(
                    "subscriptions/listen",
                    {"notifications": sub.requested},
                    timeout=None,
                    on_id=sub.sent_as,
                    # Sent again here, not by the session: a stream that lived a while
                    # starts a new count. Safe: a listen has no effect but its stream.
                    reissues=0,
                )
            except ProtocolError as e:
                if not answer_lost(e):
                    raise
                lived = sub.acked_at is not None and (
                    anyio.current_time() - sub.acked_at >= STABLE_AFTER
                )
                breaks = 0 if lived else breaks + 1
                if breaks > self.client.session.max_reissues:
                    raise
                logger.info("the subscriptions/listen stream broke; listening again")
                continue
            logger.info("the server ended the subscriptions/listen stream")
            return
