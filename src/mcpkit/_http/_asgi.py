"""Small ASGI helpers shared by the Streamable HTTP and legacy SSE apps (no framework)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import orjson

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


def header_map(scope: Scope) -> dict[str, str]:
    """Request headers, names lower-cased; for repeated headers the values are joined."""
    out: dict[str, str] = {}
    for k, v in scope.get("headers", ()):
        name = k.decode("latin-1").lower()
        value = v.decode("latin-1")
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


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


async def read_body(receive: Receive, limit: int, timeout: float = BODY_TIMEOUT) -> bytes:
    """The whole request body, refusing (without buffering) anything over ``limit`` bytes,
    and anything not complete within ``timeout`` seconds (:class:`BodyTimeout`)."""
    try:
        with anyio.fail_after(timeout):
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
        if size > limit:
            raise BodyTooLarge
        if chunk:
            chunks.append(chunk)
        if not msg.get("more_body", False):
            return b"".join(chunks)


def error_body(code: int, message: str, id: Any = None) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


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
