"""Ping keepalive, progress rules and cancellation logging on the session roles."""

from __future__ import annotations

import itertools
import logging
from typing import Any

import anyio
import orjson
import pytest

from mcpkit._exceptions import ConnectionClosed
from mcpkit._session import ClientSession, RequestContext, ServerSession
from mcpkit._transports import memory_pair

pytestmark = pytest.mark.anyio

INFO = {"name": "t", "version": "1"}


async def _recv(t: Any) -> Any:
    with anyio.fail_after(5):
        return orjson.loads(await t.receive())


@pytest.mark.req(
    "PING-PERIODIC",
    "PING-FREQUENCY-CONFIGURABLE",
    "PING-TIMEOUT-APPROPRIATE",
    "PING-AVOID-EXCESSIVE",
    "PING-TIMEOUT-IS-FAILURE",
    "PING-LOG-FAILURES",
)
async def test_keepalive_pings_periodically_and_a_silent_peer_is_a_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit.keepalive")
    a, b = memory_pair()
    client = ClientSession(a, client_info=INFO, keepalive_interval=0.05, keepalive_timeout=0.3)
    pings: list[float] = []
    try:
        async with client, anyio.create_task_group() as tg:
            init = await _recv_after_start(tg, client, b)
            await b.send(
                {
                    "jsonrpc": "2.0",
                    "id": init["id"],
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "serverInfo": INFO,
                    },
                }
            )
            assert (await _recv(b))["method"] == "notifications/initialized"
            # answer three pings, checking none overlaps another
            for _ in range(3):
                ping = await _recv(b)
                assert ping["method"] == "ping"
                pings.append(anyio.current_time())
                await b.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
            # then go silent: the client gives up after the timeout
            assert (await _recv(b))["method"] == "ping"
            with anyio.fail_after(3), pytest.raises(ConnectionClosed):
                await client.engine.request("wait-for-close")  # fails when the keepalive closes
            with pytest.raises(ConnectionClosed, match="ping"):
                await client.send_request("ping")
    finally:
        a.close()
        b.close()
    gaps = [t2 - t1 for t1, t2 in itertools.pairwise(pings)]
    assert all(g >= 0.04 for g in gaps), gaps  # the interval is respected
    assert any("ping unanswered" in r.getMessage() for r in caplog.records)
    with pytest.raises(ValueError):
        ClientSession(a, client_info=INFO, keepalive_interval=0)


async def _recv_after_start(tg: Any, client: ClientSession, b: Any) -> Any:
    tg.start_soon(client.initialize)
    return await _recv(b)


@pytest.mark.req(
    "PROGRESS-VALUE-INCREASES",
    "PROGRESS-REF-IN-PROGRESS",
    "PROGRESS-STOP-AFTER-COMPLETION",
    "PROGRESS-MESSAGE-HUMAN-READABLE",
)
async def test_progress_only_increases_and_stops_after_completion() -> None:
    kept: list[RequestContext] = []

    async def work(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        kept.append(ctx)
        for value in (1, 2, 2, 1.5, 3):
            await ctx.report_progress(value, 3, f"step {value} of 3")
        return {"content": []}

    a, b = memory_pair()
    server = ServerSession(
        b, server_info=INFO, capabilities={"tools": {}}, handlers={"tools/call": work}
    )
    got: list[tuple[float, float | None, str | None]] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        got.append((p, total, message))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run)
            async with ClientSession(a, client_info=INFO) as client:
                await client.initialize()
                await client.send_request(
                    "tools/call", {"name": "x"}, on_progress=on_progress, timeout=5
                )
                # after the response, the kept context may not report any more
                await kept[0].report_progress(10)
                await client.ping()
            tg.cancel_scope.cancel()
    finally:
        a.close()
        b.close()
    assert got == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]


@pytest.mark.req("CANCEL-LOG-REASON")
async def test_cancellation_reason_is_logged_and_late_cancel_is_harmless(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "mcpkit.jsonrpc")
    started = anyio.Event()

    async def slow(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        if params and params.get("name") == "fast":
            return {"content": []}
        started.set()
        await anyio.sleep(30)
        return {"content": []}

    a, b = memory_pair()
    server = ServerSession(
        b, server_info=INFO, capabilities={"tools": {}}, handlers={"tools/call": slow}
    )
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run)
            async with ClientSession(a, client_info=INFO) as client:
                await client.initialize()
                async with anyio.create_task_group() as inner:
                    inner.start_soon(client.send_request, "tools/call", {"name": "slow"})
                    with anyio.fail_after(5):
                        await started.wait()
                    inner.cancel_scope.cancel()
                # a cancellation racing a finished request: ignored by the server
                assert await client.send_request("tools/call", {"name": "fast"}) == {"content": []}
                await client.notify(
                    "notifications/cancelled", {"requestId": 99, "reason": "too late"}
                )
                await client.ping()
            tg.cancel_scope.cancel()
    finally:
        a.close()
        b.close()
    assert any("cancelled by the caller" in r.getMessage() for r in caplog.records)
