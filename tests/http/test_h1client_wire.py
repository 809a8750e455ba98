"""Our HTTP client (``HTTP1Client``: httptools' or h11's framing over anyio's streams) against servers
that answer with bytes written by hand: the framing rules (RFC 9112), the connection's
reuse, and the refusals (a malicious or broken server must not smuggle a response or grow
memory without bound; a request header must not smuggle a line). Also its connections:
IPv6/IPv4 for a host name, a large body, a reset, uvloop. Every test runs with both
response parsers (``_h1parse``: httptools' llhttp where installed, h11 on a bare install).
"""

from __future__ import annotations

import socket
import struct
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc
import pytest

import mcpkit
from mcpkit._http import _h1client, _h1parse
from mcpkit._http._h1client import MAX_HEAD, HTTP1Client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


@pytest.fixture(autouse=True, params=["llhttp", "h11"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The same tests for both implementations of the seam (picked once at import)."""
    if request.param == "llhttp":
        pytest.importorskip("httptools")
        monkeypatch.setattr(_h1client, "new_exchange", _h1parse.LlhttpExchange)
    else:
        monkeypatch.setattr(_h1client, "new_exchange", _h1parse.H11Exchange)
    return str(request.param)


#: Close the connection instead of answering.
CLOSE = b"<close>"
OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"


@dataclass
class Wire:
    """What the hand-written server saw: one list of request heads per connection."""

    port: int
    connections: list[list[bytes]] = field(default_factory=list)


Answer = bytes | Callable[[anyio.abc.SocketStream], object]


async def _receive(stream: anyio.abc.SocketStream) -> bytes:
    try:
        return await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        return b""


@asynccontextmanager
async def canned(*scripts: list[Answer], bytewise: bool = False) -> AsyncIterator[Wire]:
    """A server whose k-th connection answers its requests with ``scripts[k]``, in order (a
    callable is awaited with the stream instead), then closes; byte by byte if asked."""
    listener = (await anyio.create_tcp_listener(local_host="127.0.0.1")).listeners[0]
    wire = Wire(int(listener.extra(anyio.abc.SocketAttribute.local_port)))

    async def handle(stream: anyio.abc.SocketStream, script: list[Answer]) -> None:
        seen: list[bytes] = []
        wire.connections.append(seen)
        async with stream:
            buf = b""
            for answer in script:
                while b"\r\n\r\n" not in buf:
                    more = await _receive(stream)
                    if not more:
                        return
                    buf += more
                head, _, buf = buf.partition(b"\r\n\r\n")
                seen.append(head)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buf) < length:
                    buf += await stream.receive()
                buf = buf[length:]
                if answer == CLOSE:
                    return
                if callable(answer):
                    result = answer(stream)
                    if hasattr(result, "__await__"):
                        await result
                elif bytewise:
                    for i in range(len(answer)):
                        await stream.send(answer[i : i + 1])
                else:
                    await stream.send(answer)

    async with anyio.create_task_group() as tg:

        async def accept() -> None:
            async with listener:
                for script in scripts:
                    tg.start_soon(handle, await listener.accept(), script)

        tg.start_soon(accept)
        try:
            yield wire
        finally:
            tg.cancel_scope.cancel()


async def _get(wire: Wire, client: HTTP1Client, method: str = "POST") -> tuple[int, bytes]:
    resp = await client.request(method, f"http://127.0.0.1:{wire.port}/mcp", content=b"{}")
    return resp.status_code, await resp.aread()


@pytest.mark.parametrize(
    ("method", "target", "headers"),
    [
        ("POST", "/mcp", {"x-a": "ok\r\nx-injected: 1"}),  # a header of its own
        ("POST", "/mcp", {"x-a": "nul\x00"}),
        ("POST", "/mcp", {"bad name": "v"}),
        ("POST", "/mcp", {"x-a": "snowman \u2603"}),  # not Latin-1
        ("POST", "/m%20cp x", {}),
        ("PO ST", "/mcp", {}),
    ],
)
async def test_a_request_that_could_smuggle_a_line_is_refused_before_connecting(
    method: str, target: str, headers: dict[str, str]
) -> None:
    async with canned([OK]) as wire, HTTP1Client(timeout=5) as client:
        with pytest.raises(mcpkit.HTTPError):
            await client.request(method, f"http://127.0.0.1:{wire.port}{target}", headers=headers)
        assert wire.connections == []  # nothing was sent


async def test_the_request_bytes() -> None:
    async with canned([OK]) as wire, HTTP1Client(timeout=5) as client:
        url = f"http://127.0.0.1:{wire.port}/mcp?x=1"
        await client.post(url, content=b"{}", headers={"X-A": " padded\t", "caf": "\xe9"})
    assert wire.connections[0][0].split(b"\r\n") == [
        b"POST /mcp?x=1 HTTP/1.1",
        f"host: 127.0.0.1:{wire.port}".encode(),
        b"user-agent: mcpkit",
        b"x-a: padded",
        b"caf: \xe9",  # Latin-1 on the wire
        b"content-length: 2",
    ]


CHUNKED = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    b"7\r\nevent: \r\n"
    b'1c;ext=1\r\ndata: {"id":1,"result":{}}\n\n\r\n'
    b"0\r\nx-trailer: yes\r\n\r\n"
)


@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "byte-by-byte"])
async def test_lengths_and_chunks_and_the_connection_is_reused(bytewise: bool) -> None:
    answers: list[Answer] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\nhello",
        CHUNKED,
        b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n",
    ]
    async with canned(answers, bytewise=bytewise) as wire, HTTP1Client(timeout=5) as client:
        resp = await client.post(f"http://127.0.0.1:{wire.port}/mcp", content=b"{}")
        assert (resp.status_code, resp.reason_phrase, await resp.aread()) == (200, "OK", b"hello")
        assert resp.headers.get("x-a") == "1, 2" and resp.headers["Content-Length"] == "5"
        assert await _get(wire, client) == (200, b'event: data: {"id":1,"result":{}}\n\n')
        assert await _get(wire, client) == (202, b"")
    assert len(wire.connections) == 1


@pytest.mark.parametrize(
    ("answer", "reused"),
    [
        (b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n", False),
        (b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\ncontent-length: 0\r\n\r\n", False),
        (b"HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n", False),  # 1.0: closes by default
        (b"HTTP/1.1 200 OK\r\nconnection: closed-caption\r\ncontent-length: 0\r\n\r\n", True),
        (b"HTTP/1.1 204 No Content\r\n\r\n", True),
        (b"HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\n\r\n", True),  # no body
        (b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nxEXTRA", False),  # bytes beyond it
        # Both framings: chunks are read, but the connection is never trusted again.
        (
            b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\ntransfer-encoding: chunked\r\n\r\n"
            b"2\r\nhi\r\n0\r\n\r\n",
            False,
        ),
    ],
)
async def test_when_the_connection_is_reused(answer: bytes, reused: bool) -> None:
    async with canned([answer, OK], [OK]) as wire, HTTP1Client(timeout=5) as client:
        await _get(wire, client)
        assert await _get(wire, client) == (200, b"ok")
    assert len(wire.connections) == (1 if reused else 2)


async def test_a_head_response_has_no_body_whatever_its_length() -> None:
    answers: list[Answer] = [b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n", OK]
    async with canned(answers) as wire, HTTP1Client(timeout=5) as client:
        assert await _get(wire, client, "HEAD") == (200, b"")
        assert await _get(wire, client) == (200, b"ok")
    assert len(wire.connections) == 1


async def test_informational_heads_are_skipped() -> None:
    answer = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" + OK
    async with canned([answer]) as wire, HTTP1Client(timeout=5) as client:
        assert await _get(wire, client) == (200, b"ok")


async def test_a_body_to_the_end_of_the_connection() -> None:
    answer = b"HTTP/1.1 200 OK\r\nx-a: one\r\n\r\nuntil the end"
    async with canned([answer], [OK]) as wire, HTTP1Client(timeout=5) as client:
        resp = await client.post(f"http://127.0.0.1:{wire.port}/mcp", content=b"{}")
        assert await resp.aread() == b"until the end"
        assert resp.headers.get("x-a") == "one"
        assert await _get(wire, client) == (200, b"ok")
    assert len(wire.connections) == 2  # the end of the connection was the end of the body


async def test_obsolete_line_folding(parser: str) -> None:
    # The one place the two parsers differ: h11 joins a folded header value with a space
    # (RFC 9112 5.2); llhttp refuses the response (as Node's client does), not leniently.
    answer = b"HTTP/1.1 200 OK\r\nx-a: one\r\n  two\r\ncontent-length: 2\r\n\r\nok"
    async with canned([answer]) as wire, HTTP1Client(timeout=5) as client:
        url = f"http://127.0.0.1:{wire.port}/mcp"
        if parser == "h11":
            resp = await client.post(url, content=b"{}")
            assert resp.headers.get("x-a") == "one two"
        else:
            with pytest.raises(mcpkit.HTTPProtocolError, match="invalid HTTP"):
                await client.post(url, content=b"{}")


@pytest.mark.parametrize(
    ("answer", "match"),
    [
        (b"HTTP/2 200 OK\r\n\r\n", "invalid HTTP"),
        (b"HTTP/1.1 20 OK\r\n\r\n", "invalid HTTP"),
        (b"ICY 200 OK\r\n\r\n", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\nbad name: v\r\n\r\n", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\n folded-first: v\r\n\r\n", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 1, 2\r\n\r\n", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 0x10\r\n\r\n", "invalid HTTP"),
        (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n-1\r\n", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhiX\r\n", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nzzz", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\ncont", "invalid HTTP"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab", "invalid HTTP"),
        (b"", "closed the connection without answering"),
    ],
)
async def test_broken_responses_are_refused(answer: bytes, match: str) -> None:
    # Each answer, then the end of the connection.
    async with canned([answer]) as wire, HTTP1Client(timeout=5) as client:
        with pytest.raises(mcpkit.HTTPProtocolError, match=match):
            await _get(wire, client)


async def test_a_kept_alive_connection_the_server_closed_is_replaced_once() -> None:
    async with canned([OK, CLOSE], [OK]) as wire, HTTP1Client(timeout=5) as client:
        assert await _get(wire, client) == (200, b"ok")
        assert await _get(wire, client) == (200, b"ok")  # the first connection was stale
    assert [len(seen) for seen in wire.connections] == [2, 1]


def _endless(prefix: bytes, line: bytes) -> Callable[[anyio.abc.SocketStream], object]:
    async def send(stream: anyio.abc.SocketStream) -> None:
        await stream.send(prefix)
        try:
            for _ in range(4 * MAX_HEAD // len(line) + 10):
                await stream.send(line)
        except (anyio.BrokenResourceError, OSError):
            return  # the client gave up: what it should do
        await anyio.sleep(5)

    return send


@pytest.mark.parametrize(
    ("prefix", "line"),
    [
        (b"HTTP/1.1 200 OK\r\n", b"x-pad: " + b"a" * 1000 + b"\r\n"),  # an endless head
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n", b"1" + b";" * 500),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n", b"x-t: " + b"b" * 93),
    ],
    ids=["head", "chunk-size-line", "trailers"],
)
async def test_what_never_ends_is_refused_at_the_limit(prefix: bytes, line: bytes) -> None:
    async with canned([_endless(prefix, line)]) as wire, HTTP1Client(timeout=5) as client:
        with pytest.raises(mcpkit.HTTPProtocolError, match="invalid HTTP"):
            await _get(wire, client)


# ---------------------------------------------------------------------- the connections


async def test_a_host_name_connects_whichever_family_answers() -> None:
    # anyio.connect_tcp races IPv6 and IPv4 for a name (happy eyeballs): "localhost" may
    # resolve to ::1 first, and the server listens on 127.0.0.1 only.
    async with canned([OK]) as wire, HTTP1Client(timeout=5) as client:
        resp = await client.post(f"http://localhost:{wire.port}/mcp", content=b"{}")
        assert (resp.status_code, await resp.aread()) == (200, b"ok")
        assert wire.connections[0][0].split(b"\r\n")[1] == f"host: localhost:{wire.port}".encode()


async def test_a_large_body_arrives_whole_and_in_order() -> None:
    data = bytes(i % 251 for i in range(3 * 1024 * 1024))
    answer = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(data) + data
    async with canned([answer]) as wire, HTTP1Client(timeout=10) as client:
        assert await _get(wire, client) == (200, data)


async def test_a_reset_connection_is_a_protocol_error() -> None:
    def reset(stream: anyio.abc.SocketStream) -> None:
        sock = stream.extra(anyio.abc.SocketAttribute.raw_socket)
        # SO_LINGER 0: close() sends a reset instead of an orderly end.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    async with canned([reset]) as wire, HTTP1Client(timeout=5) as client:
        with pytest.raises(mcpkit.HTTPProtocolError):
            await _get(wire, client)


async def test_a_server_that_never_answers_times_the_read_out() -> None:
    async def hang(stream: anyio.abc.SocketStream) -> None:
        await anyio.sleep(10)

    async with canned([hang]) as wire, HTTP1Client(timeout=5) as client:
        start = anyio.current_time()
        with pytest.raises(mcpkit.HTTPReadTimeout):
            url = f"http://127.0.0.1:{wire.port}/mcp"
            await client.post(url, content=b"{}", timeout=(5, 0.2))
        assert 0.2 <= anyio.current_time() - start < 5


async def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening
        async with HTTP1Client(timeout=5) as client:
            with pytest.raises(mcpkit.HTTPConnectError):
                await client.post(f"http://127.0.0.1:{port}/mcp", content=b"{}")


def test_on_uvloop_too() -> None:
    # Servers run on uvloop and fetch JWKS and metadata with our client.
    uvloop = pytest.importorskip("uvloop")

    async def scenario() -> None:
        async with canned([OK, OK]) as wire, HTTP1Client(timeout=5) as client:
            assert await _get(wire, client) == (200, b"ok")
            assert await _get(wire, client) == (200, b"ok")
        assert len(wire.connections) == 1

    anyio.run(scenario, backend="asyncio", backend_options={"loop_factory": uvloop.new_event_loop})
