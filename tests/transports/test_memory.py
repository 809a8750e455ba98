"""The in-memory pair moves messages unchanged, with backpressure and a clean end."""

from __future__ import annotations

import anyio
import orjson
import pytest

from mcpkit._transports import memory_pair

pytestmark = pytest.mark.anyio


@pytest.mark.req("TRANSPORT-CUSTOM-PRESERVE-FORMAT")
async def test_messages_cross_unchanged_and_the_end_is_signalled() -> None:
    a, b = memory_pair(buffer=2)
    msgs = [
        {
            "jsonrpc": "2.0",
            "id": "x",
            "method": "m",
            "params": {
                "s": "é 🎉 \n \u2028",
                "big": 2**53 + 1,
                "f": 0.1,
                "n": None,
                "l": [1, {"a": []}],
            },
        },
        [{"jsonrpc": "2.0", "method": "batched"}],
    ]
    try:
        for m in msgs:
            await a.send(m)
            with anyio.fail_after(2):
                assert orjson.loads(await b.receive()) == m
        # bounded: a third message waits until the reader takes one
        await a.send({"n": 1})
        await a.send({"n": 2})
        with anyio.move_on_after(0.1) as scope:
            await a.send({"n": 3})
        assert scope.cancelled_caught
        await a.aclose()
        assert orjson.loads(await b.receive()) == {"n": 1}
        assert orjson.loads(await b.receive()) == {"n": 2}
        with pytest.raises(anyio.EndOfStream):
            await b.receive()
    finally:
        a.close()
        b.close()


async def test_unserializable_messages_fail_on_the_sender_side() -> None:
    a, b = memory_pair()
    try:
        with pytest.raises(TypeError):
            await a.send({"x": object()})
    finally:
        a.close()
        b.close()
