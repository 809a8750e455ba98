"""Contract tests of the asyncio pipe writer's write joining (``AsyncioPipeWriter``): a
message written long after the one before goes out at once, with no callback; one written
soon after starts a burst, whose messages go out in one write when the next iteration
starts; bytes keep their order; a large burst goes out at once; closing writes what waits.
The writer's clock is the test's."""

from __future__ import annotations

import asyncio
import os

import anyio
import pytest

from mcpkit._transports import _stream
from mcpkit._transports._stream import AsyncioPipeWriter

pytestmark = pytest.mark.parametrize("anyio_backend", ["asyncio"])  # an asyncio writer


class Clock:
    """The writer's ``monotonic``, moved by the test."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(_stream, "monotonic", c)
    return c


class Counting:
    """The StreamWriter, with its ``write`` calls counted."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.inner = writer
        self.transport = writer.transport
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self.inner.write(data)

    async def drain(self) -> None:
        await self.inner.drain()

    def close(self) -> None:
        self.inner.close()


async def open_pipe() -> tuple[Counting, int]:
    loop = asyncio.get_running_loop()
    r, w = os.pipe()
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop=loop), os.fdopen(w, "wb", buffering=0)
    )
    return Counting(asyncio.StreamWriter(transport, protocol, None, loop)), r


def read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


async def test_a_bursts_messages_go_out_in_three_writes_in_order(
    anyio_backend: str, clock: Clock
) -> None:
    raw, r = await open_pipe()
    writer = AsyncioPipeWriter(raw)
    # 50 senders all woken in the same iteration (as 50 answers ready at once are). The
    # first two go out at once (the second shows the burst), the other 48 together as the
    # next iteration starts.
    await asyncio.gather(*(writer.write(b"%d\n" % i) for i in range(50)))
    assert raw.writes == 3
    # Messages far apart (a sequential client's): each at once, no callback to end a turn.
    for i in range(50, 53):
        clock.now += 0.001
        await writer.write(b"%d\n" % i)
        assert raw.writes == i - 46 and not writer._turn
        await asyncio.sleep(0)
    assert raw.writes == 6
    await writer.aclose()
    with anyio.fail_after(10):  # to the end: the pipe closes on the loop
        got = await anyio.to_thread.run_sync(read_all, r)
    assert got == b"".join(b"%d\n" % i for i in range(53))


async def test_a_large_burst_goes_out_at_once_and_close_writes_what_waits(
    anyio_backend: str, clock: Clock
) -> None:
    raw, r = await open_pipe()
    writer = AsyncioPipeWriter(raw)
    got: list[bytes] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: anyio.to_thread.run_sync(lambda: got.append(read_all(r))))
        big = b"x" * (200 * 1024) + b"\n"
        await writer.write(b"first\n")
        await writer.write(b"second\n")  # at the same time: a burst (still at once)
        await writer.write(big)  # waits: under the limit
        assert raw.writes == 2
        await writer.write(big)  # past it: both go out now
        assert raw.writes == 3
        await writer.write(b"last\n")  # waits for the iteration's end...
        await writer.aclose()  # ...or for the close, whichever comes first
    assert got == [b"first\nsecond\n" + big + big + b"last\n"]


async def test_a_closed_pipe_refuses_writes(anyio_backend: str) -> None:
    raw, r = await open_pipe()
    writer = AsyncioPipeWriter(raw)
    os.close(r)
    with pytest.raises(BrokenPipeError), anyio.fail_after(5):
        for _ in range(1000):
            await writer.write(b"x\n")
            await asyncio.sleep(0)
    await writer.aclose()
