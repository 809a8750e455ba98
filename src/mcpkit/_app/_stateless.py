"""The Streamable HTTP app's stateless side (revision 2026-07-28): POSTs with no session.

A client of that era sends every request on its own, with the revision, its capabilities
and identity in ``_meta`` and the standard headers (``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name``, and ``Mcp-Param-{Name}`` for the tool arguments marked ``x-mcp-header``)
mirroring the body. The app checks the headers against the body, then serves the request
in the task of its own POST through the server's kernel: no session, no engine, no
renumbering, and nothing shared with other clients but the app's budgets (calls and listen
streams, each bounded app-wide and per client). ``serve_exchange`` (``_edge.py``) decided
the era; nothing here looks at it again.

Closing the response stream cancels the request (streamable-http.mdx, Cancellation).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, MutableMapping, Sequence
from decimal import Decimal
from functools import partial
from typing import Any, NamedTuple

import anyio
import orjson

from .._backend import LightCancelScope
from .._exceptions import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from .._http._asgi import (
    JSON,
    Answer,
    Receive,
    Send,
    error_body,
    respond,
)
from .._http._headers import NAMED_MEMBER, decode_header_value, value_at
from .._http._sse import encode_event
from .._incoming import IncomingRequest
from .._session._base import RequestContext
from .._session._kernel import Kernel
from .._transports._base import TransportInfo
from ..types._metakeys import (
    CLIENT_CAPABILITIES_META_KEY,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from ._answers import WATCH_AFTER, answer_now, answer_sse, status_of
from ._budget import Budget
from ._options import HTTPAppOptions
from ._registry import Hosting, SessionFactory

#: A decimal number as a mirrored integer header carries it (``42``, ``-7``, ``42.0``).
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
logger = logging.getLogger("mcpkit.http")

#: The ``_meta`` key of the revision a request names.
META_VERSION = PROTOCOL_VERSION_META_KEY

#: JavaScript's safe-integer bound: larger integers are not mirrored (clients cannot).
_SAFE_INT = 2**53 - 1


def header(headers: Mapping[str, str], name: str) -> str | None:
    """Header ``name`` (lower-case) without the optional whitespace around it, which HTTP
    field parsing drops before the value is evaluated (RFC 9110, section 5.5)."""
    value = headers.get(name)
    return None if value is None else value.strip(" \t")


def version_refusal(rid: Any, requested: str, supported: Sequence[str]) -> Answer:
    """The answer to a request naming a revision we do not serve (in ``_meta`` or only in
    the ``MCP-Protocol-Version`` header): 400 and UnsupportedProtocolVersion (-32022)
    listing the revisions we do, so a client speaking both eras picks one instead of
    guessing (streamable-http.mdx, Protocol Version Header)."""
    error = UnsupportedProtocolVersion(
        message=f"Unsupported protocol version: {requested!r} (supported: {', '.join(supported)})",
        data={"supported": list(supported), "requested": requested},
    ).to_error()
    body = {"jsonrpc": "2.0", "id": rid, "error": error}
    return Answer(400, orjson.dumps(body), content_type=JSON)


def header_problem(msg: dict[str, Any], headers: Mapping[str, str]) -> str | None:
    """Why the standard headers do not mirror the body (a HeaderMismatch), or None."""
    # Values without the optional whitespace around them (RFC 9110, section 5.5); read
    # inline rather than through header(): this runs on every 2026 request.
    header_version = headers.get("mcp-protocol-version")
    if header_version is None:
        return "Header mismatch: the MCP-Protocol-Version header is missing"
    header_version = header_version.strip(" \t")
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    body_version = meta.get(META_VERSION) if isinstance(meta, dict) else None
    if body_version is not None and body_version != header_version:
        return (
            f"Header mismatch: MCP-Protocol-Version {header_version!r} does not match "
            f"_meta protocolVersion {body_version!r}"
        )
    method = msg["method"]
    got = headers.get("mcp-method")
    if got is None:
        return "Header mismatch: the Mcp-Method header is missing"
    got = got.strip(" \t")
    if got != method:
        return f"Header mismatch: Mcp-Method {got!r} does not match body method {method!r}"
    member = NAMED_MEMBER.get(method)
    if member is None:
        return None
    raw = headers.get("mcp-name")
    if raw is None:
        return f"Header mismatch: {method} needs an Mcp-Name header"
    name = decode_header_value(raw.strip(" \t"))
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
    """Why a stateless-era request's ``_meta`` lacks what every request must carry, or None."""
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        return "Invalid params: the request has no _meta (revision 2026-07-28 needs one)"
    if not isinstance(meta.get(PROTOCOL_VERSION_META_KEY), str):
        return f"Invalid params: _meta must carry {PROTOCOL_VERSION_META_KEY}"
    if not isinstance(meta.get(CLIENT_CAPABILITIES_META_KEY), dict):
        return f"Invalid params: _meta must carry {CLIENT_CAPABILITIES_META_KEY}"
    return None


def _speaks_early(msg: dict[str, Any]) -> bool:
    """Whether a checked request asked for things said before its answer (progress, log
    messages): its answer is then a stream, not one body."""
    meta: dict[str, Any] = msg["params"]["_meta"]  # negotiate() found it an object
    return "progressToken" in meta or LOG_LEVEL_META_KEY in meta


class Refusal(NamedTuple):
    """The answer refusing a request: its HTTP status and JSON body (empty: none)."""

    status: int
    body: bytes


class StatelessEraHandler:
    """Serves stateless-revision POSTs: each in the task of its own POST, straight through
    the server's :class:`~mcpkit.lowlevel.Kernel` (no session, no engine, no shared slots).
    """

    def __init__(
        self, server: SessionFactory, options: HTTPAppOptions, hosting: Hosting | None
    ) -> None:
        self.server = server
        self.hosting = hosting
        self.options = options
        self.calls = Budget(
            options.max_stateless_requests, options.max_stateless_requests_per_principal
        )
        self.listens = Budget(options.max_listen_streams, options.max_listen_streams_per_principal)
        #: The cancel scopes of the requests being served (listen streams included), so that
        #: a shutdown can wait for them, bounded, and then end the rest (:meth:`drain`).
        self._inflight: set[anyio.CancelScope | LightCancelScope] = set()
        #: Set when the last of them ends, while :meth:`drain` waits (made there: an Event
        #: belongs to the running loop, and the handler is built before there is one).
        self._idle: anyio.Event | None = None
        #: The kernel serving the app's stateless requests: the server's own (an
        #: ``mcpkit.Server`` shares one with all its sessions and replaces its spec, never
        #: the kernel), or that of a session a low-level factory makes once for it.
        self.kernel: Kernel = (
            hosting.kernel if hosting is not None else server.create_session(_NoTransport()).kernel
        )

    async def post(
        self,
        msg: dict[str, Any],
        headers: Mapping[str, str],
        receive: Receive,
        info: TransportInfo,
    ) -> Answer:
        """The answer to a POSTed request of the stateless era (``serve_exchange`` decided
        it is one)."""
        verdict = self.check(msg, headers)
        if isinstance(verdict, Refusal):
            return Answer(verdict.status, verdict.body, content_type=JSON if verdict.body else None)
        req, negotiated = verdict
        # A request known to end without waiting is answered in one body, with no cancel
        # scope, no drain entry and no task watching for the client leaving: what it
        # would have awaited ends at once anyway (the answer is the same, byte for byte).
        return await self.serve(req, negotiated, msg, receive, info, at_once=self.at_once(req, msg))

    def check(
        self, msg: dict[str, Any], headers: Mapping[str, str]
    ) -> tuple[IncomingRequest, Any] | Refusal:
        """The request and its negotiated revision, or the answer that refuses it: a
        response POSTed (400), a notification (202: none travels over HTTP at 2026-07-28;
        closing a stream is the cancellation), headers that do not mirror the body, a
        ``_meta`` without what every request carries (400), a revision or capability the
        kernel refuses. :meth:`post` answers a refusal."""
        if "method" not in msg:
            return Refusal(
                400, error_body(INVALID_REQUEST, "Bad Request: a client does not POST responses")
            )
        if "id" not in msg:
            return Refusal(202, b"")
        rid = msg["id"]
        problem = self._header_problem(msg, headers)
        if problem is not None:
            return Refusal(400, error_body(HEADER_MISMATCH, problem, rid))
        req = IncomingRequest(None, rid, msg["method"], msg.get("params"))
        try:
            return req, self.kernel.negotiate(req.meta)
        except ProtocolError as e:
            problem = meta_problem(msg)
            if problem is not None:  # what every request must carry is missing: 400
                return Refusal(400, error_body(INVALID_PARAMS, problem, rid))
            error = {"jsonrpc": "2.0", "id": rid, "error": e.to_error()}
            return Refusal(status_of(error), orjson.dumps(error))

    async def serve(
        self,
        req: IncomingRequest,
        negotiated: Any,
        msg: dict[str, Any],
        receive: Receive,
        info: TransportInfo,
        *,
        at_once: bool = False,
    ) -> Answer:
        """The answer to a request whose checks passed (:meth:`check`), served within the
        app's budgets (a refusal is answered 429/503) and its shutdown drain. With
        ``at_once`` (what :meth:`at_once` says of it) it is answered in one body with no
        cancel scope and no drain entry: the kernel knows it ends without waiting (on
        anything but the answer's own ``send``), so there is nothing for a shutdown to
        wait for or cancel.

        The server picks per request (streamable-http.mdx): one JSON body unless the
        request will have something to say before its answer (a listen stream is all
        notifications; a request that asked for progress or log messages gets them live),
        then an SSE answer, whose head is known only once serving has begun: a stream."""
        listen = req.method == "subscriptions/listen"
        if not at_once and (listen or not self.options.json_response or _speaks_early(msg)):
            return Answer.streamed(partial(self._serve_sse, req, negotiated, listen, receive, info))
        budget = self.listens if listen else self.calls
        key = client_key(info) if listen else _principal_key(info)
        refused = budget.enter(key)
        if refused is not None:
            return _refusal(req.id, listen, refused, budget.per_key)
        rc = RequestContext(None, req, negotiated, transport=info)
        if at_once:
            try:
                return await answer_now(self.kernel, rc, json_response=self.options.json_response)
            finally:
                budget.leave(key)
        scope = LightCancelScope()
        self._inflight.add(scope)
        try:
            async with scope:
                answer = await answer_now(self.kernel, rc, json_response=True)
        finally:
            budget.leave(key)
            self._untrack(scope)
        if scope.cancelled_caught:
            return Answer(200, _shutdown_error(req.id), content_type=JSON)
        return answer

    async def _serve_sse(
        self,
        req: IncomingRequest,
        negotiated: Any,
        listen: bool,
        receive: Receive,
        info: TransportInfo,
        send: Send,
    ) -> None:
        """Write the SSE answer of ``req`` (see :meth:`serve`) through ``send``."""
        budget = self.listens if listen else self.calls
        # Listen streams are counted per client even without auth (by address, else one
        # anonymous client could hold them all); calls per verified principal only.
        key = client_key(info) if listen else _principal_key(info)
        refused = budget.enter(key)
        if refused is not None:
            await _refusal(req.id, listen, refused, budget.per_key).write(send)
            return
        scope = anyio.CancelScope()
        out = _Tracked(send)
        self._inflight.add(scope)
        try:
            with scope:
                rc = RequestContext(None, req, negotiated, transport=info)
                after = 0 if listen else WATCH_AFTER
                await answer_sse(self.kernel, rc, receive, out, stream_after=after)
        finally:
            budget.leave(key)
            self._untrack(scope)
        if scope.cancelled_caught:
            await _shutdown_answer(out, req.id)

    def _untrack(self, scope: anyio.CancelScope | LightCancelScope) -> None:
        self._inflight.discard(scope)
        if not self._inflight and self._idle is not None:
            self._idle.set()

    def at_once(self, req: IncomingRequest, msg: dict[str, Any]) -> bool:
        """Whether serving ``req`` (checked: :meth:`check`) ends without waiting: the
        kernel knows it does (a sync tool shown short, given no Context, ...) and it asked
        for nothing said before its answer."""
        return not _speaks_early(msg) and self.kernel.at_once(req.method, req.params)

    async def drain(self, timeout: float) -> None:
        """Let the requests in flight finish, for ``timeout`` seconds at most (a shutdown;
        the app already refuses new ones and ended the listen streams); then cancel those
        still running, each answered with an error saying the server is shutting down, so
        no client is left with a stream that just breaks."""
        if self._inflight:
            self._idle = anyio.Event()
            with anyio.move_on_after(timeout):
                await self._idle.wait()
        if not self._inflight:
            return
        logger.warning(
            "shutting down: %d request(s) still running after %.1f s are cancelled",
            len(self._inflight),
            timeout,
        )
        self._idle = anyio.Event()
        for scope in list(self._inflight):
            scope.cancel()
        # Their answers take a loop turn or two; a handler that ignores cancellation (work
        # in a thread) is not waited for beyond this.
        with anyio.move_on_after(_CANCELLED_GRACE):
            await self._idle.wait()

    def _header_problem(self, msg: dict[str, Any], headers: Mapping[str, str]) -> str | None:
        problem = header_problem(msg, headers)
        if problem is None and msg["method"] == "tools/call":
            params = msg.get("params")
            tool = params.get("name") if isinstance(params, dict) else None
            # A low-level factory (no hosting) marks no argument: only the standard
            # headers are checked for it.
            if isinstance(tool, str) and self.hosting is not None:
                marked = self.hosting.tool_header_params(tool)
                if marked:
                    problem = param_problem(msg, headers, marked)
        return problem


#: Seconds a cancelled request has, during a shutdown, to send its answer.
_CANCELLED_GRACE = 2.0


class _Tracked:
    """``send``, remembering how far the response got: whether its head went out and
    whether it is complete (what a request cancelled by a shutdown still owes)."""

    __slots__ = ("_send", "done", "started")

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self.done = False

    async def __call__(self, message: MutableMapping[str, Any]) -> None:
        await self._send(message)
        if message["type"] == "http.response.start":
            self.started = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self.done = True


def _shutdown_error(rid: Any) -> bytes:
    """The error answering a request the shutdown cancelled."""
    error = {
        "jsonrpc": "2.0",
        "id": rid,
        "error": {
            "code": INTERNAL_ERROR,
            "message": "Server shutting down: the request was cancelled before it completed; "
            "retry it",
        },
    }
    return orjson.dumps(error)


async def _shutdown_answer(out: _Tracked, rid: Any) -> None:
    """Answer a request the shutdown cancelled: its response (one JSON body, or the last
    event of the SSE stream already under way) is an error naming the cause, and the
    response is completed, so the client neither waits nor sees a broken stream."""
    if out.done:
        return
    body = _shutdown_error(rid)
    if out.started:
        await out({"type": "http.response.body", "body": encode_event(body), "more_body": False})
    else:
        await respond(out, 200, body, content_type=JSON)


def _principal_key(info: TransportInfo) -> str | None:
    """The budget key of a call: its verified principal's, or None (app-wide bound only)."""
    return info.principal.key if info.principal is not None else None


def client_key(info: TransportInfo) -> str | None:
    """The budget key of a listen stream: the verified principal's, else the client's
    address (``addr:`` and the host, which never equals a principal's key: those always
    hold a space), else None. Behind a reverse proxy the address is the proxy's unless the
    ASGI server takes it from ``X-Forwarded-For`` (uvicorn does for trusted proxies)."""
    if info.principal is not None:
        return str(info.principal.key)
    http = info.http
    client = http.client if http is not None else None
    return f"addr:{client[0]}" if client else None


def _refusal(rid: Any, listen: bool, bound: str, per_key: int | None) -> Answer:
    """The answer refusing a request past a budget (``bound``: ``"key"``, one client's, or
    ``"total"``, the app's)."""
    what = "subscriptions/listen streams" if listen else "requests in flight"
    whose = "of this caller" if bound == "key" else "on this server"
    if listen and bound == "key":
        whose += f" (at most {per_key} per client: its verified principal, else its address)"
    return Answer.error(
        429 if bound == "key" else 503,
        INTERNAL_ERROR,
        f"Too many {what} {whose}; retry later",
        id=rid,
        headers=[(b"retry-after", b"1")],
    )


class _NoTransport:
    """The transport of the session a low-level factory makes only for its kernel: it is
    never run, so nothing is ever sent or received."""

    async def send(self, message: Any, /, *, related_request_id: Any = None) -> None:
        raise anyio.ClosedResourceError

    async def receive(self) -> Any:
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        return None
