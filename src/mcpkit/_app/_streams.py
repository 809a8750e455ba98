"""The Streamable HTTP app's streams: the standalone GET stream, resumption with
``Last-Event-ID``, and the pump that copies a stream's events to its HTTP response."""

from __future__ import annotations

import math
import re
from functools import partial
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from .._exceptions import INVALID_REQUEST
from .._http._asgi import (
    SSE_HEADERS,
    Answer,
    Receive,
    Send,
    accepts,
    cancel_on_disconnect,
    respond_error,
)
from .._http._sse import encode_event
from .._http._transport import Chunk, Stream, parse_event_id
from ._common import (
    DEFAULT_HEADER_VERSION,
    PRIMING_SINCE,
    SESSION_HEADER,
    allow_header,
    named_session,
)
from ._options import HTTPAppOptions
from ._registry import SessionEntry, SessionRegistry

#: What follows ``<session key>.`` in the ids of a session's streams: a number, or a
#: worker's id, ``x`` and a number (streams of a shared session). Nothing else is looked up.
_STREAM_TAIL = re.compile(r"[0-9A-Za-z]{1,64}")


def _is_answer(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message


class StreamHandler:
    """Serves GET (a new standalone stream, or a resumed one) and pumps SSE responses."""

    def __init__(self, options: HTTPAppOptions, registry: SessionRegistry) -> None:
        self.options = options
        self.registry = registry

    async def get(self, headers: dict[str, str], receive: Receive) -> Answer:
        """The answer to a GET of the handshake era: its refusal, or its stream (a new
        standalone stream, or one resumed with ``Last-Event-ID``)."""
        if not self.options.get_stream or self.options.sessionless:
            return Answer.error(
                405,
                INVALID_REQUEST,
                "Method Not Allowed: this server offers no GET stream",
                headers=[(b"allow", allow_header(self.options))],
            )
        if not accepts(headers.get("accept"), "text/event-stream"):
            return Answer.error(
                406,
                INVALID_REQUEST,
                "Not Acceptable: the Accept header must list text/event-stream",
            )
        entry = await named_session(self.registry, headers)
        if isinstance(entry, Answer):
            return entry
        return Answer(0, stream=partial(self._stream, entry, headers, receive))

    async def _stream(
        self, entry: SessionEntry, headers: dict[str, str], receive: Receive, send: Send
    ) -> None:
        transport = entry.transport
        extra = [(SESSION_HEADER, entry.id.encode())]
        last = headers.get("last-event-id")
        entry.busy += 1
        try:
            if last is None:
                if transport.standalone.conn is not None:
                    await respond_error(
                        send,
                        409,
                        INVALID_REQUEST,
                        "Conflict: a GET stream is already open for this session",
                    )
                    return
                conn, backlog = transport.attach_standalone()
                backlog += await transport.standalone_attached()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [*SSE_HEADERS, *extra],
                    }
                )
                version = headers.get("mcp-protocol-version") or (
                    entry.session.negotiated.protocol_version if entry.session.negotiated else None
                )
                if (
                    transport.event_store is not None
                    and (version or DEFAULT_HEADER_VERSION) >= PRIMING_SINCE
                ):
                    # Like a POST stream: an id to resume from and the reconnection delay.
                    sa = transport.standalone
                    await send(
                        {
                            "type": "http.response.body",
                            "body": encode_event(
                                b"", event=None, id=f"{sa.id}_{sa.seq}", retry=self.options.retry_ms
                            ),
                            "more_body": True,
                        }
                    )
                if backlog:
                    # Sent before anything newer, in order, on this (the right) stream.
                    for m in backlog:
                        await transport._deliver_standalone(m)
                await self.pump(
                    transport.standalone, conn, receive, send, replayed=0, keepalive=True
                )
                return
            await self._resume(entry, last, receive, send, extra)
        finally:
            entry.busy -= 1
            entry.touch()

    async def _resume(
        self,
        entry: SessionEntry,
        last: str,
        receive: Receive,
        send: Send,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        transport = entry.transport
        parsed = parse_event_id(last.strip())
        store = transport.event_store
        head = transport.key + "."
        if (
            parsed is None
            or store is None
            or not parsed[0].startswith(head)
            or _STREAM_TAIL.fullmatch(parsed[0][len(head) :]) is None
        ):
            # Not an id of this session's streams: replaying it could leak another's events
            # (and a shared store builds its keys from it).
            await respond_error(send, 400, INVALID_REQUEST, "Bad Request: unknown Last-Event-ID")
            return
        stream_id, seq = parsed
        live = transport.stream_for_id(stream_id)
        backlog: list[Any] = []
        conn: MemoryObjectReceiveStream[Chunk] | None
        if live is transport.standalone:
            conn, backlog = transport.attach_standalone()
            backlog += await transport.standalone_attached()
        else:
            conn = live.attach() if live is not None and not live.done else None
        events = await store.events_after(transport.key, stream_id, seq)
        lost = None
        if live is None and not any(_is_answer(m) for _, m in events or ()):
            # Its worker died before answering (a shared session): answered from here.
            lost = await transport.lost_answer(stream_id)
        if events is None and live is None and lost is None:
            await respond_error(send, 400, INVALID_REQUEST, "Bad Request: unknown Last-Event-ID")
            return
        await send(
            {"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *extra]}
        )
        replayed = seq
        final = False
        fake = live or Stream(stream_id, None, False)
        for s, m in events or ():
            is_final = isinstance(m, dict) and "method" not in m
            await send(
                {
                    "type": "http.response.body",
                    "body": transport.event_bytes(fake, s, m),
                    "more_body": True,
                }
            )
            replayed = s
            if is_final:
                final = True
        if lost is not None and not final:
            replayed += 1
            await store.store_event(transport.key, stream_id, replayed, lost)
            body = transport.event_bytes(fake, replayed, lost)
            await send({"type": "http.response.body", "body": body, "more_body": True})
            final = True
        if conn is None and not final and live is None:
            # Served by another worker of a shared session: followed from here.
            tail = await transport.remote_stream(stream_id, replayed)
            if tail is not None:
                live, conn = tail
        if conn is None or final:
            if conn is not None and live is not None:
                live.detach()
                conn.close()
            await send({"type": "http.response.body", "body": b""})
            return
        assert live is not None
        for m in backlog:  # what came while no GET stream was connected
            await transport._deliver_standalone(m)
        if live.id != stream_id:
            replayed = 0  # another worker's standalone stream, taken over: new numbering
        await self.pump(
            live, conn, receive, send, replayed=replayed, keepalive=live.request_id is None
        )

    async def pump(
        self,
        stream: Stream,
        conn: Any,
        receive: Receive,
        send: Send,
        *,
        replayed: int,
        keepalive: bool,
    ) -> None:
        """Copy a stream's live events to this response until it ends or the client leaves.

        The client leaving does not cancel anything: the request goes on and its events
        are kept for resumption.
        """
        ping = (
            self.options.sse_ping_interval
            if keepalive and self.options.sse_ping_interval
            else math.inf
        )
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_on_disconnect, receive, tg.cancel_scope)
            try:
                while True:
                    item: Chunk | None = None
                    with anyio.move_on_after(ping):
                        try:
                            item = await conn.receive()
                        except (anyio.EndOfStream, anyio.ClosedResourceError):
                            break
                    if item is None:
                        await send(
                            {"type": "http.response.body", "body": b": ping\n\n", "more_body": True}
                        )
                        continue
                    seq, chunk, final = item
                    if 0 < seq <= replayed:
                        continue
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    if final:
                        break
                await send({"type": "http.response.body", "body": b""})
            finally:
                if stream.conn_recv is conn:  # no newer connection took over
                    stream.detach()
                conn.close()
                tg.cancel_scope.cancel()
