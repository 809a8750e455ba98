"""The harness of the tests of mcpkit's HTTP/1.1 server protocol (``mcpkit._http._h1server``).

:class:`Launcher` runs the real ``serve_app`` (uvicorn running our protocol) in the test's
own event loop on 127.0.0.1 port 0, and finds uvicorn's ``Server`` object (to read the port
and to stop it). :class:`Conn` is a raw TCP client that reads responses byte for byte
(checking their framing); :class:`PlainApp` is a small ASGI app whose paths each behave in
one way. Every wait is bounded (:data:`WAIT`); nothing sleeps to wait for something.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import orjson
import pytest
import uvicorn
from anyio.abc import SocketStream

from mcpkit._app._serve import serve_app
from mcpkit._http import _h1server
from mcpkit._http._asgi import ASGIMessage, Receive, Scope, Send

#: Seconds any one wait of these tests may take.
WAIT = 5.0


#: The marks of every test module of our HTTP protocol: anyio, on asyncio only (uvicorn
#: runs on asyncio), each test bounded.
H1_MARKS = [
    pytest.mark.anyio,
    pytest.mark.parametrize("anyio_backend", ["asyncio"]),
    pytest.mark.timeout(60),
]


class Log:
    """What an app saw, in order; a test waits (bounded) until a record is in."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._changed = anyio.Event()

    def add(self, item: Any) -> None:
        self.items.append(item)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, item: Any) -> None:
        with bounded(lambda: f"{item!r} logged; the log: {self.items!r}"):
            while item not in self.items:
                await self._changed.wait()


@contextmanager
def bounded(what: Callable[[], str]) -> Iterator[None]:
    """At most :data:`WAIT` seconds; past it, an AssertionError saying what did not come
    (``what()``, called then)."""
    try:
        with anyio.fail_after(WAIT):
            yield
    except TimeoutError:
        raise AssertionError(f"not within {WAIT} s: {what()}") from None


# ------------------------------------------------------------------ the server


class Running:
    """A server started by :meth:`Launcher.serve`; ``stopped`` is set once ``serve_app``
    returned."""

    def __init__(self, server: uvicorn.Server, stopped: anyio.Event) -> None:
        self.server = server
        self.stopped = stopped
        sockets = server.servers[0].sockets
        self.port = int(sockets[0].getsockname()[1])
        self.host = f"127.0.0.1:{self.port}"

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[Conn]:
        with anyio.fail_after(WAIT):
            stream = await anyio.connect_tcp("127.0.0.1", self.port)
        async with stream:
            yield Conn(stream)


class Launcher:
    """Starts ``serve_app`` in the test's loop; ``uvicorn.Server.startup`` is hooked to find
    the server object (``serve_app`` makes it itself)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._started: list[uvicorn.Server] = []
        self._up: anyio.Event | None = None
        original = uvicorn.Server.startup
        launcher = self

        async def startup(
            server: uvicorn.Server, sockets: list[socket.socket] | None = None
        ) -> None:
            try:
                await original(server, sockets)
            finally:
                launcher._started.append(server)
                if launcher._up is not None:
                    launcher._up.set()

        monkeypatch.setattr(uvicorn.Server, "startup", startup)

    @asynccontextmanager
    async def serve(self, app: Any, **options: Any) -> AsyncIterator[Running]:
        """``serve_app(app, host="127.0.0.1", port=0, **options)`` until the block ends
        (then stopped as SIGTERM would, bounded)."""
        self._up = up = anyio.Event()
        stopped = anyio.Event()

        async def run() -> None:
            try:
                await serve_app(app, host="127.0.0.1", port=0, **options)
            finally:
                stopped.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            with anyio.fail_after(WAIT):
                await up.wait()
            server = self._started.pop()
            assert server.started, "uvicorn did not start"
            try:
                yield Running(server, stopped)
            finally:
                server.should_exit = True
                with anyio.fail_after(2 * WAIT):
                    await stopped.wait()
                # A connection uvicorn's shutdown could not end (its protocol never saw the
                # client leave) is closed here, so that it fails this test, not whichever
                # test the garbage collector runs in.
                left = list(server.server_state.connections)
                for protocol in left:
                    protocol.transport.close()
                    server.server_state.connections.discard(protocol)
        assert not left, f"{len(left)} connection(s) still open after the server stopped"


# ------------------------------------------------------------------ the client


class Response:
    """One response as read off the wire: ``raw`` its exact bytes, ``body`` its content
    (chunks joined), ``chunks`` the chunk sizes when chunked."""

    def __init__(
        self,
        status: int,
        reason: str,
        headers: list[tuple[str, str]],
        body: bytes,
        raw: bytes,
        chunks: list[int] | None,
    ) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.raw = raw
        self.chunks = chunks

    def all(self, name: str) -> list[str]:
        return [v for n, v in self.headers if n == name]

    def get(self, name: str) -> str | None:
        values = self.all(name)
        assert len(values) <= 1, f"{name} given {len(values)} times: {self.raw!r}"
        return values[0] if values else None

    def json(self) -> Any:
        return orjson.loads(self.body)

    def __repr__(self) -> str:
        return f"<Response {self.raw[:600]!r}>"


def request(
    method: str,
    target: str = "/echo",
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    version: str = "1.1",
    host: str = "127.0.0.1",
) -> bytes:
    """A request's bytes: Host, the headers, Content-Length when there is a body."""
    lines = [f"{method} {target} HTTP/{version}", f"host: {host}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body and not any(
        k.lower() in ("content-length", "transfer-encoding") for k in headers or {}
    ):
        lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class Conn:
    """A raw client connection: what is sent is sent as given; responses are read strictly
    (a framing error fails the test)."""

    def __init__(self, stream: SocketStream) -> None:
        self.stream = stream
        self.buf = bytearray()
        self.eof = False
        self.reset = False

    async def send(self, data: bytes) -> None:
        await self.stream.send(data)

    def _seen(self) -> str:
        """What was received and not consumed (for failure messages)."""
        return repr(bytes(self.buf[:600])) + (" then EOF" if self.eof else "")

    async def _more(self) -> bool:
        if self.eof:
            return False
        try:
            data = await self.stream.receive()
        except anyio.EndOfStream:
            self.eof = True
            return False
        except (anyio.BrokenResourceError, ConnectionResetError):
            self.eof = self.reset = True
            return False
        self.buf += data
        return True

    async def _until(self, sep: bytes) -> bytes:
        while (at := self.buf.find(sep)) < 0:
            if not await self._more():
                raise AssertionError(f"closed before {sep!r}; got {bytes(self.buf)!r}")
        out = bytes(self.buf[: at + len(sep)])
        del self.buf[: at + len(sep)]
        return out

    async def _exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not await self._more():
                raise AssertionError(f"closed {n - len(self.buf)} bytes short: {bytes(self.buf)!r}")
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    async def response(self, method: str = "GET") -> Response:
        """The next response (an interim 1xx one too), framed as RFC 9112 says."""
        with bounded(lambda: f"a response; received: {self._seen()}"):
            head = await self._until(b"\r\n\r\n")
            status_line, *lines = head[:-4].decode("latin-1").split("\r\n")
            version, code, reason = ([*status_line.split(" ", 2), ""])[:3]
            assert version == "HTTP/1.1", head
            status = int(code)
            headers = []
            for line in lines:
                name, sep, value = line.partition(":")
                assert sep and name == name.strip() and name, f"bad header line {line!r}"
                headers.append((name.lower(), value.strip(" \t")))
            names = [n for n, _ in headers]
            raw = bytearray(head)
            chunks: list[int] | None = None
            if method == "HEAD" or status < 200 or status in (204, 304):
                body = b""
            elif "transfer-encoding" in names:
                assert dict(headers)["transfer-encoding"] == "chunked", head
                assert "content-length" not in names, head
                chunks = []
                parts = []
                while True:
                    size_line = await self._until(b"\r\n")
                    raw += size_line
                    size = int(size_line[:-2].split(b";")[0], 16)
                    if size == 0:
                        raw += await self._until(b"\r\n")
                        assert raw.endswith(b"0\r\n\r\n"), raw[-40:]
                        break
                    chunks.append(size)
                    data = await self._exact(size + 2)
                    assert data.endswith(b"\r\n"), f"chunk not ended by CRLF: {data[-10:]!r}"
                    raw += data
                    parts.append(data[:-2])
                body = b"".join(parts)
            elif "content-length" in names:
                body = await self._exact(int(dict(headers)["content-length"]))
                raw += body
            else:  # close-delimited
                while await self._more():
                    pass
                body = bytes(self.buf)
                self.buf.clear()
                raw += body
            return Response(status, reason, headers, body, bytes(raw), chunks)

    async def until(self, sep: bytes) -> bytes:
        """The bytes up to and including ``sep`` (bounded)."""
        with bounded(lambda: f"{sep!r}; received: {self._seen()}"):
            return await self._until(sep)

    async def rest(self) -> bytes:
        """Every byte up to the server's close (bounded)."""
        with bounded(lambda: f"the server closing; received: {self._seen()}"):
            while await self._more():
                pass
        out = bytes(self.buf)
        self.buf.clear()
        return out

    async def assert_closed(self) -> None:
        """The server closes the connection, sending nothing more."""
        extra = await self.rest()
        assert extra == b"", f"bytes after the response: {extra!r}"

    async def still_open(self, host: str = "127.0.0.1") -> None:
        """The connection serves another request."""
        await self.send(request("POST", "/echo", b"again", host=host))
        r = await self.response()
        assert (r.status, r.body) == (200, b"POST /echo|again"), r


# ------------------------------------------------------------------ the writes


class Writes:
    """Every ``transport.write`` of the connections of our protocol, in order
    (:func:`counting_writes`)."""

    def __init__(self) -> None:
        self.all: list[bytes] = []


@contextmanager
def counting_writes(monkeypatch: pytest.MonkeyPatch) -> Iterator[Writes]:
    writes = Writes()
    original = _h1server.H1Protocol.connection_made

    class Recording:
        def __init__(self, transport: Any) -> None:
            self._transport = transport

        def write(self, data: bytes) -> None:
            writes.all.append(bytes(data))
            self._transport.write(data)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._transport, name)

    def made(self: _h1server.H1Protocol, transport: Any) -> None:
        original(self, transport)
        self.transport = Recording(transport)  # type: ignore[assignment]

    monkeypatch.setattr(_h1server.H1Protocol, "connection_made", made)
    yield writes


# ------------------------------------------------------------------ the ASGI app


async def read_body(receive: Receive, log: Log | None = None) -> bytes:
    body = b""
    while True:
        message = await receive()
        assert message["type"] == "http.request", message
        chunk: bytes = message.get("body", b"")
        if log is not None:
            log.add(("part", chunk))
        body += chunk
        if not message.get("more_body", False):
            return body


def start(status: int = 200, headers: list[tuple[bytes, bytes]] | None = None) -> ASGIMessage:
    return {
        "type": "http.response.start",
        "status": status,
        "headers": headers if headers is not None else [(b"content-type", b"text/plain")],
    }


class PlainApp:
    """A plain ASGI app (no lifespan: serve it with ``lifespan="off"``); by path:

    ``/echo``: reads the body (each message logged as ``("part", bytes)``), then answers
    ``METHOD PATH|BODY`` in one body message without a Content-Length;
    ``/static``: ``static body`` with its Content-Length, without reading the request;
    ``/whole``: ``whole body`` in one message, no Content-Length;
    ``/stream``: ``one``, ``two``, ``three`` in separate ``more_body`` messages;
    ``/length``: ``abcde`` with its Content-Length, in two messages;
    ``/json``: ``{"ok": true}`` with its Content-Length;
    ``/hold``: logs ``"held"``, waits for ``release``, then answers ``released``;
    ``/late-body``: starts a response without a length, logs ``"started"``, waits for
    ``release``, then sends ``late`` as its body;
    ``/after-body``: reads the body, logs ``"read"``, then logs what ``receive`` gives next;
    ``/raise-before``, ``/raise-after`` (after a first body part), ``/no-response``;
    ``/bad-header``, ``/empty-name``: a response header that must not go out.
    Anything else: 404. Every scope is kept in ``scopes``.
    """

    def __init__(self) -> None:
        self.log = Log()
        self.release = anyio.Event()
        self.scopes: list[Scope] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http", scope
        self.scopes.append(scope)
        path = scope["path"]
        if path == "/echo":
            body = await read_body(receive, self.log)
            await send(start())
            out = f"{scope['method']} {path}|".encode() + body
            await send({"type": "http.response.body", "body": out})
        elif path == "/static":
            await send(start(200, [(b"content-type", b"text/plain"), (b"content-length", b"11")]))
            await send({"type": "http.response.body", "body": b"static body"})
        elif path == "/whole":
            await send(start())
            await send({"type": "http.response.body", "body": b"whole body"})
        elif path == "/stream":
            await send(start())
            for part in (b"one", b"two", b"three"):
                await send({"type": "http.response.body", "body": part, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        elif path == "/length":
            await send(start(200, [(b"content-length", b"5")]))
            await send({"type": "http.response.body", "body": b"ab", "more_body": True})
            await send({"type": "http.response.body", "body": b"cde"})
        elif path == "/json":
            headers = [(b"content-type", b"application/json"), (b"content-length", b"12")]
            await send(start(200, headers))
            await send({"type": "http.response.body", "body": b'{"ok": true}'})
        elif path == "/hold":
            self.log.add("held")
            await self.release.wait()
            await send(start())
            await send({"type": "http.response.body", "body": b"released"})
        elif path == "/late-body":
            await send(start())
            self.log.add("started")
            await self.release.wait()
            await send({"type": "http.response.body", "body": b"late"})
        elif path == "/after-body":
            await read_body(receive)
            self.log.add("read")
            message = await receive()
            self.log.add(message["type"])
        elif path == "/raise-before":
            raise RuntimeError("the app failed before answering")
        elif path == "/raise-after":
            await send(start())
            await send({"type": "http.response.body", "body": b"partial", "more_body": True})
            raise RuntimeError("the app failed mid-response")
        elif path == "/no-response":
            await read_body(receive)
        elif path in ("/bad-header", "/empty-name"):
            await read_body(receive)
            name, value = (
                (b"x-evil", b"a\r\nset-cookie: pwned=1")
                if path == "/bad-header"
                else (b"", b"nameless")
            )
            await send(start(200, [(b"content-type", b"text/plain"), (name, value)]))
            await send({"type": "http.response.body", "body": b"should not be seen"})
        else:
            await send(start(404))
            await send({"type": "http.response.body", "body": b"no such path"})
