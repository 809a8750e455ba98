"""Contract of the HTTP client's connections (``mcpkit._backend.connect_tcp``).

On asyncio the client reads its sockets through its own protocol (:class:`AsyncioTCPStream`,
deadlines on the loop's heap); elsewhere through anyio's stream (:class:`AnyioTCPStream`).
Each test runs on both (``kind``) against a real TCP peer on 127.0.0.1, and once on uvloop,
whose transports are not asyncio's classes.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import pytest
import sniffio

from mcpkit._backend._tcp import AnyioTCPStream, AsyncioTCPStream, TCPStream, connect_tcp

Peer = Callable[[anyio.abc.SocketStream], Awaitable[None]]


@pytest.fixture(params=["connect_tcp", "anyio"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def connected(kind: str, peer: Peer) -> AsyncIterator[TCPStream]:
    """A client stream to a listener on 127.0.0.1 whose one connection ``peer`` serves."""
    listener = (await anyio.create_tcp_listener(local_host="127.0.0.1")).listeners[0]
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:

        async def serve() -> None:
            async with listener:
                conn = await listener.accept()  # type: ignore[attr-defined]
                async with conn:
                    # The client's end may reach the peer first: not the peer's failure.
                    with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                        await peer(conn)

        tg.start_soon(serve)
        if kind == "anyio":
            stream: TCPStream = AnyioTCPStream(await anyio.connect_tcp("127.0.0.1", port))
        else:
            stream = await connect_tcp("127.0.0.1", port)
        try:
            yield stream
        finally:
            await stream.aclose()
            tg.cancel_scope.cancel()


async def _read_all(stream: TCPStream) -> bytes:
    out = bytearray()
    with pytest.raises(anyio.EndOfStream):  # what ends every read to the end
        while True:
            out += await stream.receive_within(5)
    return bytes(out)


@pytest.mark.anyio
async def test_the_running_loop_gets_its_own_kind() -> None:
    async def peer(conn: anyio.abc.SocketStream) -> None:
        await conn.receive()

    async with connected("connect_tcp", peer) as stream:
        expected = AsyncioTCPStream if sniffio.current_async_library() == "asyncio" else None
        assert type(stream) is (expected or AnyioTCPStream)


@pytest.mark.anyio
async def test_what_the_peer_sends_arrives_then_the_end(kind: str) -> None:
    async def peer(conn: anyio.abc.SocketStream) -> None:
        request = await conn.receive()
        await conn.send(b"echo:" + request)

    with anyio.fail_after(10):
        async with connected(kind, peer) as stream:
            await stream.send_within(b"ping", 5)
            assert await _read_all(stream) == b"echo:ping"


@pytest.mark.anyio
async def test_a_megabyte_sent_ahead_arrives_whole_and_in_order(kind: str) -> None:
    # More than the unread bytes at which the asyncio stream stops reading its socket: the
    # reading pauses and resumes, nothing is lost or reordered.
    data = bytes(i % 251 for i in range(3 * 1024 * 1024))

    async def peer(conn: anyio.abc.SocketStream) -> None:
        await conn.send(data)

    with anyio.fail_after(20):
        async with connected(kind, peer) as stream:
            await anyio.sleep(0.2)  # the peer writes ahead of us (as much as the kernel takes)
            assert await _read_all(stream) == data


@pytest.mark.anyio
async def test_a_read_times_out_and_the_stream_goes_on(kind: str) -> None:
    go = anyio.Event()

    async def peer(conn: anyio.abc.SocketStream) -> None:
        await go.wait()
        await conn.send(b"late")

    with anyio.fail_after(10):
        async with connected(kind, peer) as stream:
            start = anyio.current_time()
            with pytest.raises(TimeoutError):
                await stream.receive_within(0.1)
            assert anyio.current_time() - start >= 0.1
            go.set()
            assert await stream.receive_within(5) == b"late"


@pytest.mark.anyio
async def test_a_cancelled_read_loses_nothing(kind: str) -> None:
    go = anyio.Event()

    async def peer(conn: anyio.abc.SocketStream) -> None:
        await go.wait()
        await conn.send(b"kept")

    with anyio.fail_after(10):
        async with connected(kind, peer) as stream:
            with anyio.move_on_after(0.05) as scope:
                await stream.receive_within(None)
            assert scope.cancelled_caught
            go.set()
            assert await stream.receive_within(5) == b"kept"


@pytest.mark.anyio
async def test_a_peer_that_never_reads_times_a_write_out(kind: str) -> None:
    # A listening socket never accepted from: the kernel completes the connection and
    # buffers what its windows allow, then nothing drains (an anyio stream accepted on
    # asyncio would read on in the background).
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        with anyio.fail_after(20):
            if kind == "anyio":
                stream: TCPStream = AnyioTCPStream(await anyio.connect_tcp("127.0.0.1", port))
            else:
                stream = await connect_tcp("127.0.0.1", port)
            chunk = b"x" * (1024 * 1024)
            try:
                with pytest.raises(TimeoutError):
                    for _ in range(256):
                        await stream.send_within(chunk, 0.2)
            finally:
                await stream.aclose()


@pytest.mark.anyio
async def test_a_reset_connection_is_broken(kind: str) -> None:
    async def peer(conn: anyio.abc.SocketStream) -> None:
        sock = conn.extra(anyio.abc.SocketAttribute.raw_socket)
        # SO_LINGER 0: close() sends a reset instead of an orderly end.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        await conn.receive()

    with anyio.fail_after(10):
        async with connected(kind, peer) as stream:
            await stream.send_within(b"bye", 5)
            with pytest.raises((anyio.BrokenResourceError, anyio.EndOfStream)):
                while True:
                    await stream.receive_within(5)
            with pytest.raises((anyio.BrokenResourceError, OSError)):
                for _ in range(100):  # the reset may take a write or two to show
                    await stream.send_within(b"more", 5)
                    await anyio.sleep(0.01)


@pytest.mark.anyio
async def test_a_closed_stream_refuses_reads_and_writes(kind: str) -> None:
    async def peer(conn: anyio.abc.SocketStream) -> None:
        await conn.receive()

    with anyio.fail_after(10):
        async with connected(kind, peer) as stream:
            await stream.aclose()
            await stream.aclose()  # idempotent
            with pytest.raises(anyio.ClosedResourceError):
                await stream.receive_within(1)
            with pytest.raises(anyio.ClosedResourceError):
                await stream.send_within(b"x", 1)


@pytest.mark.anyio
async def test_closing_wakes_a_waiting_read(kind: str) -> None:
    async def peer(conn: anyio.abc.SocketStream) -> None:
        await conn.receive()

    with anyio.fail_after(10):
        async with connected(kind, peer) as stream, anyio.create_task_group() as tg:
            errors: list[BaseException] = []

            async def read() -> None:
                try:
                    await stream.receive_within(30)
                except Exception as e:  # what the closed stream raises
                    errors.append(e)

            tg.start_soon(read)
            await anyio.wait_all_tasks_blocked()
            await stream.aclose()
        assert len(errors) == 1
        assert isinstance(errors[0], (anyio.ClosedResourceError, anyio.BrokenResourceError))


def test_on_uvloop_too() -> None:
    # uvloop's transports are not asyncio.Transport subclasses and its create_connection
    # takes no happy_eyeballs_delay: the stream must work there (servers run on uvloop and
    # fetch JWKS and metadata with our client).
    uvloop = pytest.importorskip("uvloop")

    async def scenario() -> None:
        async def peer(conn: anyio.abc.SocketStream) -> None:
            await conn.send(b"hi:" + await conn.receive())

        async with connected("connect_tcp", peer) as stream:
            assert type(stream) is AsyncioTCPStream
            await stream.send_within(b"uv", 5)
            assert await _read_all(stream) == b"hi:uv"
            with pytest.raises(anyio.ClosedResourceError):
                await stream.aclose()
                await stream.receive_within(1)

    anyio.run(scenario, backend="asyncio", backend_options={"loop_factory": uvloop.new_event_loop})


@pytest.mark.parametrize(("host", "raced"), [("127.0.0.1", False), ("localhost", True)])
def test_only_a_host_name_is_raced(host: str, raced: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """IPv6 against IPv4 (happy eyeballs) only for a name: an address has nothing to race,
    and CPython 3.11's race leaks the socket it connected when the connect is cancelled at
    that moment (seen as ~20 unclosed sockets in the suite)."""
    import asyncio

    asked: list[object] = []
    create = asyncio.BaseEventLoop.create_connection

    async def spy(self: asyncio.BaseEventLoop, *args: object, **kw: object) -> object:
        asked.append(kw.get("happy_eyeballs_delay"))
        return await create(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(asyncio.BaseEventLoop, "create_connection", spy)

    async def scenario() -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, lambda conn: conn.aclose())
            stream = await connect_tcp(host, port)
            await stream.aclose()
            tg.cancel_scope.cancel()

    anyio.run(scenario, backend="asyncio")
    assert asked == [0.25 if raced else None]
