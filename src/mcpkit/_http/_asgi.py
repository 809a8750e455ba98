"""Small ASGI helpers shared by the Streamable HTTP and legacy SSE apps (no framework)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

import anyio
import orjson

from .._backend import fail_after
from .._exceptions import HEADER_MISMATCH, INVALID_REQUEST

Scope = MutableMapping[str, Any]
ASGIMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[ASGIMessage]]
Send = Callable[[ASGIMessage], Awaitable[None]]

JSON = b"application/json"
EVENT_STREAM = b"text/event-stream"

SSE_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-type", EVENT_STREAM),
    (b"cache-control", b"no-cache, no-transform"),
    # Proxies such as nginx buffer responses unless told not to; SSE must flow.
    (b"x-accel-buffering", b"no"),
]


class BodyTooLarge(Exception):
    pass


class ClientGone(Exception):
    pass


#: The standard MCP request headers (lower-cased) and how the specification writes them;
#: with ``Mcp-Param-*``, the headers a request may carry once only.
MCP_HEADERS = {
    "mcp-protocol-version": "MCP-Protocol-Version",
    "mcp-method": "Mcp-Method",
    "mcp-name": "Mcp-Name",
    "mcp-session-id": "Mcp-Session-Id",
}
MCP_PARAM_PREFIX = "mcp-param-"


class Headers(dict[str, str]):
    """Request headers by lower-cased name (see :func:`header_map`)."""

    #: The first standard MCP header the request carried more than once (as the
    #: specification writes it; a ``Mcp-Param-*`` one as the client did), else None. A class
    #: default: set on the instance only for such a request (every request builds a map).
    repeated: str | None = None


def header_map(scope: Scope) -> Headers:
    """Request headers, names lower-cased; for repeated headers the values are joined.

    A standard MCP header (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``,
    ``Mcp-Param-*``, ``Mcp-Session-Id``) given twice is named in ``.repeated``: joined, two
    ``Mcp-Name`` values could match a body value the first one alone does not (a gateway
    reading one copy routes another request than the server serves), so such a request is
    refused (:func:`repeated_header_answer`), never compared.
    """
    out = Headers()
    for k, v in scope.get("headers", ()):
        name = k.decode("latin-1").lower()
        value = v.decode("latin-1")
        if name in out:
            _repeated(out, name, value, k.decode("latin-1"))
        else:
            out[name] = value
    return out


def text_header_map(pairs: Iterable[tuple[str, str]]) -> Headers:
    """:func:`header_map` of headers a server hands over as text (granian's RSGI)."""
    out = Headers()
    for given, value in pairs:
        name = given.lower()
        if name in out:
            _repeated(out, name, value, given)
        else:
            out[name] = value
    return out


def _repeated(out: Headers, name: str, value: str, given: str) -> None:
    """A header seen again: its values joined, a standard MCP one named in ``repeated``."""
    if out.repeated is None and (name in MCP_HEADERS or name.startswith(MCP_PARAM_PREFIX)):
        out.repeated = MCP_HEADERS.get(name) or given
    out[name] = f"{out[name]}, {value}"


def repeated_header_answer(headers: Headers, stateless_era: bool) -> Answer:
    """The ``400 Bad Request`` naming the standard MCP header ``headers`` repeats (its
    ``.repeated``): ``HeaderMismatch`` (-32020, a malformed standard header) for a request
    of the stateless era, ``Invalid Request`` (-32600) for the handshake revisions, which
    have no such code."""
    name = headers.repeated
    error = {
        "code": HEADER_MISMATCH if stateless_era else INVALID_REQUEST,
        "message": f"Bad Request: the {name} header appears more than once (send it once)",
        "data": {"header": name},
    }
    body = orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error})
    return Answer(400, body, content_type=JSON)


def accepts(accept: str | None, media: str) -> bool:
    """Whether an ``Accept`` header admits ``media`` (wildcards honoured, q=0 refused)."""
    if not accept:
        return False
    main = media.split("/", 1)[0]
    for part in accept.split(","):
        item, *params = (p.strip() for p in part.split(";"))
        item = item.lower()
        if any(p.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in params):
            continue
        if item in (media, "*/*", f"{main}/*"):
            return True
    return False


@functools.lru_cache(maxsize=64)
def accepts_json_and_sse(accept: str | None) -> bool:
    """Whether ``Accept`` admits both ``application/json`` and ``text/event-stream`` (what
    a Streamable HTTP POST must list). Cached: a client sends the same header each time,
    and parsing it twice per request showed in the profile; 64 entries bound the memory."""
    return accepts(accept, "application/json") and accepts(accept, "text/event-stream")


def media_type(headers: dict[str, str]) -> str:
    """The request's ``Content-Type`` without its parameters, lower-cased ("" if none)."""
    return headers.get("content-type", "").split(";", 1)[0].strip().lower()


def route_path(scope: Scope) -> str:
    """The path below the mount point (Starlette keeps the full path and sets root_path)."""
    path: str = scope.get("path", "/")
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path or "/"


def same_path(a: str, b: str) -> bool:
    return (a.rstrip("/") or "/") == (b.rstrip("/") or "/")


#: Seconds a request body may take to arrive in full (slowloris: a body at 1 byte/s).
BODY_TIMEOUT = 30.0


class BodyTimeout(Exception):
    """The request body did not arrive within the allowed time."""


#: A body over the limit is still read, and dropped, up to this many times the limit before
#: it is refused: answered while the client still sends, and then closed (a client that
#: asked for ``Connection: close``), the rest of the body makes the kernel reset the
#: connection, and the client may see the reset instead of the 413.
DISCARD_FACTOR = 2


async def read_body(receive: Receive, limit: int, timeout: float = BODY_TIMEOUT) -> bytes:
    """The whole request body, refusing (without buffering) anything over ``limit`` bytes
    (:class:`BodyTooLarge`, once the body ended or :data:`DISCARD_FACTOR` times ``limit`` was
    read), and anything not complete within ``timeout`` seconds (:class:`BodyTimeout`)."""
    try:
        async with fail_after(timeout):  # not anyio's: on every POST (see fail_after)
            return await _read_body(receive, limit)
    except TimeoutError:
        raise BodyTimeout from None


async def _read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            raise ClientGone
        chunk = msg.get("body", b"")
        size += len(chunk)
        more = msg.get("more_body", False)
        if size > limit:
            chunks.clear()  # read on and discarded (DISCARD_FACTOR), then refused
            if not more or size > DISCARD_FACTOR * limit:
                raise BodyTooLarge
            continue
        if chunk:
            chunks.append(chunk)
        if not more:
            return b"".join(chunks)


def error_body(code: int, message: str, id: Any = None) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


async def serve_lifespan(receive: Receive, send: Send) -> None:
    """Answer the ASGI lifespan protocol for an app with nothing to start or stop."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def respond(
    send: Send,
    status: int,
    body: bytes = b"",
    *,
    content_type: bytes | None = None,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    h = list(headers or ())
    if content_type is not None:
        h.append((b"content-type", content_type))
    h.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": h})
    await send({"type": "http.response.body", "body": body})


class Answer:
    """What an HTTP exchange is answered with (``serve_exchange``'s result): a status,
    headers and one body, or a stream.

    A one-body answer is ``status``, ``headers`` (``Content-Length`` is added when it is
    written) and ``body``. A streamed one has ``stream``: a coroutine function given the
    front end's ``send`` (ASGI messages: ``http.response.start``, then body chunks), which
    writes the whole response, its head included, because what that head says is known
    only once serving has begun (an SSE answer sent as one body when the request ends
    within 50 ms, else streamed; a stream refused before it started).

    Example::

        answer = Answer.error(404, INVALID_REQUEST, "Not Found")
        await answer.write(send)
    """

    __slots__ = ("body", "headers", "status", "stream")

    def __init__(
        self,
        status: int,
        body: bytes = b"",
        *,
        content_type: bytes | None = None,
        headers: list[tuple[bytes, bytes]] | None = None,
        stream: Callable[[Send], Awaitable[object]] | None = None,
    ) -> None:
        self.status = status
        self.body = body
        h = list(headers) if headers else []
        if content_type is not None:
            h.append((b"content-type", content_type))
        self.headers = h
        self.stream = stream

    @classmethod
    def streamed(cls, stream: Callable[[Send], Awaitable[object]]) -> Answer:
        """An answer written by ``stream(send)``, head included (see the class)."""
        return cls(0, stream=stream)

    @classmethod
    def error(
        cls,
        status: int,
        code: int,
        message: str,
        *,
        id: Any = None,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> Answer:
        """An HTTP error whose body is a JSON-RPC error response (``id`` null unless given)."""
        return cls(status, error_body(code, message, id), content_type=JSON, headers=headers)

    async def write(self, send: Send) -> None:
        """Send this answer through ``send`` (as :func:`respond` sends one body)."""
        if self.stream is not None:
            await self.stream(send)
            return
        body = self.body
        await send(
            {
                "type": "http.response.start",
                "status": self.status,
                "headers": [*self.headers, (b"content-length", b"%d" % len(body))],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def _nothing(send: Send) -> None:
    """The answer to a client that left: none."""


#: What a client that left before its answer was ready is answered: nothing.
NO_ANSWER = Answer(0, stream=_nothing)


async def respond_error(
    send: Send,
    status: int,
    code: int,
    message: str,
    *,
    id: Any = None,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """An HTTP error whose body is a JSON-RPC error response (``id`` null unless given)."""
    await respond(send, status, error_body(code, message, id), content_type=JSON, headers=headers)


async def cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    """Read the request's messages until the client disconnects, then cancel ``scope``.

    Run it beside whatever serves the request: a client that leaves ends the wait for it.
    """
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
    scope.cancel()
