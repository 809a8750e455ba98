"""The Streamable HTTP app's stateless side (revision 2026-07-28): POSTs with no session.

A modern client sends every request on its own, with the revision, its capabilities and
identity in ``_meta`` and the standard headers (``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name``) mirroring the body. The app checks the headers against the body, then hands
the request to one long-lived *hub* session that serves every modern request of the app:
no session is built or torn down per request, so a stateless call costs what a call on an
open 2025 session costs. The hub renumbers requests (clients' ids may collide) and the
transport gives each answer its client's id back.

Closing the response stream cancels the request (streamable-http.mdx, Cancellation).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import orjson
from anyio.abc import TaskGroup

from .._exceptions import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    ConnectionClosed,
)
from .._http._asgi import (
    JSON,
    SSE_HEADERS,
    Receive,
    Send,
    cancel_on_disconnect,
    respond,
    respond_error,
)
from .._http._transport import HTTPServerTransport, SessionGone, Stream
from .._session._server import ServerSession
from .._session._stateless import request_version
from ..types._revisions import STATELESS_PROTOCOL_VERSIONS
from ._common import settled, wait_or_disconnect
from ._options import HTTPAppOptions
from ._registry import SessionFactory

#: Requests whose ``Mcp-Name`` header mirrors a body member (streamable-http.mdx).
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_B64_OPEN, _B64_CLOSE = "=?base64?", "?="
#: Errors a modern server answers with 400 (the client corrects the request or its
#: version instead of falling back to the handshake era), and 404 for an unknown method.
_STATUS_BY_CODE = {
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}


def is_modern(msg: dict[str, Any], headers: Mapping[str, str]) -> bool:
    """Whether a POST without a session id is a stateless-revision request."""
    if msg.get("method") == "initialize":
        return False  # the handshake era opens this way, whatever it says besides
    if headers.get("mcp-protocol-version") in STATELESS_PROTOCOL_VERSIONS:
        return True
    params = msg.get("params")
    return isinstance(params, dict) and request_version(params.get("_meta")) is not None


def decode_header_value(value: str) -> str | None:
    """A mirrored header's value, its Base64 sentinel form decoded; None if malformed."""
    if value.startswith(_B64_OPEN) and value.endswith(_B64_CLOSE):
        try:
            raw = base64.b64decode(value[len(_B64_OPEN) : -len(_B64_CLOSE)], validate=True)
            return raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    if any(not (" " <= c <= "~" or c == "\t") for c in value):
        return None
    return value


def header_problem(msg: dict[str, Any], headers: Mapping[str, str]) -> str | None:
    """Why the standard headers do not mirror the body (a HeaderMismatch), or None."""
    header_version = headers.get("mcp-protocol-version")
    if header_version is None:
        return "Header mismatch: the MCP-Protocol-Version header is missing"
    params = msg.get("params")
    body_version = request_version(params.get("_meta")) if isinstance(params, dict) else None
    if body_version is not None and body_version != header_version:
        return (
            f"Header mismatch: MCP-Protocol-Version {header_version!r} does not match "
            f"_meta protocolVersion {body_version!r}"
        )
    method = msg["method"]
    got = headers.get("mcp-method")
    if got is None:
        return "Header mismatch: the Mcp-Method header is missing"
    if got != method:
        return f"Header mismatch: Mcp-Method {got!r} does not match body method {method!r}"
    member = NAMED.get(method)
    if member is None:
        return None
    raw = headers.get("mcp-name")
    if raw is None:
        return f"Header mismatch: {method} needs an Mcp-Name header"
    name = decode_header_value(raw)
    if name is None:
        return "Header mismatch: the Mcp-Name header value is malformed"
    body = params.get(member) if isinstance(params, dict) else None
    if name != body:
        return f"Header mismatch: Mcp-Name {name!r} does not match body {member} {body!r}"
    return None


def meta_problem(msg: dict[str, Any]) -> str | None:
    """Why a modern request's ``_meta`` lacks what every request must carry, or None."""
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        return "Invalid params: the request has no _meta (revision 2026-07-28 needs one)"
    if not isinstance(meta.get("io.modelcontextprotocol/protocolVersion"), str):
        return "Invalid params: _meta must carry io.modelcontextprotocol/protocolVersion"
    if not isinstance(meta.get("io.modelcontextprotocol/clientCapabilities"), dict):
        return "Invalid params: _meta must carry io.modelcontextprotocol/clientCapabilities"
    return None


def status_of(message: Any) -> int:
    """The HTTP status of a modern answer: 200, or what its error calls for."""
    error = message.get("error") if isinstance(message, dict) else None
    if not isinstance(error, dict):
        return 200
    return _STATUS_BY_CODE.get(error.get("code"), 200)  # type: ignore[arg-type]


class ModernHandler:
    """Serves stateless-revision POSTs through one shared hub session.

    ``host()`` returns the app's task group, where the hub runs.
    """

    def __init__(
        self,
        server: SessionFactory,
        options: HTTPAppOptions,
        host: Callable[[], Awaitable[TaskGroup]],
    ) -> None:
        self.server = server
        self.options = options
        self.host = host
        self._hub: tuple[HTTPServerTransport, ServerSession] | None = None
        self._starting = anyio.Lock()
        self._next_id = 0

    async def hub(self) -> tuple[HTTPServerTransport, ServerSession]:
        """The hub session, started on first use (and again if it ended)."""
        hub = self._hub
        if hub is not None and not hub[0].closed:
            return hub
        async with self._starting:
            if self._hub is None or self._hub[0].closed:
                tg = await self.host()
                transport = HTTPServerTransport(
                    "hub", json_response=self.options.json_response, stateless=True
                )
                session = self.server.create_session(transport)
                session.stateless_only = True
                tg.start_soon(session.run)
                self._hub = (transport, session)
            return self._hub

    async def post(
        self, msg: dict[str, Any], headers: Mapping[str, str], receive: Receive, send: Send
    ) -> None:
        if "method" not in msg:
            await respond_error(
                send, 400, INVALID_REQUEST, "Bad Request: a client does not POST responses"
            )
            return
        if "id" not in msg:
            # No core notification travels over HTTP at 2026-07-28 (closing a stream is
            # the cancellation); accepted and ignored.
            await respond(send, 202)
            return
        rid = msg["id"]
        problem = header_problem(msg, headers)
        if problem is not None:
            await respond_error(send, 400, HEADER_MISMATCH, problem, id=rid)
            return
        problem = meta_problem(msg)
        if problem is not None:
            await respond_error(send, 400, INVALID_PARAMS, problem, id=rid)
            return
        transport, session = await self.hub()
        self._next_id += 1
        internal = self._next_id
        fed = {**msg, "id": internal}
        json = self.options.json_response
        stream = transport.new_request_stream(internal, json=json)
        stream.reply_id = rid
        if json:
            await self._answer_json(transport, session, stream, fed, receive, send)
        else:
            await self._answer_sse(transport, stream, fed, receive, send)

    async def _answer_json(
        self,
        transport: HTTPServerTransport,
        session: ServerSession,
        stream: Stream,
        fed: dict[str, Any],
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            # The answer is one body sent when ready: serve it in this task.
            await session.engine.serve_inline(fed)
        except ConnectionClosed:
            pass  # the hub ended meanwhile: its streams are closed, see below
        if not await settled(stream.done_event) and not await wait_or_disconnect(
            stream.done_event, receive
        ):
            await _cancel(transport, fed["id"])
            return
        if stream.result is None:
            await respond(send, 503)
            return
        await respond(send, status_of(stream.message), stream.result, content_type=JSON)

    async def _answer_sse(
        self,
        transport: HTTPServerTransport,
        stream: Stream,
        fed: dict[str, Any],
        receive: Receive,
        send: Send,
    ) -> None:
        conn = stream.attach()
        try:
            await transport.feed(fed)
        except SessionGone:
            conn.close()
            await respond(send, 503)
            return
        ready: list[bytes] = []
        final = False
        if await settled(stream.done_event):
            # Answered within a few loop turns: the whole stream goes out as one body.
            while not final:
                try:
                    _, chunk, final = conn.receive_nowait()
                except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                    break
                ready.append(chunk)
        if final:
            conn.close()
            status = status_of(stream.message)
            if status != 200:
                # A refusal is one JSON error body, readable by any client.
                await respond(send, status, orjson.dumps(stream.message), content_type=JSON)
                return
            await respond(send, 200, b"".join(ready), headers=SSE_HEADERS)
            return
        finished = False
        async with conn, anyio.create_task_group() as tg:
            tg.start_soon(cancel_on_disconnect, receive, tg.cancel_scope)
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            if ready:
                await send(
                    {"type": "http.response.body", "body": b"".join(ready), "more_body": True}
                )
            async for _, chunk, final in conn:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                if final:
                    break
            finished = final
            tg.cancel_scope.cancel()
        if not finished:
            # The client closed the stream: that cancels the request.
            await _cancel(transport, fed["id"])
            return
        await send({"type": "http.response.body", "body": b""})


async def _cancel(transport: HTTPServerTransport, internal: int) -> None:
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": internal, "reason": "the client closed the response stream"},
    }
    try:
        await transport.feed(note)
    except SessionGone:
        pass
