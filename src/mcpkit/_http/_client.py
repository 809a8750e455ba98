"""HTTP client transports: Streamable HTTP, the legacy HTTP+SSE one, and the fallback between them.

Built on our small HTTP/1.1 client (``_h1client``: h11 over anyio's streams; on httpx2 when
the caller brings an httpx2 client or auth; see docs/dependencies.md). Each outgoing request
is POSTed from its own task, so a long-running call never blocks other traffic; its answer
(one JSON body or an SSE stream) is fed to the engine as it arrives. Notifications and
responses are POSTed inline, so their errors surface to the caller and their order is kept.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import Any

import anyio
import orjson
from anyio.abc import TaskGroup

from .._backend import handler_tasks
from .._exceptions import AuthError, ConnectionClosed, TransportError
from .._transports._base import Incoming, Message, RequestId
from .._transports._stream import DEFAULT_MAX_MESSAGE_SIZE
from ..types._metakeys import PROTOCOL_VERSION_META_KEY
from ..types._revisions import STATELESS_PROTOCOL_VERSIONS
from ._client_common import (
    AuthLike,
    _client,
    _error,
    _error_text,
    _is_cancel,
    _maybe_close,
    _redirect_text,
    _Seen,
    _Sink,
    broken_stream_error,
    content_encoding,
    lost_server_error,
    read_limited,
    refusal_of,
    send_for_status,
    undelivered_error,
)
from ._client_sse import SSEClientTransport, open_sse
from ._errors import HTTPStatusFailure, SessionExpired
from ._h1client import HTTPError
from ._headers import mirror_headers
from ._interface import HTTPClient
from ._sse import MessageTooLarge, SSEEvent, SSEParser

logger = logging.getLogger("mcpkit.http.client")

DEFAULT_RETRY_MS = 1000
ACCEPT_BOTH = "application/json, text/event-stream"
#: How long a POST's SSE stream may take to end after it carried our response (then the
#: connection is dropped rather than returned to the keep-alive pool).
_DRAIN_TIMEOUT = 0.5


class StreamableHTTPClientTransport:
    """The client end of a Streamable HTTP connection. Open it with :func:`open_streamable_http`."""

    def __init__(
        self,
        url: str,
        client: HTTPClient,
        tg: TaskGroup,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        sse_read_timeout: float = 300.0,
        max_reconnects: int = 5,
        fallback_to_sse: bool = False,
        sink: _Sink | None = None,
        reinitialize: bool = True,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self.url = url
        #: The largest message accepted from the server, on JSON and SSE answers alike.
        self.max_message_size = max_message_size
        self._client = client
        self._tg = tg
        self._headers = dict(headers or {})
        self.timeout = timeout
        self.sse_read_timeout = sse_read_timeout
        self.max_reconnects = max_reconnects
        self._fallback = fallback_to_sse
        self._sink = sink or _Sink()
        #: Where SSE streams' messages go: the sink, or the engine itself (push_to).
        self._deliver: Callable[[Incoming], Awaitable[None]] = self._sink.put
        #: The ``Mcp-Session-Id`` the server assigned, if any.
        self.session_id: str | None = None
        #: For telemetry (``network.transport``).
        self.network_transport = "tcp"
        #: The revision learned from the initialize result (sent as MCP-Protocol-Version).
        self.protocol_version: str | None = None
        self.session_expired = False
        #: On a 404 for our session, start a new one with the same initialize (spec).
        self.reinitialize = reinitialize
        #: How many times the session was renewed after a 404.
        self.renewals = 0
        self._init_message: dict[str, Any] | None = None
        self._renew_lock = anyio.Lock()
        self._init_ids: set[RequestId] = set()
        # Each request's exchange runs as a handler task (a plain task on asyncio: an anyio
        # child task and a cancel scope per request cost ~8% of a call's client CPU); its
        # handle cancels it (notifications/cancelled, or closing a stateless stream).
        # Not eager: each request's task must start after send() returned (it reads the
        # handle send() stores); its first step is a network exchange anyway.
        self._requests = handler_tasks(tg, name="mcpkit.http.client", eager=False)
        self._request_handles: dict[Any, Any] = {}
        self._get_started = False
        self._closed = False
        self._legacy: SSEClientTransport | None = None
        self._mode_known = anyio.Event()
        self.close_reason = "the HTTP connection was closed"
        #: Tool name -> its ``x-mcp-header`` arguments (header, path), mirrored into
        #: ``Mcp-Param-*`` headers on stateless calls; the client fills it from tools/list.
        self.header_params: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        #: Ids of the stateless requests in flight (cancelled by closing their stream).
        self._stateless_ids: set[Any] = set()

    # ------------------------------------------------------------------ Transport

    async def receive(self) -> Incoming:
        return await self._sink.get()

    async def send(
        self, message: Message, /, *, related_request_id: RequestId | None = None
    ) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._legacy is not None:
            await self._legacy.send(message)
            return
        if self.session_expired:
            if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
                return
            raise SessionExpired(
                "the server ended the MCP session (HTTP 404); connect again and initialize anew"
            )
        if isinstance(message, dict) and "method" in message and "id" in message:
            if message["method"] == "initialize":
                self._init_ids.add(message["id"])
                self._init_message = message
            elif (
                self._fallback
                and not self._mode_known.is_set()
                and _stateless_version(message) is None
            ):
                with anyio.fail_after(self.timeout):
                    await self._mode_known.wait()
                if self._legacy is not None:
                    await self._legacy.send(message)
                    return
            rid = message["id"]
            self._request_handles[rid] = self._requests.start(self._post_request, message)
            return
        if _is_cancel(message):
            # We gave up on that request: stop reading (and resuming) its stream.
            params = message.get("params") if isinstance(message, dict) else None
            handle = (
                self._request_handles.pop(params.get("requestId"), None)
                if isinstance(params, dict)
                else None
            )
            if handle is not None:
                self._requests.cancel(handle)
            rid = params.get("requestId") if isinstance(params, dict) else None
            if rid in self._stateless_ids:
                # Closing a stateless request's stream is its cancellation (cancellation.mdx).
                return
        await self._post_other(message)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._legacy is not None:
            await self._legacy.aclose()
        elif self.session_id is not None and not self.session_expired:
            # Tell the server we are done so it frees the session now (405 = not allowed: fine).
            with anyio.CancelScope(shield=True), anyio.move_on_after(min(self.timeout, 5.0)):
                try:
                    await send_for_status(
                        self._client,
                        "DELETE",
                        self.url,
                        headers=self._request_headers(None),
                        timeout=min(self.timeout, 5.0),
                    )
                except HTTPError as e:
                    logger.debug("DELETE of the session failed: %s", e)
        self._sink.close()

    # ------------------------------------------------------------------ POST

    def _request_headers(self, accept: str | None = ACCEPT_BOTH) -> dict[str, str]:
        h = dict(self._headers)
        if accept is not None:
            h["accept"] = accept
        if self.session_id is not None:
            h["mcp-session-id"] = self.session_id
        if self.protocol_version is not None:
            h["mcp-protocol-version"] = self.protocol_version
        return h

    def _post_headers(self, message: Message | None = None) -> dict[str, str]:
        h = self._request_headers()
        h["content-type"] = "application/json"
        version = _stateless_version(message)
        if version is not None and isinstance(message, dict):
            # A stateless request: no session, its own revision, the body mirrored.
            h.pop("mcp-session-id", None)
            h["mcp-protocol-version"] = version
            h.update(mirror_headers(message, self.header_params))
        return h

    async def _post_other(self, message: Message, *, retried: bool = False) -> None:
        headers = self._post_headers(message)
        sent_sid = headers.get("mcp-session-id")
        try:
            status, text = await send_for_status(
                self._client,
                "POST",
                self.url,
                content=orjson.dumps(message),
                headers=headers,
                timeout=self.timeout,
            )
        except HTTPError as e:
            if _is_cancel(message):
                return
            raise ConnectionClosed(f"POST to {self.url} failed: {e or type(e).__name__}") from e
        if status == 404 and sent_sid is not None:
            renewed = await self._session_lost(sent_sid)
            if _is_cancel(message) or (isinstance(message, dict) and "method" not in message):
                return  # about a request of the ended session: nothing to tell the new one
            if renewed and not retried:
                await self._post_other(message, retried=True)
                return
            self.session_expired = True
            raise SessionExpired(
                "the server ended the MCP session (HTTP 404); connect again and initialize anew"
            )
        if status >= 400 and not _is_cancel(message):
            raise HTTPStatusFailure(status, text)
        if isinstance(message, dict) and message.get("method") == "notifications/initialized":
            self._start_get_stream()

    async def _post_request(self, message: dict[str, Any]) -> None:
        rid: RequestId = message["id"]
        is_init = rid in self._init_ids
        # Set by send() before this task ran; gone if it was cancelled before it started.
        handle = self._request_handles.get(rid)
        stateless = _stateless_version(message) is not None
        if stateless:
            self._stateless_ids.add(rid)
        try:
            if handle is not None:
                await self._guarded_exchange(handle, message, rid, is_init)
        except HTTPError as e:
            failed = f"HTTP request failed: {type(e).__name__}: {e}"
            await self._sink.put(undelivered_error(rid, failed))
        except MessageTooLarge as e:
            await self._sink.put(_error(rid, str(e)))
        except AuthError as e:  # the auth= hook could not get a token (OAuth)
            refusal = _error(rid, f"authorization failed: {e.error}: {e.description}")
            refusal["error"]["data"] = {"authError": e.error}
            await self._sink.put(refusal)
        except ValueError as e:  # malformed SSE or JSON from the server
            await self._sink.put(_error(rid, f"malformed response from the server: {e}"))
        finally:
            if handle is not None and self._request_handles.get(rid) is handle:
                del self._request_handles[rid]
            self._init_ids.discard(rid)
            if stateless:
                self._stateless_ids.discard(rid)
            if is_init:
                self._mode_known.set()

    async def _guarded_exchange(
        self, handle: Any, message: dict[str, Any], rid: RequestId, is_init: bool
    ) -> None:
        """:meth:`_exchange`, ended quietly when the request's handle is cancelled."""
        try:
            await self._requests.guard(handle, self._exchange(message, rid, is_init))
        except BaseException as exc:
            cancelled = self._request_handles.get(rid) is not handle
            if not self._requests.absorbs(handle, exc, cancelled=cancelled, closing=self._closed):
                raise

    async def _stop_requests(self) -> None:
        """Cancel the exchanges still running and wait for them (the transport is closing)."""
        self._requests.cancel_all()
        await self._requests.join()

    async def _exchange(self, message: dict[str, Any], rid: RequestId, is_init: bool) -> None:
        stale = await self._exchange_once(message, rid, is_init)
        if stale is None:
            return
        # 404: the server ended our session, so it never saw this request. Start a new
        # session (spec: a new InitializeRequest without a session id) and send it there.
        if await self._session_lost(stale):
            stale = await self._exchange_once(message, rid, is_init)
            if stale is None:
                return
            self.session_expired = True
        await self._sink.put(
            _error(
                rid,
                "the server ended the MCP session (HTTP 404); connect again and initialize anew",
                404,
            )
        )

    async def _exchange_once(
        self, message: dict[str, Any], rid: RequestId, is_init: bool
    ) -> str | None:
        """POST one request and feed its answer; returns our session id if it got 404."""
        timeout = (self.timeout, self.sse_read_timeout)
        headers = self._post_headers(message)
        sent_sid = headers.get("mcp-session-id")
        async with self._client.stream(
            "POST",
            self.url,
            content=orjson.dumps(message),
            headers=headers,
            timeout=timeout,
        ) as resp:
            status = resp.status_code
            if status == 404 and sent_sid is not None:
                await resp.aclose()
                return sent_sid
            if is_init and self._fallback and status in (400, 404, 405) and self.session_id is None:
                first = f"HTTP {status}: {await _error_text(resp)}"
                await resp.aclose()
                await self._switch_to_legacy(message, first)
                return None
            if status >= 400:
                await self._answer_refusal(resp, rid, status, _stateless_version(message))
                return None
            if 300 <= status < 400:
                await self._sink.put(_error(rid, _redirect_text(resp), status))
                return None
            if is_init:
                sid = resp.headers.get("mcp-session-id")
                if sid is not None:
                    self.session_id = sid
            ctype = resp.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if ctype == "application/json":
                body = await read_limited(resp, self.max_message_size)
                await self._incoming(orjson.loads(body))
                return None
            if ctype == "text/event-stream":
                declared = resp.headers.get("content-length", "")
                if (
                    declared.isdigit()
                    and int(declared) <= self.max_message_size
                    and content_encoding(resp) is None  # else its decoded size is unknown
                ):
                    # A stream sent whole (a server that answered before saying anything
                    # else): read at once, no draining after the answer.
                    got, last_id, retry = await self._sse_body(await resp.aread(), rid)
                else:
                    got, last_id, retry = await self._read_sse(resp, rid)
            else:
                await self._sink.put(
                    _error(
                        rid, f"unexpected answer: HTTP {status} with content type {ctype!r}", status
                    )
                )
                return None
        if not got:
            if _stateless_version(message) is not None:
                # 2026-07-28 streams do not resume: the request is lost; the session above
                # sends it again if that is safe (SEP-2575; issue 41), else tells the caller.
                await self._sink.put(broken_stream_error(rid))
            else:
                await self._resume(rid, last_id, retry)
        return None

    async def _answer_refusal(
        self, resp: Any, rid: RequestId, status: int, stateless: str | None
    ) -> None:
        """A 4xx/5xx answer: its JSON-RPC error when the body is one for this request (a
        stateless server refuses that way), else an error naming the HTTP status."""
        own, refusal = await refusal_of(resp, rid, status, stateless=stateless is not None)
        await (self._incoming(refusal) if own else self._sink.put(refusal))

    async def _sse_body(
        self, body: bytes, rid: RequestId | None
    ) -> tuple[bool, str | None, int | None]:
        """:meth:`_read_sse` for a stream whose bytes are all here."""
        seen = _Seen()
        for ev in SSEParser(self.max_message_size).feed(body):
            await self._take(ev, rid, seen)
        return seen.got, seen.last_id, seen.retry

    async def _read_sse(
        self, resp: Any, rid: RequestId | None
    ) -> tuple[bool, str | None, int | None]:
        """Feed a stream's messages to the engine. Returns (saw the response to rid, last id, retry)."""
        parser = SSEParser(self.max_message_size)
        seen = _Seen()
        try:
            async with aclosing(resp.aiter_bytes()) as chunks:
                async for chunk in chunks:
                    for ev in parser.feed(chunk):
                        await self._take(ev, rid, seen)
                    if seen.got:
                        # The server closes the stream after the response (the spec's
                        # SHOULD); read to its end, so the connection goes back to the
                        # keep-alive pool (a new TCP connection per call otherwise).
                        with anyio.move_on_after(_DRAIN_TIMEOUT):
                            async for chunk in chunks:
                                for ev in parser.feed(chunk):
                                    await self._take(ev, None, seen)
                        break
        except HTTPError as e:
            logger.debug("SSE stream broke: %s", e)
        return seen.got, seen.last_id, seen.retry

    async def _take(self, ev: SSEEvent, rid: RequestId | None, seen: _Seen) -> None:
        """One event of a response stream: its id and retry noted, its message to the engine."""
        if ev.id is not None:
            seen.last_id = ev.id
        if ev.retry is not None:
            seen.retry = ev.retry
        if ev.event != "message" or not ev.data:
            return
        try:
            msg = orjson.loads(ev.data)
        except orjson.JSONDecodeError:
            logger.warning("dropped an SSE event that is not JSON")
            return
        if await self._incoming(msg) == rid and rid is not None:
            seen.got = True

    async def _resume(self, rid: RequestId, last_id: str | None, retry: int | None) -> None:
        """The POST stream ended without our response: reconnect with GET + Last-Event-ID."""
        attempts = 0
        while True:
            if last_id is None:
                await self._sink.put(
                    lost_server_error(
                        rid,
                        "the server closed the stream before answering (no event id to resume from)",
                    )
                )
                return
            if attempts >= self.max_reconnects:
                await self._sink.put(
                    lost_server_error(rid, f"gave up resuming the stream after {attempts} attempts")
                )
                return
            attempts += 1
            await anyio.sleep((retry if retry is not None else DEFAULT_RETRY_MS) / 1000)
            headers = self._request_headers("text/event-stream")
            headers["last-event-id"] = last_id
            timeout = (self.timeout, self.sse_read_timeout)
            try:
                async with self._client.stream(
                    "GET", self.url, headers=headers, timeout=timeout
                ) as resp:
                    stale = headers.get("mcp-session-id")
                    if resp.status_code == 404 and stale is not None:
                        # The request ended with its session (its result is lost); later
                        # requests go to a new session if one can be started.
                        await resp.aclose()
                        await self._sink.put(
                            _error(rid, "the server ended the MCP session (HTTP 404)", 404)
                        )
                        await self._session_lost(stale)
                        return
                    if resp.status_code >= 400:
                        await self._sink.put(
                            _error(
                                rid,
                                f"resuming failed: HTTP {resp.status_code}: {await _error_text(resp)}",
                                resp.status_code,
                            )
                        )
                        return
                    got, new_last, new_retry = await self._read_sse(resp, rid)
            except HTTPError as e:
                logger.debug("resumption attempt failed: %s", e)
                continue
            if got:
                return
            if new_last is not None and new_last != last_id:
                attempts = 0  # progress was made
                last_id = new_last
            if new_retry is not None:
                retry = new_retry

    async def _incoming(self, msg: Any) -> RequestId | None:
        """Hand a message to the engine; returns the id if it is a response."""
        if isinstance(msg, dict) and "method" not in msg:
            rid = msg.get("id")
            if rid in self._init_ids:
                result = msg.get("result")
                if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                    self.protocol_version = result["protocolVersion"]
            await self._deliver(msg)
            return rid if isinstance(rid, (str, int)) else None
        await self._deliver(msg)
        return None

    def push_to(self, deliver: Callable[[Incoming], Awaitable[None]]) -> None:
        """What SSE streams carry goes to ``deliver`` from the task reading each, in order."""
        self._deliver = deliver

    # ------------------------------------------------------------------ 404: a new session

    async def _session_lost(self, stale: str) -> bool:
        """The server answered 404 for session ``stale``: start a new session, once.

        Returns whether requests can go on (on a new session); if not, the transport is
        marked expired and later sends raise :class:`SessionExpired`.
        """
        async with self._renew_lock:
            if self.session_id != stale:  # another request renewed it meanwhile
                return not self.session_expired
            if self.session_expired:
                return False
            ok = False
            if self.reinitialize and self._init_message is not None and not self._closed:
                try:
                    with anyio.fail_after(self.timeout):
                        ok = await self._renew()
                except (HTTPError, ValueError, TimeoutError) as e:
                    logger.debug("starting a new session failed: %s", e)
            if not ok:
                self.session_expired = True
            return ok

    async def _renew(self) -> bool:
        assert self._init_message is not None
        self.renewals += 1
        rid = f"mcpkit-renew-{self.renewals}"
        init = {**self._init_message, "id": rid}
        headers = self._post_headers()
        headers.pop("mcp-session-id", None)
        answer: Any = None
        async with self._client.stream(
            "POST",
            self.url,
            content=orjson.dumps(init),
            headers=headers,
            timeout=(self.timeout, self.timeout),
        ) as resp:
            sid = resp.headers.get("mcp-session-id")
            ctype = resp.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if resp.status_code != 200 or sid is None:
                logger.info("no new session after a 404: HTTP %s", resp.status_code)
                return False
            if ctype == "application/json":
                answer = orjson.loads(await read_limited(resp, self.max_message_size))
            elif ctype == "text/event-stream":
                parser = SSEParser(self.max_message_size)
                async with aclosing(resp.aiter_bytes()) as chunks:
                    async for chunk in chunks:
                        for ev in parser.feed(chunk):
                            if not ev.data:
                                continue
                            msg = orjson.loads(ev.data)
                            if isinstance(msg, dict) and msg.get("id") == rid:
                                answer = msg
                        if answer is not None:
                            break
        result = answer.get("result") if isinstance(answer, dict) else None
        if not isinstance(result, dict) or result.get("protocolVersion") != self.protocol_version:
            # A server that now speaks another revision is not the session we had.
            logger.info("the new session after a 404 was refused or changed revision")
            return False
        old, self.session_id = self.session_id, sid
        status, _ = await send_for_status(
            self._client,
            "POST",
            self.url,
            content=orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            headers=self._post_headers(),
            timeout=self.timeout,
        )
        if status >= 400:
            self.session_id = old
            return False
        logger.info("the server ended the MCP session (HTTP 404); continuing on a new one")
        return True

    # ------------------------------------------------------------------ GET stream

    def _start_get_stream(self) -> None:
        if self._get_started or self._closed:
            return
        self._get_started = True
        self._tg.start_soon(self._get_loop)

    async def _get_loop(self) -> None:
        last_id: str | None = None
        retry: int | None = None
        failures = 0
        while not self._closed and not self.session_expired:
            headers = self._request_headers("text/event-stream")
            if last_id is not None:
                headers["last-event-id"] = last_id
            timeout = (self.timeout, self.sse_read_timeout)
            try:
                async with self._client.stream(
                    "GET", self.url, headers=headers, timeout=timeout
                ) as resp:
                    if resp.status_code == 405:
                        return  # the server offers no GET stream
                    stale = headers.get("mcp-session-id")
                    if resp.status_code == 404 and stale is not None:
                        await resp.aclose()
                        if not await self._session_lost(stale):
                            return
                        last_id = None  # a new session: its GET stream starts afresh
                        continue
                    if resp.status_code >= 400 or "text/event-stream" not in resp.headers.get(
                        "content-type", ""
                    ):
                        logger.debug("GET stream refused: HTTP %s", resp.status_code)
                        return
                    failures = 0
                    _, new_last, new_retry = await self._read_sse(resp, None)
                    if new_last is not None:
                        last_id = new_last
                    if new_retry is not None:
                        retry = new_retry
            except HTTPError as e:
                logger.debug("GET stream broke: %s", e)
                failures += 1
                if failures > self.max_reconnects:
                    return
            await anyio.sleep(
                (retry if retry is not None else DEFAULT_RETRY_MS) / 1000 * max(1, failures)
            )

    # ------------------------------------------------------------------ fallback

    async def _switch_to_legacy(self, initialize: dict[str, Any], first: str) -> None:
        logger.info("%s does not speak Streamable HTTP; falling back to HTTP+SSE", self.url)
        try:
            legacy = await SSEClientTransport.connect(
                self.url,
                self._client,
                self._tg,
                headers=self._headers,
                timeout=self.timeout,
                sse_read_timeout=self.sse_read_timeout,
                sink=self._sink,
                max_message_size=self.max_message_size,
            )
        except (TransportError, HTTPError) as e:
            await self._sink.put(
                _error(
                    initialize["id"],
                    f"neither Streamable HTTP ({first}) nor HTTP+SSE ({e}) worked at {self.url}",
                )
            )
            return
        self._legacy = legacy
        await legacy.send(initialize)


def _stateless_version(message: Message | None) -> str | None:
    """The stateless revision an outgoing request names in its ``_meta``, if any."""
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    return version if version in STATELESS_PROTOCOL_VERSIONS else None


@asynccontextmanager
async def open_streamable_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: AuthLike = None,
    timeout: float = 30.0,
    sse_read_timeout: float = 300.0,
    max_reconnects: int = 5,
    http_client: Any = None,
    ssl_context: ssl.SSLContext | None = None,
    reinitialize: bool = True,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    _fallback_to_sse: bool = False,
) -> AsyncIterator[StreamableHTTPClientTransport]:
    """Connect to a Streamable HTTP MCP endpoint; yields the transport for a ``ClientSession``.

    Args:
        url: the MCP endpoint, e.g. ``http://127.0.0.1:8000/mcp``.
        headers: sent with every request.
        auth: an ``httpx2.Auth``, or a callable (sync or async) returning headers to add
            to each request (e.g. ``lambda: {"authorization": f"Bearer {token()}"}``).
        timeout: connect/write timeout, and the read timeout of notification POSTs.
        sse_read_timeout: longest silence tolerated on a response or SSE stream.
        max_reconnects: consecutive failed reconnections before a stream is given up.
        ssl_context: for ``https`` URLs (default: the system's trust store), e.g. one
            trusting a private CA: ``ssl.create_default_context(cafile=...)``.
        http_client: an ``httpx2.AsyncClient`` of your own (its auth/timeouts apply;
            it is not closed for you).
        reinitialize: when the server answers ``404`` for our session (it ended it), start
            a new session with the same ``initialize`` and send the request there (the
            spec's rule). The server's per-session state (log level, subscriptions) is not
            carried over. False: the call fails and later ones raise :class:`SessionExpired`.
        max_message_size: the largest message accepted from the server (64 MiB by default,
            as over stdio); a larger one fails its request with a message saying so.

    On close, the session is ended with ``DELETE``. When a new session cannot be started
    after a ``404`` (or ``reinitialize=False``), later calls raise :class:`SessionExpired`.

    Example::

        async with open_streamable_http("http://127.0.0.1:8000/mcp") as t:
            async with ClientSession(t, client_info={"name": "me", "version": "1"}) as s:
                await s.initialize()
    """
    async with (
        _maybe_close(
            _client(auth, timeout, http_client, ssl_context, url), http_client is None
        ) as client,
        anyio.create_task_group() as tg,
    ):
        t = StreamableHTTPClientTransport(
            url,
            client,
            tg,
            headers=headers,
            timeout=timeout,
            sse_read_timeout=sse_read_timeout,
            max_reconnects=max_reconnects,
            fallback_to_sse=_fallback_to_sse,
            reinitialize=reinitialize,
            max_message_size=max_message_size,
        )
        try:
            yield t
        finally:
            await t.aclose()
            tg.cancel_scope.cancel()
            await t._stop_requests()


@asynccontextmanager
async def open_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: AuthLike = None,
    timeout: float = 30.0,
    sse_read_timeout: float = 300.0,
    max_reconnects: int = 5,
    http_client: Any = None,
    ssl_context: ssl.SSLContext | None = None,
    reinitialize: bool = True,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[StreamableHTTPClientTransport]:
    """Connect over Streamable HTTP, falling back to legacy HTTP+SSE when the server answers
    the ``initialize`` POST with 400, 404 or 405 (the spec's backwards-compatibility rule).

    Same arguments as :func:`open_streamable_http`.
    """
    async with open_streamable_http(
        url,
        headers=headers,
        auth=auth,
        timeout=timeout,
        sse_read_timeout=sse_read_timeout,
        max_reconnects=max_reconnects,
        http_client=http_client,
        ssl_context=ssl_context,
        reinitialize=reinitialize,
        max_message_size=max_message_size,
        _fallback_to_sse=True,
    ) as t:
        yield t


__all__ = [
    "HTTPStatusFailure",
    "SSEClientTransport",
    "SessionExpired",
    "StreamableHTTPClientTransport",
    "open_http",
    "open_sse",
    "open_streamable_http",
]
