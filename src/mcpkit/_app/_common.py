"""What the Streamable HTTP app's parts share: wire constants, the session lookup of a
request, and the waits that bound how long a response is held back."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio

from .._exceptions import INVALID_REQUEST
from .._http._asgi import (
    DISCARD_FACTOR,
    Answer,
    BodyTimeout,
    BodyTooLarge,
    Receive,
    Send,
    cancel_on_disconnect,
    read_body,
    respond_error,
)
from .._http._security import HostOriginPolicy
from ..types._revisions import SUPPORTED_PROTOCOL_VERSIONS
from ._options import HTTPAppOptions
from ._registry import SessionEntry, SessionRegistry, is_session_id

logger = logging.getLogger("mcpkit.http")

#: Revision assumed when a request carries no MCP-Protocol-Version header (spec).
DEFAULT_HEADER_VERSION = "2025-03-26"
#: First revision whose clients understand the empty priming event.
PRIMING_SINCE = "2025-11-25"
#: The only revision whose Streamable HTTP allowed JSON-RPC batches in a POST.
BATCH_REVISION = "2025-03-26"
SESSION_HEADER = b"mcp-session-id"


async def host_origin_refused(
    policy: HostOriginPolicy, headers: dict[str, str], send: Send
) -> bool:
    """Answer a request whose ``Host`` (421) or ``Origin`` (403) the policy refuses (DNS
    rebinding protection, both HTTP apps); True when it was answered."""
    refused = host_origin_problem(policy, headers)
    if refused is None:
        return False
    await respond_error(send, refused[0], INVALID_REQUEST, refused[1])
    return True


def host_origin_problem(
    policy: HostOriginPolicy, headers: dict[str, str]
) -> tuple[int, str] | None:
    """Why the policy refuses a request's ``Host`` (421) or ``Origin`` (403), or None."""
    if not policy.host_ok(headers.get("host")):
        return 421, "Misdirected Request: Host header not allowed"
    if not policy.origin_ok(headers.get("origin")):
        return 403, "Forbidden: Origin not allowed"
    return None


async def read_post_body(
    headers: dict[str, str], receive: Receive, send: Send, limit: int, timeout: float
) -> bytes | None:
    """A POST's whole body; None once the refusal of :func:`post_body` was answered."""
    body = await post_body(headers, receive, limit, timeout)
    if isinstance(body, Answer):
        await body.write(send)
        return None
    return body


async def post_body(
    headers: dict[str, str], receive: Receive, limit: int, timeout: float
) -> bytes | Answer:
    """A POST's whole body, or the answer refusing it: 413 (over ``limit``; refused before
    reading when the size declared is over ``DISCARD_FACTOR`` times it, else once read and
    dropped, so that a client closing after its request reads the 413) or 408 (slower than
    ``timeout``: slowloris)."""
    too_large = f"Payload Too Large: the limit is {limit} bytes"
    length = headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > DISCARD_FACTOR * limit:
        return Answer.error(413, INVALID_REQUEST, too_large)
    try:
        return await read_body(receive, limit, timeout)
    except BodyTooLarge:
        return Answer.error(413, INVALID_REQUEST, too_large)
    except BodyTimeout:
        return Answer.error(408, INVALID_REQUEST, "Request Timeout: the body is too slow")


async def serve_lifespan(
    receive: Receive, send: Send, hosting: Callable[[], AbstractAsyncContextManager[Any]]
) -> None:
    """Answer the ASGI lifespan protocol, running the app inside ``hosting()`` meanwhile.

    A failure is reported as the startup's or the shutdown's, as it happened.
    """
    if (await receive())["type"] != "lifespan.startup":
        return
    started = False
    try:
        async with hosting():
            await send({"type": "lifespan.startup.complete"})
            started = True
            while (await receive())["type"] != "lifespan.shutdown":
                pass
    except Exception as e:
        # The server's own lifespan failed: the ASGI server reports it and stops.
        logger.exception("the MCP app's lifespan failed")
        failed = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
        await send({"type": failed, "message": f"{type(e).__name__}: {e}"})
        return
    await send({"type": "lifespan.shutdown.complete"})


def allow_header(options: HTTPAppOptions) -> bytes:
    """The ``Allow`` header of a 405: the methods this app's endpoint answers."""
    if options.sessionless:
        return b"POST"
    return b"GET, POST, DELETE" if options.get_stream else b"POST, DELETE"


async def session_for(
    registry: SessionRegistry, headers: dict[str, str], send: Send
) -> SessionEntry | None:
    """The session a batch POST names; None once the refusal of :func:`named_session`
    was answered."""
    entry = await named_session(registry, headers)
    if isinstance(entry, Answer):
        await entry.write(send)
        return None
    return entry


async def named_session(
    registry: SessionRegistry, headers: dict[str, str]
) -> SessionEntry | Answer:
    """The session a GET, DELETE or batch POST names, or the answer refusing the request
    (no ``Mcp-Session-Id``, a revision we do not serve, an unknown session)."""
    sid = headers.get("mcp-session-id")
    if sid is None:
        return Answer.error(400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header")
    version = headers.get("mcp-protocol-version")
    if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
        return Answer.error(
            400, INVALID_REQUEST, f"Bad Request: unsupported MCP-Protocol-Version {version!r}"
        )
    entry = await lookup_session(registry, sid, headers)
    if entry is None:
        return Answer.error(404, INVALID_REQUEST, "Not Found: unknown or terminated session")
    return entry


async def lookup_session(
    registry: SessionRegistry, sid: str, headers: dict[str, str]
) -> SessionEntry | None:
    """The session ``sid`` names, looked up only when ``sid`` has the shape of an id we
    make: anything else a client sends is an unknown session, and never reaches the
    registry (where it could name another key of a shared store)."""
    return await registry.lookup(sid, headers) if is_session_id(sid) else None


#: How long a request may take to be answered in one piece (then it is streamed, or
#: watched for a client disconnect by a task of its own).
_QUICK_ANSWER = 0.02


async def settled(event: anyio.Event) -> bool:
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


async def wait_or_disconnect(event: anyio.Event, receive: Receive) -> bool:
    """Wait for ``event``; False if the client disconnected first."""
    done = False
    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_on_disconnect, receive, tg.cancel_scope)
        await event.wait()
        done = True
        tg.cancel_scope.cancel()
    return done


def check_message(msg: Any) -> str | None:
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
