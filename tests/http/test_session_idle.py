"""Idle sessions are reaped by the registry's clock, a fake one here: no test waits for time
to pass. The app is called in process (:func:`asgi_call`), its registry given the fake clock
before any session exists (``app.registry.clock``)."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest
from _http_helpers import HEADERS, INIT_PARAMS, DemoServer, asgi_call

from mcpkit._app import create_http_app

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]
INIT = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
PING = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
IDLE = 60.0


class FakeClock:
    """Seconds that move only when the test says so (binary fractions: exact arithmetic)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _app(clock: FakeClock, **kw: Any) -> Any:
    app = create_http_app(DemoServer(), session_idle_timeout=IDLE, **kw)
    app.registry.clock = clock
    return app


async def _open(app: Any) -> str:
    status, headers, _ = await asgi_call(app, "POST", HEADERS, INIT)
    assert status == 200
    return headers["mcp-session-id"]


async def _ping(app: Any, sid: str) -> int:
    h = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    return (await asgi_call(app, "POST", h, PING))[0]


def test_the_registry_reads_the_monotonic_clock_by_default() -> None:
    import time

    app = create_http_app(DemoServer())
    assert app.registry.clock is time.monotonic


async def test_a_session_is_kept_just_before_the_idle_limit_and_reaped_just_after() -> None:
    clock = FakeClock()
    app = _app(clock)
    with anyio.fail_after(10):
        async with app:
            sid = await _open(app)
            entry = app.sessions[sid]
            assert entry.last_active == clock.now  # stamped by the fake clock, not the loop's

            clock.advance(IDLE - 0.25)  # just before the limit
            app.registry.reap_idle()
            assert sid in app.sessions
            clock.advance(0.25)  # exactly the limit: idle *longer* than it is what ends it
            app.registry.reap_idle()
            assert sid in app.sessions
            clock.advance(0.25)  # just after
            app.registry.reap_idle()
            assert sid not in app.sessions
            assert await _ping(app, sid) == 404  # its client is told the session is gone


async def test_activity_restarts_the_idle_time() -> None:
    clock = FakeClock()
    app = _app(clock)
    with anyio.fail_after(10):
        async with app:
            sid = await _open(app)
            clock.advance(IDLE - 0.25)
            assert await _ping(app, sid) == 200  # activity, on the fake clock
            clock.advance(IDLE - 0.25)  # the limit counts from the ping, not the initialize
            app.registry.reap_idle()
            assert sid in app.sessions
            clock.advance(0.5)
            app.registry.reap_idle()
            assert sid not in app.sessions


async def test_a_session_with_its_client_attached_is_not_idle() -> None:
    clock = FakeClock()
    demo = DemoServer()
    app = create_http_app(demo, session_idle_timeout=IDLE)
    app.registry.clock = clock
    with anyio.fail_after(10):
        async with app, anyio.create_task_group() as tg:
            sid = await _open(app)
            h = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
            call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "gated"}}
            answered = anyio.Event()

            async def gated_call() -> None:
                assert (await asgi_call(app, "POST", h, orjson.dumps(call)))[0] == 200
                answered.set()

            tg.start_soon(gated_call)
            await demo.changes.wait_for(lambda: "gated" in demo.started)
            clock.advance(10 * IDLE)  # its POST is still open: the client is there
            app.registry.reap_idle()
            assert sid in app.sessions
            demo.gate.set()
            await answered.wait()
            # The end of the request counts as activity: the idle time starts from there.
            clock.advance(IDLE - 0.25)
            app.registry.reap_idle()
            assert sid in app.sessions
            clock.advance(0.5)
            app.registry.reap_idle()
            assert sid not in app.sessions


async def test_the_reaper_ends_idle_sessions_by_the_fake_clock() -> None:
    clock = FakeClock()
    # A short timeout makes the reaper look often (every 20 ms of real time); whether a
    # session is idle is the fake clock's say alone.
    app = create_http_app(DemoServer(), session_idle_timeout=0.08)
    app.registry.clock = clock
    dropped = anyio.Event()
    drop = app.registry.drop

    def observed_drop(entry: Any, *, forget: bool = True) -> None:
        drop(entry, forget=forget)
        dropped.set()

    app.registry.drop = observed_drop  # type: ignore[method-assign]
    with anyio.fail_after(10):
        async with app:
            sid = await _open(app)
            clock.advance(0.25)
            await dropped.wait()
            assert sid not in app.sessions
