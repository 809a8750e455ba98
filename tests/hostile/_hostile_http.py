"""A hostile HTTP server on 127.0.0.1 for the client's bounds: a real socket, requests read
as HTTP/1.1 (a head, a ``Content-Length`` body, keep-alive), each answered by a handler that
writes raw bytes through an :class:`Answer`, which counts what the client took and says
whether it hung up before the end (the client stopped reading and closed the connection).

An endless answer is capped (``cap`` bytes): on code that reads without limit the test then
ends, failing on what it asserts, instead of taking the machine's memory.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import orjson

MiB = 1024 * 1024


@dataclass
class Request:
    """One request as the server read it (header names lowercased)."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body) if self.body else None


class HungUp(Exception):
    """The client closed the connection while the server was still writing."""


@dataclass
class Answer:
    """One answer being written: bytes sent so far, and whether the client hung up."""

    stream: anyio.abc.SocketStream
    sent: int = 0
    hung_up: bool = False
    finished: anyio.Event = field(default_factory=anyio.Event)

    async def send(self, data: bytes) -> None:
        try:
            await self.stream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as e:
            self.hung_up = True
            raise HungUp from e
        self.sent += len(data)

    async def endless(self, head: bytes, piece: bytes, cap: int, *, tail: bytes = b"") -> None:
        """``head`` (a chunked answer's), then ``piece`` as chunks until the client hangs up
        or ``cap`` bytes went out; then ``tail`` and the body's end."""
        await self.send(head)
        chunk = b"%x\r\n%s\r\n" % (len(piece), piece)
        while self.sent < cap:
            await self.send(chunk)
        if tail:
            await self.send(b"%x\r\n%s\r\n" % (len(tail), tail))
        await self.send(b"0\r\n\r\n")


Handler = Callable[[Request, Answer], Awaitable[None]]


@dataclass
class HostileServer:
    """What the server saw and did: every request, every answer (in order)."""

    port: int
    requests: list[Request] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


async def _fill(stream: anyio.abc.SocketStream, buf: bytearray, length: int) -> bool:
    """Read until ``buf`` holds ``length`` bytes; False if the client hung up first."""
    try:
        while len(buf) < length:
            buf += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
        return False
    return True


async def _read_request(stream: anyio.abc.SocketStream, buf: bytearray) -> Request | None:
    while b"\r\n\r\n" not in buf:
        try:
            more = await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            return None
        buf += more
    end = buf.index(b"\r\n\r\n")
    lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
    del buf[: end + 4]
    method, target, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    if not await _fill(stream, buf, length):
        return None
    body = bytes(buf[:length])
    del buf[:length]
    return Request(method, target, headers, body)


@asynccontextmanager
async def hostile_server(handler: Handler) -> AsyncIterator[HostileServer]:
    """Serve on 127.0.0.1 (a free port) while the block runs."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    server = HostileServer(int(listener.extra(anyio.abc.SocketAttribute.local_port)))

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            buf = bytearray()
            while (request := await _read_request(stream, buf)) is not None:
                server.requests.append(request)
                answer = Answer(stream)
                server.answers.append(answer)
                try:
                    await handler(request, answer)
                except HungUp:
                    return
                finally:
                    answer.finished.set()

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        try:
            yield server
        finally:
            tg.cancel_scope.cancel()


def response(
    status: int, body: bytes, content_type: str = "application/json", **headers: str
) -> bytes:
    """A whole answer with a ``Content-Length``; ``headers`` with ``_`` for ``-``."""
    extra = "".join(f"{k.replace('_', '-')}: {v}\r\n" for k, v in headers.items())
    return (
        f"HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\n"
        f"content-length: {len(body)}\r\n{extra}\r\n"
    ).encode() + body


def chunked_head(status: int, content_type: str, **headers: str) -> bytes:
    """The head of a chunked answer."""
    extra = "".join(f"{k.replace('_', '-')}: {v}\r\n" for k, v in headers.items())
    return (
        f"HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\n"
        f"transfer-encoding: chunked\r\n{extra}\r\n"
    ).encode()


def initialize_result(request: Request) -> bytes:
    """The JSON body answering an ``initialize`` request with the revision it asked for."""
    msg = request.json()
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": msg["id"],
            "result": {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {},
                "serverInfo": {"name": "hostile", "version": "1"},
            },
        }
    )


def gzip_of(prefix: bytes, padding: int, suffix: bytes = b"") -> bytes:
    """``prefix``, ``padding`` spaces, ``suffix``, gzip-compressed without ever holding the
    inflated text (a small body that inflates to ``padding`` bytes and more)."""
    z = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b" " * MiB
    out = [z.compress(prefix), *(z.compress(block) for _ in range(padding // MiB))]
    out.append(z.compress(b" " * (padding % MiB)))
    out.append(z.compress(suffix))
    out.append(z.flush())
    return b"".join(out)
