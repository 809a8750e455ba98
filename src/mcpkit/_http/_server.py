"""The Streamable HTTP server: a bare ASGI application (no framework on the hot path).

One endpoint answers POST (client messages), GET (the standalone stream, or resumption
with ``Last-Event-ID``) and DELETE (end of session). Sessions are created by ``initialize``,
identified by a CSPRNG id, ended by DELETE, by an idle timeout or by the session cap, and
run their :class:`~mcpkit._session.ServerSession` in a task group owned by the app (opened
by the ASGI lifespan, by ``async with app``, or lazily on asyncio when neither happened,
e.g. when mounted in a framework that does not forward lifespan events).
"""

from __future__ import annotations

import logging
import math
import secrets
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextlib import AsyncExitStack
from typing import Any, Protocol

import anyio
import anyio.lowlevel
import orjson
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream

from .._exceptions import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, ConnectionClosed
from .._jsonrpc import JSONRPCEngine
from .._session._base import Negotiated
from .._session._server import ServerSession
from .._transports._base import RequestId, Transport
from ..types._revisions import SUPPORTED_PROTOCOL_VERSIONS
from ._asgi import (
    BODY_TIMEOUT,
    JSON,
    SSE_HEADERS,
    BodyTimeout,
    BodyTooLarge,
    ClientGone,
    Receive,
    Scope,
    Send,
    accepts,
    header_map,
    read_body,
    respond,
    respond_error,
    route_path,
    same_path,
)
from ._events import EventStore, InMemoryEventStore
from ._security import HostOriginPolicy, SessionOwnership
from ._sse import encode_event
from ._transport import Chunk, HTTPServerTransport, SessionGone, Stream, parse_event_id

logger = logging.getLogger("mcpkit.http")

#: Revision assumed when a request carries no MCP-Protocol-Version header (spec).
DEFAULT_HEADER_VERSION = "2025-03-26"
#: First revision whose clients understand the empty priming event.
PRIMING_SINCE = "2025-11-25"
#: The only revision whose Streamable HTTP allowed JSON-RPC batches in a POST.
BATCH_REVISION = "2025-03-26"
SESSION_HEADER = b"mcp-session-id"


class SessionFactory(Protocol):
    """What the app serves: anything that makes a :class:`ServerSession` for a transport."""

    def create_session(self, transport: Transport) -> ServerSession: ...


class _Entry:
    __slots__ = ("busy", "id", "last_active", "owner", "scope", "session", "transport")

    def __init__(self, id: str, transport: HTTPServerTransport, session: ServerSession) -> None:
        self.id = id
        self.transport = transport
        self.session = session
        self.owner: str | None = None
        self.busy = 0
        self.last_active = anyio.current_time()
        self.scope = anyio.CancelScope()


class StreamableHTTPApp:
    """The ASGI application serving an MCP server over Streamable HTTP.

    Create it with :func:`create_http_app`. Mount it in Starlette/FastAPI like any ASGI app;
    when the framework does not forward lifespan events to mounted apps, either enter the
    app in your lifespan (``async with mcp_app:``) or rely on the lazy start (asyncio only).
    """

    #: Seconds a POST body may take to arrive in full; slower is answered 408 (slowloris).
    body_timeout: float = BODY_TIMEOUT

    def __init__(
        self,
        server: SessionFactory,
        *,
        path: str | None = "/mcp",
        json_response: bool = False,
        stateless: bool = False,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        event_store: EventStore | None = None,
        resumable: bool = True,
        get_stream: bool = True,
        session_idle_timeout: float | None = 1800.0,
        max_sessions: int = 10_000,
        max_body_size: int = 4 * 1024 * 1024,
        retry_ms: int = 1000,
        sse_ping_interval: float | None = 15.0,
        session_owner: Callable[[dict[str, str]], str | None] | None = None,
        legacy_sse: bool = False,
    ) -> None:
        self.server = server
        self.path = path
        self.json_response = json_response
        self.stateless = stateless
        self.policy = HostOriginPolicy(allowed_hosts, allowed_origins)
        self.event_store: EventStore | None = None
        if resumable and not stateless:
            self.event_store = event_store if event_store is not None else InMemoryEventStore()
        self.get_stream = get_stream and not stateless
        self.session_idle_timeout = session_idle_timeout
        self.max_sessions = max_sessions
        self.max_body_size = max_body_size
        self.retry_ms = retry_ms
        self.sse_ping_interval = sse_ping_interval
        self.session_owner = session_owner
        self.ownership = SessionOwnership(session_owner)
        self.legacy: Any = None
        if legacy_sse:
            from ._legacy import SSEApp

            self.legacy = SSEApp(
                server,
                allowed_hosts=allowed_hosts,
                allowed_origins=allowed_origins,
                max_body_size=max_body_size,
                max_sessions=max_sessions,
                session_owner=session_owner,
            )
        self.sessions: OrderedDict[str, _Entry] = OrderedDict()
        self._tg: TaskGroup | None = None
        self._host_started: anyio.Event | None = None
        self._stop: anyio.Event | None = None
        self._lazy_task: Any = None
        self._closing = False
        self._stack: AsyncExitStack[bool | None] | None = None

    # ------------------------------------------------------------------ running

    async def __aenter__(self) -> StreamableHTTPApp:
        self._closing = False
        self._stack = stack = AsyncExitStack()
        # The server's own lifespan (mcpkit.Server.running) spans the app's.
        running = getattr(self.server, "running", None)
        if running is not None:
            await stack.enter_async_context(running())
        self._tg = tg = anyio.create_task_group()
        await tg.__aenter__()
        tg.start_soon(self._reaper)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
        tg, self._tg = self._tg, None
        try:
            if tg is not None:
                tg.cancel_scope.cancel()
                await tg.__aexit__(None, None, None)
        finally:
            stack, self._stack = self._stack, None
            if stack is not None:
                await stack.aclose()

    async def aclose(self) -> None:
        """Graceful shutdown: end every session and every open stream."""
        self._closing = True
        for entry in list(self.sessions.values()):
            await self._terminate(entry)
        if self.legacy is not None:
            await self.legacy.aclose()
        if self._stop is not None:
            self._stop.set()  # a lazily started host exits too

    async def _ensure_host(self) -> TaskGroup:
        if self._tg is not None:
            return self._tg
        # No lifespan and no `async with`: host the sessions in a task of our own. Only
        # asyncio lets a request task start one that outlives it.
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError as e:  # trio
            raise RuntimeError(
                "the MCP app needs its lifespan on this event loop: enter it with `async with app:`"
            ) from e
        if self._host_started is None:
            self._host_started = anyio.Event()
            self._stop = anyio.Event()
            self._lazy_task = loop.create_task(self._lazy_host())
        await self._host_started.wait()
        assert self._tg is not None
        return self._tg

    async def _lazy_host(self) -> None:
        async with self:
            assert self._host_started is not None and self._stop is not None
            self._host_started.set()
            await self._stop.wait()

    async def _reaper(self) -> None:
        # The timeout is read on every round, so it can be changed while serving.
        while True:
            timeout = self.session_idle_timeout
            await anyio.sleep(1.0 if timeout is None else max(0.02, min(timeout / 4, 1.0)))
            if timeout is not None:
                self._reap(anyio.current_time() - timeout)

    def _reap(self, before: float) -> None:
        for entry in list(self.sessions.values()):
            # No request or stream of its client attached since ``before``: the session is
            # abandoned, even with calls still running (they are cancelled with it). A
            # client that is gone must not hold a session, and its slot, forever.
            if entry.busy == 0 and entry.last_active < before:
                logger.info("session %s… idle; ended", entry.id[:8])
                self._drop(entry)

    # ------------------------------------------------------------------ ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            return
        if self.path is not None and not same_path(route_path(scope), self.path):
            if self.legacy is not None and self.legacy.handles(scope):
                await self._ensure_host()  # the server's lifespan covers legacy clients too
                await self.legacy(scope, receive, send)
                return
            await respond(send, 404, b"Not Found", content_type=b"text/plain")
            return
        headers = header_map(scope)
        if not self.policy.host_ok(headers.get("host")):
            await respond_error(
                send, 421, INVALID_REQUEST, "Misdirected Request: Host header not allowed"
            )
            return
        if not self.policy.origin_ok(headers.get("origin")):
            await respond_error(send, 403, INVALID_REQUEST, "Forbidden: Origin not allowed")
            return
        if self._closing:
            await respond_error(send, 503, INTERNAL_ERROR, "Service Unavailable: shutting down")
            return
        method = scope["method"]
        try:
            if method == "POST":
                await self._post(headers, receive, send)
            elif method == "GET":
                await self._get(headers, receive, send)
            elif method == "DELETE":
                await self._delete(headers, send)
            else:
                await respond_error(
                    send,
                    405,
                    INVALID_REQUEST,
                    "Method Not Allowed",
                    headers=[(b"allow", self._allow())],
                )
        except ClientGone:
            pass
        except SessionGone:
            await respond_error(send, 404, INVALID_REQUEST, "Not Found: the session ended")

    def _allow(self) -> bytes:
        if self.stateless:
            return b"POST"
        return b"GET, POST, DELETE" if self.get_stream else b"POST, DELETE"

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        msg = await receive()
        if msg["type"] != "lifespan.startup":
            return
        started = False
        try:
            async with self:
                await send({"type": "lifespan.startup.complete"})
                started = True
                while True:
                    msg = await receive()
                    if msg["type"] == "lifespan.shutdown":
                        break
        except Exception as e:
            # The server's own lifespan failed: the ASGI server reports it and stops.
            logger.exception("the MCP app's lifespan failed")
            failed = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
            await send({"type": failed, "message": f"{type(e).__name__}: {e}"})
            return
        await send({"type": "lifespan.shutdown.complete"})

    # ------------------------------------------------------------------ POST

    async def _post(self, headers: dict[str, str], receive: Receive, send: Send) -> None:
        accept = headers.get("accept")
        if not (accepts(accept, "application/json") and accepts(accept, "text/event-stream")):
            await respond_error(
                send,
                406,
                INVALID_REQUEST,
                "Not Acceptable: the Accept header must list application/json and text/event-stream",
            )
            return
        ctype = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if ctype != "application/json":
            await respond_error(
                send, 415, INVALID_REQUEST, "Unsupported Media Type: send application/json"
            )
            return
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_size:
            await respond_error(
                send,
                413,
                INVALID_REQUEST,
                f"Payload Too Large: the limit is {self.max_body_size} bytes",
            )
            return
        try:
            body = await read_body(receive, self.max_body_size, self.body_timeout)
        except BodyTooLarge:
            await respond_error(
                send,
                413,
                INVALID_REQUEST,
                f"Payload Too Large: the limit is {self.max_body_size} bytes",
            )
            return
        except BodyTimeout:
            await respond_error(send, 408, INVALID_REQUEST, "Request Timeout: the body is too slow")
            return
        try:
            msg = orjson.loads(body)
        except orjson.JSONDecodeError as e:
            await respond_error(send, 400, PARSE_ERROR, f"Parse error: {e}")
            return
        if isinstance(msg, list) and msg:
            await self._post_batch(msg, headers, receive, send)
            return
        problem = _check_message(msg)
        if problem is not None:
            rid = msg.get("id") if isinstance(msg, dict) else None
            await respond_error(
                send, 400, INVALID_REQUEST, problem, id=rid if isinstance(rid, (str, int)) else None
            )
            return
        is_request = "method" in msg and "id" in msg
        is_init = is_request and msg["method"] == "initialize"
        version = headers.get("mcp-protocol-version")
        if not is_init and version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
            await respond_error(
                send,
                400,
                INVALID_REQUEST,
                f"Bad Request: unsupported MCP-Protocol-Version {version!r} "
                f"(supported: {', '.join(SUPPORTED_PROTOCOL_VERSIONS)})",
            )
            return
        if self.stateless:
            await self._post_stateless(msg, is_request, is_init, version, receive, send)
            return
        sid = headers.get("mcp-session-id")
        if sid is None:
            if not is_init:
                await respond_error(
                    send, 400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header"
                )
                return
            entry = await self._new_session()
            if entry is None:
                await respond_error(
                    send, 503, INTERNAL_ERROR, "Service Unavailable: too many sessions"
                )
                return
            entry.owner = self.ownership.owner(headers)
            await self._serve_initialize(entry, msg, receive, send)
            return
        entry = self._lookup(sid, headers)
        if entry is None:
            await respond_error(
                send, 404, INVALID_REQUEST, "Not Found: unknown or terminated session"
            )
            return
        entry.busy += 1
        try:
            if not is_request:
                await entry.transport.feed(msg)
                await respond(send, 202, headers=[(SESSION_HEADER, sid.encode())])
                return
            if version is None and entry.session.negotiated is not None:
                version = entry.session.negotiated.protocol_version
            await self._serve_request(
                entry.transport,
                msg,
                version,
                receive,
                send,
                [(SESSION_HEADER, sid.encode())],
                engine=entry.session.engine,
            )
        finally:
            entry.busy -= 1
            entry.last_active = anyio.current_time()

    async def _post_batch(
        self, items: list[Any], headers: dict[str, str], receive: Receive, send: Send
    ) -> None:
        # Revision 2025-03-26 let a POST carry a batch; later revisions removed batches.
        for i, item in enumerate(items):
            problem = _check_message(item)
            if problem is None and item.get("method") == "initialize":
                problem = "Invalid Request: initialize must not be part of a batch"
            if problem is not None:
                await respond_error(send, 400, INVALID_REQUEST, f"batch item {i}: {problem}")
                return
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
            await respond_error(
                send,
                400,
                INVALID_REQUEST,
                f"Bad Request: unsupported MCP-Protocol-Version {version!r}",
            )
            return
        no_batches = (
            "Invalid Request: JSON-RPC batches are only allowed in protocol revision 2025-03-26"
        )
        if self.stateless:
            if (version or DEFAULT_HEADER_VERSION) != BATCH_REVISION:
                await respond_error(send, 400, INVALID_REQUEST, no_batches)
                return
            await self._ensure_host()
            transport = HTTPServerTransport(
                secrets.token_hex(8), stateless=True, retry_ms=self.retry_ms
            )
            session = self.server.create_session(transport)
            session.negotiated = Negotiated(BATCH_REVISION, {}, {})
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.run)
                try:
                    await self._serve_batch(transport, items, receive, send, [])
                finally:
                    transport.close()
                    tg.cancel_scope.cancel()
            return
        entry = await self._session_for(headers, send)
        if entry is None:
            return
        negotiated = entry.session.negotiated
        if negotiated is None or negotiated.protocol_version != BATCH_REVISION:
            await respond_error(send, 400, INVALID_REQUEST, no_batches)
            return
        entry.busy += 1
        try:
            await self._serve_batch(
                entry.transport, items, receive, send, [(SESSION_HEADER, entry.id.encode())]
            )
        finally:
            entry.busy -= 1
            entry.last_active = anyio.current_time()

    async def _serve_batch(
        self,
        transport: HTTPServerTransport,
        items: list[dict[str, Any]],
        receive: Receive,
        send: Send,
        extra: list[tuple[bytes, bytes]],
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
        stream = transport.new_batch_stream(ids)
        await transport.feed(items)
        if not await _settled(stream.done_event) and not await _wait_or_disconnect(
            stream.done_event, receive
        ):
            return
        if stream.result is None:
            await respond(send, 202, headers=extra)
            return
        await self._send_one(send, stream.result, extra)

    async def _serve_request(
        self,
        transport: HTTPServerTransport,
        msg: dict[str, Any],
        version: str | None,
        receive: Receive,
        send: Send,
        extra: list[tuple[bytes, bytes]],
        *,
        engine: JSONRPCEngine | None = None,
    ) -> None:
        rid: RequestId = msg["id"]
        if rid in transport.requests:
            # Never cross-wire two in-flight requests that share an id.
            await respond_error(
                send,
                409,
                INVALID_REQUEST,
                f"Conflict: request id {rid!r} is already in flight in this session",
                id=rid,
            )
            return
        if self.json_response:
            stream = transport.new_request_stream(rid, json=True)
            if engine is not None and engine.running:
                # The answer is one body sent when it is ready: serve it in this task.
                try:
                    await engine.serve_inline(msg)
                except ConnectionClosed:
                    pass  # the session ended meanwhile: its stream is closed, see below
            else:
                await transport.feed(msg)
            if not await _settled(stream.done_event):
                got = await _wait_or_disconnect(stream.done_event, receive)
                if not got:
                    return
            if stream.result is None:
                # Cancelled by the client: no response is owed (nor sent).
                await respond(send, 202, headers=extra)
                return
            await respond(send, 200, stream.result, content_type=JSON, headers=extra)
            return
        stream = transport.new_request_stream(rid, json=False)
        conn = stream.attach()
        await transport.feed(msg)
        prime = (
            transport.event_store is not None
            and (version or DEFAULT_HEADER_VERSION) >= PRIMING_SINCE
        )
        head = (
            encode_event(b"", event=None, id=f"{stream.id}_0", retry=self.retry_ms)
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

        if await _settled(stream.done_event) and drain():
            conn.close()
            await respond(send, 200, head + b"".join(ready), headers=[*SSE_HEADERS, *extra])
            return
        try:
            await send(
                {"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *extra]}
            )
            if head or ready:
                await send(
                    {
                        "type": "http.response.body",
                        "body": head + b"".join(ready),
                        "more_body": True,
                    }
                )
        except BaseException:
            # The client is gone before the stream started: let go of the connection (the
            # request goes on; its events are kept for resumption), as _pump does at its end.
            if stream.conn_recv is conn:
                stream.detach()
            conn.close()
            raise
        await self._pump(stream, conn, receive, send, replayed=0, keepalive=False)

    async def _serve_initialize(
        self, entry: _Entry, msg: dict[str, Any], receive: Receive, send: Send
    ) -> None:
        # The session id header goes out only if initialize succeeds, so the answer is
        # awaited before anything is sent (a failed initialize leaves no session behind).
        entry.busy += 1
        try:
            stream = entry.transport.new_request_stream(msg["id"], json=True)
            stream.uncancellable = True
            await entry.transport.feed(msg)
            got = await _wait_or_disconnect(stream.done_event, receive)
            result = stream.result
            if (
                not got
                or result is None
                or not isinstance(stream.message, dict)
                or "result" not in stream.message
            ):
                self._drop(entry)
                if got and result is not None:
                    await self._send_one(send, result, [])
                return
            await self._send_one(send, result, [(SESSION_HEADER, entry.id.encode())])
        finally:
            entry.busy -= 1
            entry.last_active = anyio.current_time()

    async def _send_one(self, send: Send, payload: bytes, extra: list[tuple[bytes, bytes]]) -> None:
        if self.json_response:
            await respond(send, 200, payload, content_type=JSON, headers=extra)
        else:
            body = encode_event(payload)
            await respond(send, 200, body, headers=[*SSE_HEADERS, *extra])

    async def _post_stateless(
        self,
        msg: dict[str, Any],
        is_request: bool,
        is_init: bool,
        version: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        if not is_request:
            # Nothing to route a notification or response to without a session.
            await respond(send, 202)
            return
        await self._ensure_host()  # the server's lifespan runs before any request is served
        transport = HTTPServerTransport(
            secrets.token_hex(8),
            json_response=self.json_response,
            stateless=True,
            retry_ms=self.retry_ms,
        )
        session = self.server.create_session(transport)
        if not is_init:
            session.negotiated = Negotiated(version or DEFAULT_HEADER_VERSION, {}, {})
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            try:
                await self._serve_request(transport, msg, version, receive, send, [])
            finally:
                transport.close()
                tg.cancel_scope.cancel()

    # ------------------------------------------------------------------ GET

    async def _get(self, headers: dict[str, str], receive: Receive, send: Send) -> None:
        if not self.get_stream:
            await respond_error(
                send,
                405,
                INVALID_REQUEST,
                "Method Not Allowed: this server offers no GET stream",
                headers=[(b"allow", self._allow())],
            )
            return
        if not accepts(headers.get("accept"), "text/event-stream"):
            await respond_error(
                send,
                406,
                INVALID_REQUEST,
                "Not Acceptable: the Accept header must list text/event-stream",
            )
            return
        entry = await self._session_for(headers, send)
        if entry is None:
            return
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
                                b"", event=None, id=f"{sa.id}_{sa.seq}", retry=self.retry_ms
                            ),
                            "more_body": True,
                        }
                    )
                if backlog:
                    # Sent before anything newer, in order, on this (the right) stream.
                    for m in backlog:
                        await transport._deliver_standalone(m)
                await self._pump(
                    transport.standalone, conn, receive, send, replayed=0, keepalive=True
                )
                return
            await self._resume(entry, last, receive, send, extra)
        finally:
            entry.busy -= 1
            entry.last_active = anyio.current_time()

    async def _resume(
        self,
        entry: _Entry,
        last: str,
        receive: Receive,
        send: Send,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        transport = entry.transport
        parsed = parse_event_id(last.strip())
        store = transport.event_store
        if parsed is None or store is None or not parsed[0].startswith(transport.key + "."):
            # Not an id of this session's streams: replaying it could leak another's events.
            await respond_error(send, 400, INVALID_REQUEST, "Bad Request: unknown Last-Event-ID")
            return
        stream_id, seq = parsed
        live = transport.stream_for_id(stream_id)
        backlog: list[Any] = []
        conn: MemoryObjectReceiveStream[Chunk] | None
        if live is transport.standalone:
            conn, backlog = transport.attach_standalone()
        else:
            conn = live.attach() if live is not None and not live.done else None
        events = await store.events_after(transport.key, stream_id, seq)
        if events is None and live is None:
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
        if conn is None or final:
            if conn is not None and live is not None:
                live.detach()
                conn.close()
            await send({"type": "http.response.body", "body": b""})
            return
        assert live is not None
        for m in backlog:  # what came while no GET stream was connected
            await transport._deliver_standalone(m)
        await self._pump(
            live, conn, receive, send, replayed=replayed, keepalive=live.request_id is None
        )

    # ------------------------------------------------------------------ DELETE

    async def _delete(self, headers: dict[str, str], send: Send) -> None:
        if self.stateless:
            await respond_error(
                send, 405, INVALID_REQUEST, "Method Not Allowed: no sessions in stateless mode"
            )
            return
        entry = await self._session_for(headers, send)
        if entry is None:
            return
        await self._terminate(entry)
        await respond(send, 200)

    # ------------------------------------------------------------------ sessions

    async def _session_for(self, headers: dict[str, str], send: Send) -> _Entry | None:
        sid = headers.get("mcp-session-id")
        if sid is None:
            await respond_error(
                send, 400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header"
            )
            return None
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
            await respond_error(
                send,
                400,
                INVALID_REQUEST,
                f"Bad Request: unsupported MCP-Protocol-Version {version!r}",
            )
            return None
        entry = self._lookup(sid, headers)
        if entry is None:
            await respond_error(
                send, 404, INVALID_REQUEST, "Not Found: unknown or terminated session"
            )
        return entry

    def _lookup(self, sid: str, headers: dict[str, str]) -> _Entry | None:
        entry = self.sessions.get(sid)
        if entry is not None and not self.ownership.allows(entry.owner, headers):
            # Someone else's session: answered as unknown, so ids cannot be probed.
            return None
        if entry is not None:
            entry.last_active = anyio.current_time()
            self.sessions.move_to_end(sid)
        return entry

    async def _new_session(self) -> _Entry | None:
        tg = await self._ensure_host()
        if len(self.sessions) >= self.max_sessions:
            if self.session_idle_timeout is not None:
                self._reap(anyio.current_time() - self.session_idle_timeout)
            # Still full: the least recently active idle session makes room (its client
            # gets 404 and starts over, as the spec lets it); failing that, one whose client
            # left calls running with nothing attached (abandoned work is cancelled).
            for abandoned_too in (False, True):
                for entry in list(self.sessions.values()):
                    if len(self.sessions) < self.max_sessions:
                        break
                    if entry.busy == 0 and (abandoned_too or not entry.transport.requests):
                        self._drop(entry)
            if len(self.sessions) >= self.max_sessions:
                return None
        sid = secrets.token_urlsafe(24)  # 192 bits; URL-safe base64 is visible ASCII
        transport = HTTPServerTransport(
            secrets.token_hex(6),
            json_response=self.json_response,
            event_store=self.event_store,
            retry_ms=self.retry_ms,
        )
        session = self.server.create_session(transport)
        entry = _Entry(sid, transport, session)
        self.sessions[sid] = entry
        tg.start_soon(self._run_session, entry)
        return entry

    async def _run_session(self, entry: _Entry) -> None:
        with entry.scope:
            try:
                await entry.session.run()
            except Exception:
                logger.exception("session %s… failed", entry.id[:8])
        self._drop(entry)

    def _drop(self, entry: _Entry, *, forget: bool = True) -> None:
        if self.sessions.get(entry.id) is entry:
            del self.sessions[entry.id]
        entry.transport.close()
        entry.scope.cancel()
        store = self.event_store
        tg = self._tg
        if forget and store is not None and tg is not None:
            tg.start_soon(store.forget_session, entry.transport.key)

    async def _terminate(self, entry: _Entry) -> None:
        # Awaited here rather than spawned: on shutdown the host task group is about to be
        # cancelled, and trio never starts a task spawned into a cancelled group.
        self._drop(entry, forget=False)
        if self.event_store is not None:
            await self.event_store.forget_session(entry.transport.key)

    # ------------------------------------------------------------------ SSE pump

    async def _pump(
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
        ping = self.sse_ping_interval if keepalive and self.sse_ping_interval else math.inf
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                while True:
                    m = await receive()
                    if m["type"] == "http.disconnect":
                        break
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
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


#: How long a request may take to be answered in one piece (then it is streamed, or
#: watched for a client disconnect by a task of its own).
_QUICK_ANSWER = 0.02


async def _settled(event: anyio.Event) -> bool:
    """Wait briefly for the session to answer; True when ``event`` is set in time.

    Most answers come within a millisecond (a sync tool's worker-thread round trip
    included): waiting on the event costs one cancel scope, where a watcher task for the
    client's disconnect, or polling the loop, would cost several iterations (CPU the worker
    thread and the other requests need on a small machine).
    """
    if not event.is_set():
        with anyio.move_on_after(_QUICK_ANSWER):
            await event.wait()
    return event.is_set()


async def _wait_or_disconnect(event: anyio.Event, receive: Receive) -> bool:
    """Wait for ``event``; False if the client disconnected first."""
    done = False
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            while True:
                m = await receive()
                if m["type"] == "http.disconnect":
                    break
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        await event.wait()
        done = True
        tg.cancel_scope.cancel()
    return done


def _check_message(msg: Any) -> str | None:
    """Why a POST body is not one JSON-RPC message, or None."""
    if isinstance(msg, list):
        return "Invalid Request: send one JSON-RPC message per POST (batches are not supported)"
    if not isinstance(msg, dict):
        return "Invalid Request: the body must be a JSON-RPC message object"
    if msg.get("jsonrpc") != "2.0":
        return 'Invalid Request: "jsonrpc" must be exactly "2.0"'
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return 'Invalid Request: "method" must be a string'
        if "id" in msg and (type(msg["id"]) is not str and type(msg["id"]) is not int):
            return 'Invalid Request: "id" must be a string or an integer'
        params = msg.get("params")
        if params is not None and not isinstance(params, dict):
            return 'Invalid Request: "params" must be an object'
        return None
    if ("result" in msg or "error" in msg) and "id" in msg:
        return None
    return "Invalid Request: neither a request, a notification nor a response"


def create_http_app(
    server: SessionFactory,
    *,
    path: str | None = "/mcp",
    json_response: bool = False,
    stateless: bool = False,
    allowed_hosts: Iterable[str] | None = None,
    allowed_origins: Iterable[str] | None = None,
    event_store: EventStore | None = None,
    resumable: bool = True,
    get_stream: bool = True,
    session_idle_timeout: float | None = 1800.0,
    max_sessions: int = 10_000,
    max_body_size: int = 4 * 1024 * 1024,
    retry_ms: int = 1000,
    sse_ping_interval: float | None = 15.0,
    session_owner: Callable[[dict[str, str]], str | None] | None = None,
    legacy_sse: bool = False,
) -> StreamableHTTPApp:
    """An ASGI application serving ``server`` over Streamable HTTP at ``path``.

    Args:
        server: anything with ``create_session(transport) -> ServerSession``
            (an :class:`mcpkit.Server`).
        path: the MCP endpoint (None: answer on any path, e.g. when mounted).
        json_response: answer each request with one JSON body instead of an SSE stream
            (then notifications tied to a request go on the GET stream).
        stateless: no sessions: each POST is served by a fresh session; no GET/DELETE.
        allowed_hosts: accepted ``Host`` values (``host`` or ``host:port``; ``"*"`` for any).
            Default: loopback names only (DNS-rebinding protection).
        allowed_origins: accepted ``Origin`` values (``scheme://host[:port|:*]``; ``"*"``).
            Default: the allowed hosts over http and https, any port.
        event_store: where events are kept for resumption (default: bounded, in memory).
        resumable: give events ids and keep them for ``Last-Event-ID`` replay.
        get_stream: offer the standalone GET stream (else GET answers 405).
        session_idle_timeout: seconds without traffic after which a session ends
            (None: never; sessions then end only by DELETE or the cap).
        max_sessions: sessions held at once; the least recently active idle one is
            dropped to make room, and new ones get 503 when all are busy.
        max_body_size: largest POST body accepted (413 above).
        retry_ms: the SSE ``retry`` sent to clients (reconnection delay).
        sse_ping_interval: comment lines sent on idle GET streams to detect dead peers.
        session_owner: ``fn(request headers) -> user identity``: binds each session to the
            user who created it (e.g. the subject of the bearer token); another user's
            requests with that session id get 404, as for an unknown session.
        legacy_sse: also serve the 2024-11-05 HTTP+SSE transport (``GET /sse``,
            ``POST /messages/``) beside the endpoint, for old clients.

    Example::

        app = create_http_app(server, json_response=True)
        # uvicorn.run(app, host="127.0.0.1", port=8000)
    """
    return StreamableHTTPApp(
        server,
        path=path,
        json_response=json_response,
        stateless=stateless,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        event_store=event_store,
        resumable=resumable,
        get_stream=get_stream,
        session_idle_timeout=session_idle_timeout,
        max_sessions=max_sessions,
        max_body_size=max_body_size,
        retry_ms=retry_ms,
        sse_ping_interval=sse_ping_interval,
        session_owner=session_owner,
        legacy_sse=legacy_sse,
    )


async def close_sse_stream(ctx: Any, *, retry_ms: int | None = None) -> bool:
    """From a request handler: end the HTTP connection of this request's SSE stream.

    The request goes on; its later messages (and result) are kept, and the client
    reconnects after ``retry_ms`` with ``GET`` + ``Last-Event-ID`` to get them (SSE
    polling). Returns False where that is not possible (not HTTP, JSON responses, no event
    store).
    """
    transport = getattr(getattr(getattr(ctx, "session", None), "engine", None), "transport", None)
    if not isinstance(transport, HTTPServerTransport):
        return False
    return await transport.close_stream_connection(ctx.request_id, retry_ms)


__all__ = ["StreamableHTTPApp", "close_sse_stream", "create_http_app"]
