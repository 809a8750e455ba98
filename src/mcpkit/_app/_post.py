"""The Streamable HTTP app's POST handling: one message (or a 2025-03-26 batch) in, its
answer out as one JSON body or an SSE stream; sessions started by ``initialize``."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import anyio
from anyio.abc import TaskGroup

from .._exceptions import INTERNAL_ERROR, INVALID_REQUEST, ConnectionClosed
from .._http._asgi import (
    JSON,
    NO_ANSWER,
    SSE_HEADERS,
    Answer,
    Receive,
    Send,
    respond,
    respond_error,
)
from .._http._security import SessionOwnership
from .._http._sse import encode_event
from .._http._transport import HTTPServerTransport
from .._jsonrpc import JSONRPCEngine
from .._session._base import Negotiated
from .._transports._base import RequestId, TransportInfo
from ..types._revisions import SUPPORTED_PROTOCOL_VERSIONS
from ._auth import AuthGate
from ._common import (
    BATCH_REVISION,
    DEFAULT_HEADER_VERSION,
    PRIMING_SINCE,
    SESSION_HEADER,
    check_message,
    lookup_session,
    session_for,
    settled,
    wait_or_disconnect,
)
from ._options import HTTPAppOptions
from ._registry import SessionEntry, SessionFactory, SessionRegistry
from ._stateless import StatelessEraHandler, version_refusal
from ._streams import StreamHandler


class PostHandler:
    """Serves POST: validates the request, routes it to its session (or a fresh one in
    sessionless mode) and sends the answer back on the response.

    ``host()`` returns the app's task group, where new sessions run.
    """

    def __init__(
        self,
        server: SessionFactory,
        options: HTTPAppOptions,
        registry: SessionRegistry,
        ownership: SessionOwnership,
        streams: StreamHandler,
        host: Callable[[], Awaitable[TaskGroup]],
        stateless_era: StatelessEraHandler,
        *,
        gate: AuthGate | None = None,
    ) -> None:
        self.server = server
        #: The authorization gate: each request's own scopes are checked before it is served.
        self.gate = gate
        self.options = options
        self.registry = registry
        self.ownership = ownership
        self.streams = streams
        self.host = host
        #: The stateless era's handler (for the revisions this server serves).
        self.stateless_era = stateless_era

    def _supported(self) -> tuple[str, ...]:
        """The revisions this server serves, newest first (what ``server/discover`` lists)."""
        return self.stateless_era.kernel.spec.supported_versions

    async def post(
        self,
        msg: dict[str, Any],
        headers: dict[str, str],
        receive: Receive,
        info: TransportInfo,
    ) -> Answer:
        """The answer to one POSTed message of the handshake era (read, checked and found
        so by ``serve_exchange``); ``info`` is what the app knows of it (HTTP request,
        principal), handed to whatever serves the MCP request it carries."""
        is_request = "method" in msg and "id" in msg
        is_init = is_request and msg["method"] == "initialize"
        version = headers.get("mcp-protocol-version")
        if not is_init and version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
            # Named only in the header: the same answer as for one named in _meta.
            rid = msg.get("id") if is_request else None
            return version_refusal(rid, version, self._supported())
        gate = self.gate
        if self.options.sessionless:
            # A fresh session per request: only the server's visibility rules apply.
            refused = gate.scope_refusal((msg,), info.principal) if gate is not None else None
            if refused is not None:
                return refused
            return await self._post_sessionless(msg, is_request, is_init, version, receive, info)
        sid = headers.get("mcp-session-id")
        if sid is None:
            if not is_init:
                return Answer.error(
                    400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header"
                )
            entry = self.registry.create(await self.host(), self.ownership.owner(headers))
            if entry is None:
                return Answer.error(503, INTERNAL_ERROR, "Service Unavailable: too many sessions")
            return await self._serve_initialize(entry, msg, receive, info)
        entry = await lookup_session(self.registry, sid, headers)
        if entry is None:
            return Answer.error(404, INVALID_REQUEST, "Not Found: unknown or terminated session")
        if gate is not None:
            # Checked with the session's own visibility rules: a target hidden from it is
            # answered as an unknown one (by the server), not with a 403 naming its scopes.
            refused = gate.scope_refusal((msg,), info.principal, entry.session)
            if refused is not None:
                return refused
        extra = [(SESSION_HEADER, sid.encode())]
        entry.busy += 1
        streamed = False  # then the stream holds the session busy until it ends
        try:
            if not is_request:
                await entry.transport.feed(msg)
                return Answer(202, headers=extra)
            if version is None and entry.session.negotiated is not None:
                version = entry.session.negotiated.protocol_version
            answer = await self._serve_request(
                entry.transport, msg, version, receive, extra, info, engine=entry.session.engine
            )
            if answer.stream is None:
                return answer
            streamed = True
            return Answer(0, stream=partial(_busy_until_written, entry, answer.stream))
        finally:
            if not streamed:
                entry.busy -= 1
                entry.touch()

    async def post_batch(
        self,
        items: list[Any],
        headers: dict[str, str],
        receive: Receive,
        info: TransportInfo,
        send: Send,
    ) -> None:
        """Serve a POSTed JSON-RPC batch: revision 2025-03-26 let a POST carry one; later
        revisions removed batches."""
        for i, item in enumerate(items):
            problem = check_message(item)
            if problem is None and item.get("method") == "initialize":
                problem = "Invalid Request: initialize must not be part of a batch"
            if problem is not None:
                await respond_error(send, 400, INVALID_REQUEST, f"batch item {i}: {problem}")
                return
        gate = self.gate
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
            await version_refusal(None, version, self._supported()).write(send)
            return
        no_batches = (
            "Invalid Request: JSON-RPC batches are only allowed in protocol revision 2025-03-26"
        )
        if self.options.sessionless:
            if gate is not None and not await gate.allows(items, send, info.principal):
                return
            if (version or DEFAULT_HEADER_VERSION) != BATCH_REVISION:
                await respond_error(send, 400, INVALID_REQUEST, no_batches)
                return
            await self.host()
            transport = HTTPServerTransport(
                secrets.token_hex(8), sessionless=True, retry_ms=self.options.retry_ms
            )
            session = self.server.create_session(transport)
            session.negotiated = Negotiated(BATCH_REVISION, {}, {})
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.run)
                try:
                    await self._serve_batch(transport, items, receive, send, [], info)
                finally:
                    transport.close()
                    tg.cancel_scope.cancel()
            return
        entry = await session_for(self.registry, headers, send)
        if entry is None:
            return
        if gate is not None and not await gate.allows(items, send, info.principal, entry.session):
            return
        negotiated = entry.session.negotiated
        if negotiated is None or negotiated.protocol_version != BATCH_REVISION:
            await respond_error(send, 400, INVALID_REQUEST, no_batches)
            return
        entry.busy += 1
        try:
            await self._serve_batch(
                entry.transport,
                items,
                receive,
                send,
                [(SESSION_HEADER, entry.id.encode())],
                info,
            )
        finally:
            entry.busy -= 1
            entry.touch()

    async def _serve_batch(
        self,
        transport: HTTPServerTransport,
        items: list[dict[str, Any]],
        receive: Receive,
        send: Send,
        extra: list[tuple[bytes, bytes]],
        info: TransportInfo,
    ) -> None:
        ids: list[RequestId] = [m["id"] for m in items if "method" in m and "id" in m]
        if not ids:
            await transport.feed(items)
            await respond(send, 202, headers=extra)
            return
        if len(set(ids)) != len(ids) or any(i in transport.requests for i in ids):
            await respond_error(
                send,
                409,
                INVALID_REQUEST,
                "Conflict: a request id of the batch is already in flight",
            )
            return
        stream = transport.new_batch_stream(ids, info)
        await transport.feed(items)
        if (
            not stream.settled
            and not await settled(stream.done_event)
            and not await wait_or_disconnect(stream.done_event, receive)
        ):
            return
        if stream.result is None:
            await respond(send, 202, headers=extra)
            return
        await self._one(stream.result, extra).write(send)

    async def _serve_request(
        self,
        transport: HTTPServerTransport,
        msg: dict[str, Any],
        version: str | None,
        receive: Receive,
        extra: list[tuple[bytes, bytes]],
        info: TransportInfo,
        *,
        engine: JSONRPCEngine | None = None,
    ) -> Answer:
        """The answer to a request of a session (or of a fresh sessionless one): one JSON
        body, one SSE body when it is answered within a few loop turns, else a stream."""
        rid: RequestId = msg["id"]
        if rid in transport.requests:
            # Never cross-wire two in-flight requests that share an id.
            return Answer.error(
                409,
                INVALID_REQUEST,
                f"Conflict: request id {rid!r} is already in flight in this session",
                id=rid,
            )
        if self.options.json_response:
            return await self._serve_json(transport, msg, receive, extra, info, engine)
        stream = transport.new_request_stream(rid, json=False, info=info)
        conn = stream.attach()
        at_once = engine.serves_at_once if engine is not None and engine.running else None
        if at_once is not None and at_once(msg["method"], msg.get("params")):
            # Known to end without waiting (one answer, nothing before it): served in this
            # task, as a JSON answer is, not handed to the session's reader and back.
            assert engine is not None
            try:
                await engine.serve_inline(msg)
            except ConnectionClosed:
                pass  # the session ended meanwhile: its stream is closed
        else:
            await transport.feed(msg)
        prime = (
            transport.event_store is not None
            and (version or DEFAULT_HEADER_VERSION) >= PRIMING_SINCE
        )
        head = (
            encode_event(b"", event=None, id=f"{stream.id}_0", retry=self.options.retry_ms)
            if prime
            else b""
        )
        # Most requests are answered within a few loop turns: then the whole stream goes
        # out as one body with a Content-Length (one write, no chunked framing).
        ready: list[bytes] = []
        final = False

        def drain() -> bool:
            nonlocal final
            while not final:
                try:
                    _, chunk, final = conn.receive_nowait()
                except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                    break
                ready.append(chunk)
            return final

        if (stream.settled or await settled(stream.done_event)) and drain():
            conn.close()
            return Answer(200, head + b"".join(ready), headers=[*SSE_HEADERS, *extra])
        return Answer(
            0, stream=partial(self._stream, stream, conn, head + b"".join(ready), extra, receive)
        )

    async def _stream(
        self,
        stream: Any,
        conn: Any,
        first: bytes,
        extra: list[tuple[bytes, bytes]],
        receive: Receive,
        send: Send,
    ) -> None:
        """Write a request's SSE answer as it comes: ``first`` (what came before), then
        its stream's events until it ends or the client leaves."""
        try:
            await send(
                {"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *extra]}
            )
            if first:
                await send({"type": "http.response.body", "body": first, "more_body": True})
        except BaseException:
            # The client is gone before the stream started: let go of the connection (the
            # request goes on; its events are kept for resumption), as _pump does at its end.
            if stream.conn_recv is conn:
                stream.detach()
            conn.close()
            raise
        await self.streams.pump(stream, conn, receive, send, replayed=0, keepalive=False)

    async def _serve_json(
        self,
        transport: HTTPServerTransport,
        msg: dict[str, Any],
        receive: Receive,
        extra: list[tuple[bytes, bytes]],
        info: TransportInfo,
        engine: JSONRPCEngine | None,
    ) -> Answer:
        stream = transport.new_request_stream(msg["id"], json=True, info=info)
        if engine is not None and engine.running:
            # The answer is one body sent when it is ready: serve it in this task.
            try:
                await engine.serve_inline(msg)
            except ConnectionClosed:
                pass  # the session ended meanwhile: its stream is closed, see below
        else:
            await transport.feed(msg)
        if not stream.settled and not await settled(stream.done_event):
            got = await wait_or_disconnect(stream.done_event, receive)
            if not got:
                return NO_ANSWER
        if stream.result is None:
            # Cancelled by the client: no response is owed (nor sent).
            return Answer(202, headers=extra)
        return Answer(200, stream.result, content_type=JSON, headers=extra)

    async def _serve_initialize(
        self,
        entry: SessionEntry,
        msg: dict[str, Any],
        receive: Receive,
        info: TransportInfo,
    ) -> Answer:
        # The session id header goes out only if initialize succeeds, so the answer is
        # awaited before anything is sent (a failed initialize leaves no session behind).
        entry.busy += 1
        try:
            stream = entry.transport.new_request_stream(msg["id"], json=True, info=info)
            stream.uncancellable = True
            await entry.transport.feed(msg)
            got = await wait_or_disconnect(stream.done_event, receive)
            result = stream.result
            if (
                not got
                or result is None
                or not isinstance(stream.message, dict)
                or "result" not in stream.message
            ):
                self.registry.drop(entry)
                if not got:
                    return NO_ANSWER
                if result is not None:
                    return self._one(result, [])
                # The session ended before answering (its server failed to start, or it was
                # ended meanwhile): the client, still there, is owed an answer; returning
                # without one makes the ASGI server send a bare 500.
                return Answer.error(
                    503,
                    INTERNAL_ERROR,
                    "Service Unavailable: the session ended before answering initialize "
                    "(the server's log says why); retry later",
                    id=msg["id"],
                    headers=[(b"retry-after", b"1")],
                )
            await self.registry.publish(entry)
            return self._one(result, [(SESSION_HEADER, entry.id.encode())])
        finally:
            entry.busy -= 1
            entry.touch()

    def _one(self, payload: bytes, extra: list[tuple[bytes, bytes]]) -> Answer:
        """One message as the whole answer: a JSON body, or one SSE event."""
        if self.options.json_response:
            return Answer(200, payload, content_type=JSON, headers=extra)
        return Answer(200, encode_event(payload), headers=[*SSE_HEADERS, *extra])

    async def _post_sessionless(
        self,
        msg: dict[str, Any],
        is_request: bool,
        is_init: bool,
        version: str | None,
        receive: Receive,
        info: TransportInfo,
    ) -> Answer:
        if not is_request:
            # Nothing to route a notification or response to without a session.
            return Answer(202)
        await self.host()  # the server's lifespan runs before any request is served
        if self.options.json_response:
            return await self._in_fresh_session(msg, is_init, version, receive, info, None)
        # An SSE answer may stream: the fresh session lives until it is written.
        return Answer(
            0, stream=partial(self._in_fresh_session, msg, is_init, version, receive, info)
        )

    async def _in_fresh_session(
        self,
        msg: dict[str, Any],
        is_init: bool,
        version: str | None,
        receive: Receive,
        info: TransportInfo,
        send: Send | None,
    ) -> Answer:
        """Serve ``msg`` by a session of its own (sessionless HTTP), ended once its answer
        is ready (``send`` None: returned) or written (through ``send``)."""
        transport = HTTPServerTransport(
            secrets.token_hex(8),
            json_response=self.options.json_response,
            sessionless=True,
            retry_ms=self.options.retry_ms,
        )
        session = self.server.create_session(transport)
        if not is_init:
            session.negotiated = Negotiated(version or DEFAULT_HEADER_VERSION, {}, {})
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            try:
                answer = await self._serve_request(transport, msg, version, receive, [], info)
                if send is not None:
                    await answer.write(send)
            finally:
                transport.close()
                tg.cancel_scope.cancel()
        return answer


async def _busy_until_written(entry: SessionEntry, stream: Any, send: Send) -> None:
    """Write a session's streamed answer, the session counted busy until it is written."""
    try:
        await stream(send)
    finally:
        entry.busy -= 1
        entry.touch()
