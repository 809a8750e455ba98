"""A 2026-07-28 retry routed to the worker holding its call, over the bus.

A tool that asks the client for input under revision 2026-07-28 stays suspended where it
asked, in the worker that served the first round (``mcpkit._server._held``); the sealed
``requestState`` names that worker. Behind a load balancer the retry carrying the answers
may reach any worker. One that does not hold the call sends the whole request here to the
one that does (``rr``), which serves it through its own kernel as if it had come over HTTP,
and sends back what the request says on its way (progress, log messages: ``ra`` with
``note``) and then its answer (``ra`` with ``result`` or ``error``). The receiving worker
answers the client with them, so the client sees one request, as on a single worker.

Bounded: the routing worker checks that the holder is alive every heartbeat while it waits;
one that stopped ends the request with an error saying the call may or may not have taken
effect (never run again elsewhere: its side effects may have happened). A holder that is
gone before the request could be sent (no one listens on its channel) is reported as such,
and the request's own worker runs the function again from the top (logged there).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from .._auth._principal import Principal
from .._exceptions import INTERNAL_ERROR, ProtocolError
from .._incoming import IncomingRequest
from .._session._base import RequestContext
from .._transports._base import TransportInfo

if TYPE_CHECKING:
    from .._app._registry import Hosting
    from ._bus import Bus, BusMessage

logger = logging.getLogger("mcpkit.redis")

#: Bus message kinds: a round to serve here (``rr``), news of a round routed from here (``ra``).
ROUND = "rr"
ROUND_NEWS = "ra"
#: How many notifications of one routed round may wait to be sent over the bus at once.
_NOTES = 256


def _principal_fields(principal: Principal | None) -> dict[str, Any] | None:
    if principal is None:
        return None
    return {
        "subject": principal.subject,
        "client_id": principal.client_id,
        "scopes": sorted(principal.scopes),
        "issuer": principal.issuer,
        "audience": list(principal.audience),
        "expires_at": principal.expires_at,
        "claims": dict(principal.claims),
    }


def _principal(fields: Any) -> Principal | None:
    if not isinstance(fields, dict):
        return None
    return Principal(
        subject=fields.get("subject"),
        client_id=fields.get("client_id"),
        scopes=frozenset(fields.get("scopes") or ()),
        issuer=fields.get("issuer"),
        audience=tuple(fields.get("audience") or ()),
        expires_at=fields.get("expires_at"),
        claims=dict(fields.get("claims") or {}),
    )


class _Routed:
    """A request of ours being served by another worker: its news, then its answer."""

    def __init__(self, rc: RequestContext) -> None:
        self.rc = rc
        self.answer: BusMessage | None = None
        self.done = anyio.Event()


class RoundRouter:
    """Routes retries to the worker holding their call, and serves those routed here."""

    def __init__(
        self,
        backend: Bus,
        hosting: Hosting,
        host: Callable[[], Awaitable[TaskGroup]],
    ) -> None:
        self.backend = backend
        self.hosting = hosting
        self._host = host
        self._routed: dict[str, _Routed] = {}
        backend.on(ROUND, self._on_round)
        backend.on(ROUND_NEWS, self._on_news)

    @property
    def worker_id(self) -> str:
        """This worker's id, as the states of the calls it holds name it."""
        return self.backend.worker_id

    async def forward(self, worker: str, rc: RequestContext) -> tuple[bool, Any]:
        """Serve request ``rc`` on ``worker``: ``(True, result)``, or ``(False, None)``
        when no such worker listens any more. Raises the request's error."""
        cid = secrets.token_hex(8)
        routed = self._routed[cid] = _Routed(rc)
        req = rc.request
        message = {
            "t": ROUND,
            "cid": cid,
            "from": self.backend.worker_id,
            "id": req.id,
            "method": req.method,
            "params": req.params,
            "principal": _principal_fields(rc.transport.principal),
        }
        try:
            if not await self.backend.send_to(worker, message):
                return False, None
            await self._wait(worker, routed)
        finally:
            del self._routed[cid]
        answer = routed.answer or {}
        error = answer.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            raise ProtocolError(
                code if isinstance(code, int) else INTERNAL_ERROR,
                str(error.get("message") or "the worker holding the call failed"),
                error.get("data"),
            )
        return True, answer.get("result")

    async def _wait(self, worker: str, routed: _Routed) -> None:
        """Until the answer comes, checking every heartbeat that ``worker`` still lives."""
        every = max(self.backend.heartbeat, 0.05)
        while True:
            with anyio.move_on_after(every):
                await routed.done.wait()
                return
            if not await self.backend.alive(worker):
                raise ProtocolError(
                    INTERNAL_ERROR,
                    f"the worker holding this call ({worker}) stopped while serving it: "
                    "it may or may not have taken effect (retry it if it is safe to)",
                )

    async def _on_news(self, message: BusMessage) -> None:
        routed = self._routed.get(str(message.get("cid")))
        if routed is None:
            return  # a request that ended meanwhile (its client went away)
        note = message.get("note")
        if isinstance(note, dict):
            method = note.get("method")
            params = note.get("params")
            if isinstance(method, str):
                await routed.rc.notify(method, params if isinstance(params, dict) else None)
            return
        routed.answer = message
        routed.done.set()

    async def _on_round(self, message: BusMessage) -> None:
        # The bus's listener must not wait for the tool: the round is served in a task.
        tg = await self._host()
        tg.start_soon(self._serve, message)

    async def _serve(self, message: BusMessage) -> None:
        origin, cid, method = message.get("from"), message.get("cid"), message.get("method")
        params = message.get("params")
        if not isinstance(origin, str) or not isinstance(cid, str) or not isinstance(method, str):
            return
        rid = message.get("id")
        req = IncomingRequest(
            None,
            rid if isinstance(rid, (str, int)) else cid,
            method,
            params if isinstance(params, dict) else None,
        )
        info = TransportInfo(
            kind="http", network="tcp", principal=_principal(message.get("principal"))
        )
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](_NOTES)

        def sink(note_method: str, note_params: dict[str, Any] | None) -> None:
            try:
                send.send_nowait({"method": note_method, "params": note_params})
            except anyio.WouldBlock:  # the bus is slower than the tool: progress is dropped
                logger.debug("a notification of a routed round was dropped")

        async def relay() -> None:
            async with receive:
                async for note in receive:
                    await self._tell(origin, {"t": ROUND_NEWS, "cid": cid, "note": note})

        answer: dict[str, Any] = {"t": ROUND_NEWS, "cid": cid}
        async with anyio.create_task_group() as tg:
            tg.start_soon(relay)
            try:
                kernel = self.hosting.kernel
                rc = RequestContext(
                    None, req, kernel.negotiate(req.meta), transport=info, sink=sink
                )
                answer["result"] = await kernel.serve(rc)
            except ProtocolError as e:
                answer["error"] = e.to_error()
            except Exception as e:
                logger.exception("a routed %s failed", method)
                answer["error"] = {"code": INTERNAL_ERROR, "message": f"Internal error: {e}"}
            finally:
                send.close()
        await self._tell(origin, answer)

    async def _tell(self, worker: str, message: BusMessage) -> None:
        try:
            await self.backend.send_to(worker, message)
        except Exception as e:  # Redis down: the routing worker sees us alive, and waits
            logger.warning("could not send a routed round's %s back: %s", message.get("t"), e)
