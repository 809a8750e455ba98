"""One request and its response on mcpkit's HTTP/1.1 connection protocol (``_h1server``),
and the few whole responses the protocol writes on its own (400, 408, 431, 500, 503)."""

from __future__ import annotations

import asyncio
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Final

from ._asgi import ASGIMessage, Scope

if TYPE_CHECKING:
    from ._h1server import H1Protocol


def status_line(status: int) -> bytes:
    try:
        reason = HTTPStatus(status).phrase.encode()
    except ValueError:
        reason = b""
    return b"HTTP/1.1 %d %s\r\n" % (status, reason)


STATUS: Final = {s: status_line(s) for s in range(100, 600)}


def plain(status: int, text: bytes) -> bytes:
    """A whole response with a short text body, the connection's last (what the protocol
    itself answers)."""
    head = b"content-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    return b"%s%scontent-length: %d\r\n\r\n%s" % (STATUS[status], head, len(text), text)


class Cycle:
    """One request and its response.

    No ``__slots__``: the defaults are class attributes, so a new request sets only what it
    has of its own (one is made per request; 20 assignments were a microsecond of it).
    """

    target = b""
    #: The response head the app started, written with the first body bytes.
    pending: Any = None
    buffered = 0
    complete = False
    #: The app has been given the end of the body (``more_body`` False, or the direct way
    #: in took the body): what ``receive`` says next is the disconnect.
    delivered = False
    keep_alive = True
    expect_continue = False
    forwarded = False  # an X-Forwarded-* or Forwarded header came
    continue_sent = False
    head_only = False
    disconnected = False
    #: The response: head sent, whole (more_body False seen), its status.
    started = False
    done = False
    status = 0
    #: The response body's framing: chunked, or bytes left of a Content-Length (None:
    #: neither, the body ends with the connection).
    chunked = False
    length: int | None = None
    #: The app waiting in ``receive`` for body bytes or the disconnect.
    waiter: asyncio.Future[None] | None = None
    #: The task serving it.
    task: asyncio.Task[None] | None = None

    def __init__(self, protocol: H1Protocol) -> None:
        self.protocol = protocol
        self.headers: list[tuple[bytes, bytes]] = []
        self.scope: Scope = {}
        self.body: list[bytes] = []

    def joined_body(self) -> bytes:
        """What has arrived of the body and was not given yet, kept (as one piece)."""
        if len(self.body) != 1:
            self.body[:] = [b"".join(self.body)]
        return self.body[0]

    def take_body(self) -> bytes:
        """:meth:`joined_body`, now given (all of it, once complete: then ``delivered``)."""
        body = self.joined_body()
        self.body.clear()
        self.buffered = 0
        self.delivered = self.complete
        return body

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # The request's ASGI ``receive`` and ``send``: bound methods (no closure made per
    # request), which do the common case themselves (one coroutine frame per message).

    async def receive(self) -> ASGIMessage:
        """The body, then (once it is all read, or the response complete) the disconnect."""
        if self.complete and not self.delivered and not self.disconnected:
            return {"type": "http.request", "body": self.take_body(), "more_body": False}
        return await self.protocol.receive(self)

    async def send(self, message: ASGIMessage) -> None:
        """The head is held until the first body bytes, so a response sent whole goes out
        in one write."""
        protocol = self.protocol
        if message["type"] == "http.response.start":
            protocol.start(self, message)
            return
        if protocol.writable is not None:
            await protocol.writable.wait()
        protocol.body(self, message)


def declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The body length a request's headers declare: 0 without one, None when chunked (the
    parser has already refused conflicting or malformed lengths)."""
    length = 0
    for name, value in headers:
        if name == b"transfer-encoding":
            return None
        if name == b"content-length":
            length = int(value)
    return length
