"""Clients that leave calls running and go away must not lock everyone else out.

Before: a session with a call still running was never reaped, so with a cap of N sessions, N
abandoned long calls made every new client get 503. Over real uvicorn; idle time is measured
by a fake clock the test moves (the registry's ``clock``), so nothing waits for it to pass.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import httpx2
import orjson
import pytest
from tests.http._http_helpers import CLIENT_INFO, HEADERS, Recorder, running

from mcpkit import Server

pytestmark = pytest.mark.anyio
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}


class Hanging:
    """A server whose ``hang`` tool never returns; counts the calls cancelled."""

    def __init__(self, expect: int) -> None:
        self.server = Server("hangs")
        self.cancelled = 0
        self.all_cancelled = threading.Event()  # set from the server's thread
        self.started = threading.Event()

        @self.server.tool()
        async def hang() -> str:
            """Never returns."""
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled += 1
                if self.cancelled >= expect:
                    self.all_cancelled.set()
            return "unreachable"


async def _open_session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    first = await http.post(
        url,
        headers=HEADERS,
        content=orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}),
    )
    assert first.status_code == 200, first.text
    session = {
        **HEADERS,
        "mcp-session-id": first.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    await http.post(
        url, headers=session, content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    )
    return session


async def _abandon_a_call(url: str, started: threading.Event) -> None:
    """Start ``hang`` in a new session, then drop the connection without a word."""
    started.clear()
    async with httpx2.AsyncClient(timeout=20) as http:
        session = await _open_session(http, url)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hang"}}
        async with http.stream("POST", url, headers=session, content=orjson.dumps(call)) as resp:
            assert resp.status_code == 200
            await anyio.to_thread.run_sync(started.wait, 10)
    # The client (and its connection) is gone; its call runs on.


async def test_abandoned_calls_do_not_lock_out_new_clients() -> None:
    hanging = Hanging(expect=1)
    app = hanging.server.http_app(max_sessions=3)
    with running(app) as srv:
        for _ in range(3):
            await _abandon_a_call(srv.url, hanging.started)
        async with httpx2.AsyncClient(timeout=20) as http:
            answer: Any = await http.post(
                srv.url,
                headers=HEADERS,
                content=orjson.dumps(
                    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
                ),
            )
        assert answer.status_code == 200, answer.text  # was 503: every slot held forever
        # Room was made by ending an abandoned session, and its call was cancelled.
        assert await anyio.to_thread.run_sync(hanging.all_cancelled.wait, 10)


async def test_idle_timeout_ends_sessions_whose_client_left_calls_running() -> None:
    hanging = Hanging(expect=2)
    app = hanging.server.http_app(session_idle_timeout=0.5)  # the reaper looks every 0.125 s
    now = [1000.0]
    app.registry.clock = lambda: now[0]  # read in the server's thread, moved in the test's
    rec = Recorder(app)
    with running(rec) as srv:
        for _ in range(2):
            await _abandon_a_call(srv.url, hanging.started)
        # The server has seen both clients go (every request of theirs is over), and the fake
        # clock has not moved: their calls run on and nothing is idle yet.
        with anyio.fail_after(10):
            await rec.wait_for(lambda: len(rec.finished) == len(rec.requests))
        assert len(app.sessions) == 2 and not hanging.all_cancelled.is_set()
        now[0] += 0.75  # past the idle timeout
        assert await anyio.to_thread.run_sync(hanging.all_cancelled.wait, 15)
        assert not app.sessions
