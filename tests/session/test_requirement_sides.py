"""Requirements exercised on the side they bind, against a peer played by hand.

An audit (issue 13) found the earlier tests for these rows checking the wrong side (the
receiver of a rule that binds the sender), or a race that never happened. Here the side under
test is a real ClientSession or ServerSession; the other side is raw JSON-RPC over a memory
pair, so every message the side under test sends is seen as it went out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from tests.session._raw import Raw

from mcpkit import RequestTimeout
from mcpkit._session import ClientSession, ServerSession
from mcpkit._session._base import RequestContext
from mcpkit._transports import memory_pair

pytestmark = pytest.mark.anyio
INFO = {"name": "t", "version": "1"}
INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": INFO,
}


@asynccontextmanager
async def client_and_raw_server() -> AsyncIterator[tuple[ClientSession, Raw]]:
    """An initialized ClientSession whose server is played by hand."""
    a, b = memory_pair()
    raw = Raw(b)
    async with ClientSession(a, client_info=INFO) as client:

        async def handshake() -> None:
            init = await raw.recv()
            await raw.send({"jsonrpc": "2.0", "id": init["id"], "result": INIT_RESULT})
            assert (await raw.recv())["method"] == "notifications/initialized"

        # The handshake is over (its reader done) before the test reads the wire itself:
        # two readers of one stream would race for its messages.
        async with anyio.create_task_group() as tg:
            tg.start_soon(handshake)
            await client.initialize()
        try:
            yield client, raw
        finally:
            a.close()
            b.close()


@pytest.mark.req("CANCEL-NOT-INITIALIZE")
async def test_client_never_cancels_its_initialize() -> None:
    """The client gives up on an unanswered initialize, and still sends no cancellation."""
    a, b = memory_pair()
    raw = Raw(b)
    async with ClientSession(a, client_info=INFO) as client:
        with pytest.raises(RequestTimeout):
            await client.initialize(timeout=0.2)
        init = await raw.recv()
        assert init["method"] == "initialize"
        # The next thing on the wire is our marker, not notifications/cancelled.
        await client.engine.notify("notifications/marker")
        assert (await raw.recv())["method"] == "notifications/marker"
    a.close()
    b.close()


@pytest.mark.req("CANCEL-RACE-GRACEFUL")
async def test_client_handles_a_response_arriving_after_it_cancelled() -> None:
    """The race on the sender's side: it cancels, and the answer crosses the cancellation."""
    async with client_and_raw_server() as (client, raw):
        with pytest.raises(RequestTimeout):
            await client.send_request("tools/call", {"name": "slow"}, timeout=0.2)
        late = await raw.recv()
        cancel = await raw.recv()
        assert cancel["method"] == "notifications/cancelled"
        assert cancel["params"]["requestId"] == late["id"]
        # The answer was already on its way: it arrives after the cancellation.
        await raw.send({"jsonrpc": "2.0", "id": late["id"], "result": {"content": []}})
        async with anyio.create_task_group() as tg:

            async def answer_next() -> None:
                nxt = await raw.recv()
                assert nxt["id"] != late["id"]
                await raw.send({"jsonrpc": "2.0", "id": nxt["id"], "result": {"n": 2}})

            tg.start_soon(answer_next)
            # The late answer went nowhere; the next call gets its own answer.
            assert await client.send_request("tools/call", {"name": "next"}) == {"n": 2}


@pytest.mark.req("CANCEL-RACE-GRACEFUL")
async def test_server_handles_a_cancellation_arriving_after_it_answered() -> None:
    """The race on the receiver's side: the answer is out when the cancellation comes in."""

    async def quick(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        return {"content": [{"type": "text", "text": "done"}]}

    a, b = memory_pair()
    raw = Raw(a)
    server = ServerSession(
        b, server_info=INFO, capabilities={"tools": {}}, handlers={"tools/call": quick}
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run)
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INFO}
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        assert (await raw.recv())["id"] == 1
        await raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # Request and cancellation back to back: the answer may or may not be sent first.
        call = {"name": "quick"}
        await raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        await raw.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        )
        await raw.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        seen = [await raw.recv()]
        if seen[0]["id"] == 2:
            seen.append(await raw.recv())
        # Either way: no error about the cancellation, and the server serves on.
        assert seen[-1] == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert all("error" not in m for m in seen)
        # And a cancellation for a request long finished is ignored the same way.
        await raw.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        )
        await raw.send({"jsonrpc": "2.0", "id": 4, "method": "ping"})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 4, "result": {}}
        a.close()
        b.close()
        tg.cancel_scope.cancel()


@pytest.mark.req("PROGRESS-TOKEN-UNIQUE")
async def test_client_progress_tokens_are_unique_across_active_requests() -> None:
    async with client_and_raw_server() as (client, raw):
        tokens: list[Any] = []

        async def on_progress(p: float, total: float | None, msg: str | None) -> None:
            pass

        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(
                    lambda i=i: client.send_request(
                        "tools/call", {"name": f"t{i}"}, on_progress=on_progress
                    )
                )
            requests = [await raw.recv() for _ in range(20)]
            tokens = [r["params"]["_meta"]["progressToken"] for r in requests]
            for r in requests:  # all active at once until now
                await raw.send({"jsonrpc": "2.0", "id": r["id"], "result": {}})
        assert len(set(tokens)) == 20


@pytest.mark.req("JSONRPC-REQ-ID-UNIQUE")
async def test_client_never_reuses_a_request_id() -> None:
    """Concurrent, sequential, timed out and cancelled requests: every id is new."""
    async with client_and_raw_server() as (client, raw):
        ids: list[Any] = []

        async def serve(count: int, answer: bool = True) -> None:
            for _ in range(count):
                msg = await raw.recv()
                if "id" in msg:
                    ids.append(msg["id"])
                    if answer:
                        await raw.send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})

        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, 10)
            for _ in range(10):
                await client.ping()
        with pytest.raises(RequestTimeout):
            await client.send_request("tools/list", timeout=0.1)
        await serve(1, answer=False)
        assert (await raw.recv())["method"] == "notifications/cancelled"
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, 10)
            async with anyio.create_task_group() as calls:
                for _ in range(10):
                    calls.start_soon(client.ping)
        assert len(ids) == 21 and len(set(ids)) == 21


@pytest.mark.req("JSONRPC-REQ-ID-UNIQUE")
async def test_server_never_reuses_a_request_id() -> None:
    """The server as requestor: its requests to the client (here: pings) all have new ids."""
    a, b = memory_pair()
    raw = Raw(a)
    server = ServerSession(b, server_info=INFO, capabilities={}, handlers={})
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run)
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INFO}
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        await raw.recv()
        await raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ids: list[Any] = []

        async def answer(count: int) -> None:
            for _ in range(count):
                msg = await raw.recv()
                ids.append(msg["id"])
                await raw.send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})

        async with anyio.create_task_group() as inner:
            inner.start_soon(answer, 15)
            for _ in range(5):
                await server.ping()
            async with anyio.create_task_group() as pings:
                for _ in range(10):
                    pings.start_soon(server.ping)
        assert len(set(ids)) == 15
        a.close()
        b.close()
        tg.cancel_scope.cancel()
