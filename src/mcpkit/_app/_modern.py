"""The Streamable HTTP app's stateless side (revision 2026-07-28): POSTs with no session.

A modern client sends every request on its own, with the revision, its capabilities and
identity in ``_meta`` and the standard headers (``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name``, and ``Mcp-Param-{Name}`` for the tool arguments marked ``x-mcp-header``)
mirroring the body. The app checks the headers against the body, then hands
the request to one long-lived *hub* session that serves every modern request of the app:
no session is built or torn down per request, so a stateless call costs what a call on an
open 2025 session costs. The hub renumbers requests (clients' ids may collide) and the
transport gives each answer its client's id back.

Closing the response stream cancels the request (streamable-http.mdx, Cancellation).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from decimal import Decimal
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
from .._http._headers import NAMED_MEMBER, decode_header_value, value_at
from .._http._transport import HTTPServerTransport, SessionGone, Stream
from .._session._server import ServerSession
from .._session._stateless import request_version
from ..types._revisions import STATELESS_PROTOCOL_VERSIONS
from ._common import settled, wait_or_disconnect
from ._options import HTTPAppOptions
from ._registry import SessionFactory

#: Errors a modern server answers with 400 (the client corrects the request or its
#: version instead of falling back to the handshake era), and 404 for an unknown method.
_STATUS_BY_CODE = {
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
#: A decimal number as a mirrored integer header carries it (``42``, ``-7``, ``42.0``).
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
#: JavaScript's safe-integer bound: larger integers are not mirrored (clients cannot).
_SAFE_INT = 2**53 - 1


def header(headers: Mapping[str, str], name: str) -> str | None:
    """Header ``name`` (lower-case) without the optional whitespace around it, which HTTP
    field parsing drops before the value is evaluated (RFC 9110, section 5.5)."""
    value = headers.get(name)
    return None if value is None else value.strip(" \t")


def is_modern(msg: dict[str, Any], headers: Mapping[str, str]) -> bool:
    """Whether a POST without a session id is a stateless-revision request."""
    params = msg.get("params")
    named = request_version(params.get("_meta")) if isinstance(params, dict) else None
    version = header(headers, "mcp-protocol-version")
    if msg.get("method") == "initialize":
        # The handshake opens the 2025 era, unless the request says it is of the stateless
        # one: there initialize is a removed method (404, -32601), not a session opener.
        return version in STATELESS_PROTOCOL_VERSIONS or named in STATELESS_PROTOCOL_VERSIONS
    return version in STATELESS_PROTOCOL_VERSIONS or named is not None


def header_problem(msg: dict[str, Any], headers: Mapping[str, str]) -> str | None:
    """Why the standard headers do not mirror the body (a HeaderMismatch), or None."""
    header_version = header(headers, "mcp-protocol-version")
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
    got = header(headers, "mcp-method")
    if got is None:
        return "Header mismatch: the Mcp-Method header is missing"
    if got != method:
        return f"Header mismatch: Mcp-Method {got!r} does not match body method {method!r}"
    member = NAMED_MEMBER.get(method)
    if member is None:
        return None
    raw = header(headers, "mcp-name")
    if raw is None:
        return f"Header mismatch: {method} needs an Mcp-Name header"
    name = decode_header_value(raw)
    if name is None:
        return "Header mismatch: the Mcp-Name header value is malformed"
    body = params.get(member) if isinstance(params, dict) else None
    if name != body:
        return f"Header mismatch: Mcp-Name {name!r} does not match body {member} {body!r}"
    return None


def param_problem(
    msg: dict[str, Any],
    headers: Mapping[str, str],
    marked: Sequence[tuple[str, tuple[str, ...]]],
) -> str | None:
    """Why a ``tools/call``'s ``Mcp-Param-{Name}`` headers do not mirror the arguments its
    tool marks with ``x-mcp-header`` (a HeaderMismatch), or None.

    A marked argument that is present (and not null) needs its header, with the same value
    once decoded; an absent one must come without. Headers no mark names are ignored.
    """
    params = msg.get("params")
    args = params.get("arguments") if isinstance(params, dict) else None
    for name, path in marked:
        where = ".".join(path)
        raw = header(headers, f"mcp-param-{name.lower()}")
        value = value_at(args, path)
        if raw is None:
            if not _mirrorable(value):
                # Absent, null, or a value no client can mirror (not a string, boolean or
                # safe integer): no header expected; the arguments' own check judges it.
                continue
            return f"Header mismatch: argument {where!r} is set but the Mcp-Param-{name} header is missing"
        text = decode_header_value(raw)
        if text is None:
            return f"Header mismatch: the Mcp-Param-{name} header value is malformed"
        if value is None:
            return f"Header mismatch: Mcp-Param-{name} is sent but argument {where!r} is not set"
        if not _mirrors(text, value):
            return f"Header mismatch: Mcp-Param-{name} {text!r} does not match argument {where!r}"
    return None


def _mirrorable(value: Any) -> bool:
    """Whether a client mirrors ``value`` into a header (streamable-http.mdx, x-mcp-header:
    strings, booleans, and integers within JavaScript's safe range)."""
    if isinstance(value, (str, bool)):
        return True
    return isinstance(value, int) and abs(value) <= _SAFE_INT


def _mirrors(text: str, value: Any) -> bool:
    """Whether a decoded header value stands for body value ``value``."""
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, (int, float)):
        # Compared as numbers (42.0 is 42), exactly: Decimal, not floats, for big integers.
        return _NUMBER.fullmatch(text) is not None and Decimal(text) == Decimal(value)
    return isinstance(value, str) and text == value


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


def _wants_stream(msg: dict[str, Any]) -> bool:
    """Whether a request needs an SSE answer: a listen stream, or one asking for progress
    (``progressToken``) or log messages (a ``logLevel``) that would otherwise be dropped."""
    if msg["method"] == "subscriptions/listen":
        return True
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and (
        "progressToken" in meta or "io.modelcontextprotocol/logLevel" in meta
    )


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
                tg.start_soon(_run_hub, transport, session)
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
        if problem is None and msg["method"] == "tools/call":
            params = msg.get("params")
            tool = params.get("name") if isinstance(params, dict) else None
            # Part of SessionFactory; a low-level factory written before the hook existed
            # marks no argument, and only the standard headers are checked for it.
            lookup = getattr(self.server, "tool_header_params", None)
            if isinstance(tool, str) and lookup is not None:
                marked = lookup(tool)
                if marked:
                    problem = param_problem(msg, headers, marked)
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
        # The server picks per request (streamable-http.mdx): one JSON body unless the
        # request will have something to say before its answer. A listen stream is all
        # notifications; a request that asked for progress or log messages gets them live.
        json = self.options.json_response and not _wants_stream(msg)
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
            if session.engine.running:
                # The answer is one body sent when ready: serve it in this task.
                await session.engine.serve_inline(fed)
            else:
                # The hub was started by this very request and its reader is not up yet:
                # the transport holds the request until the reader takes it.
                await transport.feed(fed)
        except (ConnectionClosed, SessionGone):
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


async def _run_hub(transport: HTTPServerTransport, session: ServerSession) -> None:
    """Serve the hub until the app stops (its task group is cancelled), then close its
    transport: the requests still attached end, and nothing is left for the collector."""
    try:
        await session.run()
    finally:
        transport.close()


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
