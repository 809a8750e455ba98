"""Raw HTTP/1.1 on real sockets against what ``serve_app`` serves (uvicorn's own protocol).

:class:`Launcher` runs the real ``serve_app`` in the test's own event loop on 127.0.0.1
port 0, and finds uvicorn's ``Server`` object (to read the port and to stop it).
:class:`Conn` is a raw TCP client that sends bytes as given and reads responses byte for
byte (checking their framing). Every wait is bounded (:data:`WAIT`); nothing sleeps to wait
for something.
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

#: Seconds any one wait of these tests may take.
WAIT = 5.0


#: The marks of the test modules using this harness: anyio, on asyncio only (uvicorn runs
#: on asyncio), each test bounded.
WIRE_MARKS = [
    pytest.mark.anyio,
    pytest.mark.parametrize("anyio_backend", ["asyncio"]),
    pytest.mark.timeout(60),
]


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
