"""A connection whose client pipelines requests is closed after a few: what bounds the
memory a client that pipelines and never reads can make a worker hold.

HTTP/1.1 lets a client send requests without waiting for the answers. uvicorn (both its
parsers) serves one request of a connection at a time and pauses reading from it while an
answer is pending, but each ASGI ``receive()`` resumes reading: the one that reads the body,
and the one that waits for the client leaving (an answer that takes a while is watched).
When the request then waits on anything (a sync tool's worker thread, I/O), the event loop
reads the connection again and, for a pipelining client, up to 256 KiB (asyncio's read
size) more requests are buffered; each answer consumes one. Answers keep completing until
the kernel's socket buffers are full, hundreds of them for small answers, so one
connection that never reads made a worker hold 238 MiB (4 KB answers, measured).

A pipelined request is told apart exactly: uvicorn starts it inside the last ``send()`` of
the previous answer on its connection (it was already read), so its task runs before a
callback scheduled after that ``send()`` returned, while a request the client sent after
reading its answer has to be read first, loop iterations later. After
:data:`PIPELINED_IN_A_ROW` pipelined requests in a row, the next answer carries
``Connection: close``: the server stops reading, sends it, and closes the connection.
What one connection can make a worker hold is then ~2.5 MiB on uvicorn's h11 protocol and
up to ~31 MiB on its httptools one, which turns each read into request objects at once
(~1.6 KiB per small request; figures in docs/deploy.md). A client that does not pipeline
never meets the bound (no HTTP client in common use pipelines); one that pipelines and
reads its answers sends the rest again on a new connection, as HTTP/1.1 lets a server ask.

Counted on asyncio, for HTTP/1.x connections with a client address and port (a Unix socket
or a proxy's ``X-Forwarded-For`` without a port is not told apart from its neighbours);
HTTP/2 and later have flow control per stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .._backend import soon_on_asyncio
from .._http._asgi import ASGIMessage, Scope, Send

#: Pipelined requests in a row one connection is served before its next answer closes it.
PIPELINED_IN_A_ROW = 4

#: Connections whose counts are kept (the oldest forgotten first): the ASGI app never hears
#: that a connection closed.
KEPT_CONNECTIONS = 4096

_CLOSE = (b"connection", b"close")

Connection = tuple[Any, int]


class PipelinedRequests:
    """Tells the pipelined requests of each HTTP/1.x connection, and closes a connection
    after :attr:`limit` of them in a row (see the module).

    Example (what the ASGI app does with each request)::

        pipelined = PipelinedRequests()
        conn = pipelined.begin(scope)  # before the request's first await
        answer = ...  # serve it
        await pipelined.write(conn, send, partial(write_answer, answer))
    """

    __slots__ = ("_answering", "_in_a_row", "_serial", "kept", "limit")

    def __init__(self, limit: int = PIPELINED_IN_A_ROW, kept: int = KEPT_CONNECTIONS) -> None:
        if limit < 1 or kept < 1:
            raise ValueError("limit and kept are at least 1")
        self.limit = limit
        self.kept = kept
        #: Connections whose answer is being written, until just after its last send (by
        #: the serial number of that answer: the next request may begin writing its own
        #: before the previous one's entry is removed).
        self._answering: dict[Connection, int] = {}
        self._serial = 0
        #: Pipelined requests in a row, per connection.
        self._in_a_row: dict[Connection, int] = {}

    def begin(self, scope: Scope) -> Connection | None:
        """Note a request's start (call it before the request's first ``await``); its
        connection, or None when it is not told apart (see the module)."""
        client = scope.get("client")
        if not client or not client[1] or scope.get("http_version", "1.1") not in ("1.1", "1.0"):
            return None
        conn: Connection = (client[0], client[1])
        counts = self._in_a_row
        if conn in self._answering:  # started inside the previous answer's last send
            n = counts.get(conn)
            if n is None and len(counts) >= self.kept:
                del counts[next(iter(counts))]
            counts[conn] = (n or 0) + 1
        else:
            counts.pop(conn, None)
        return conn

    async def write(
        self, conn: Connection | None, send: Send, writer: Callable[[Send], Awaitable[object]]
    ) -> None:
        """``writer(send)``: the answer of a request that began on ``conn`` (None: a
        connection not told apart), written through :meth:`sender`'s ``send``, marked while
        it is written and until :meth:`end`."""
        if conn is None:
            await writer(send)
            return
        send, serial = self.sender(conn, send)
        try:
            await writer(send)
        finally:
            self.end(conn, serial)

    def sender(self, conn: Connection, send: Send) -> tuple[Send, int]:
        """The ``send`` to write the answer of a request on ``conn`` with (``send`` itself,
        or, past the bound, one that adds ``Connection: close`` to the response start), and
        the answer's serial number for :meth:`end`."""
        self._serial = serial = self._serial + 1
        self._answering[conn] = serial
        if self._in_a_row.get(conn, 0) < self.limit:
            return send, serial
        del self._in_a_row[conn]
        return _Closing(send), serial

    def end(self, conn: Connection, serial: int) -> None:
        """After the answer ``serial`` on ``conn`` is written (also when writing it failed)."""
        # Later than any task the server started inside the last send (scheduled before);
        # on trio at once: nothing is told apart there.
        soon_on_asyncio(self._answered, conn, serial)

    def _answered(self, conn: Connection, serial: int) -> None:
        if self._answering.get(conn) == serial:
            del self._answering[conn]

    def in_a_row(self, conn: Connection) -> int:
        """Pipelined requests in a row on ``conn`` so far."""
        return self._in_a_row.get(conn, 0)


class _Closing:
    __slots__ = ("_send",)

    def __init__(self, send: Send) -> None:
        self._send = send

    async def __call__(self, message: ASGIMessage) -> None:
        if message["type"] == "http.response.start":
            headers = [h for h in message.get("headers", ()) if h[0].lower() != b"connection"]
            message = {**message, "headers": [*headers, _CLOSE]}
        await self._send(message)
