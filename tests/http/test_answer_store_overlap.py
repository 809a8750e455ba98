"""The event of an answer is written to an event store outside the process (Redis) while it
goes out, not before; the in-process store is written first (it costs nothing).

A call's time holds one store round trip less (what a Redis event store costs), and a
client that lost its connection still finds the answer when it resumes: the write is
started before the answer is sent, and the request is over only once it is kept. Served by
real uvicorn with a store that holds every write of an answer until the test lets it go.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import anyio.to_thread
import httpx2 as httpx
import pytest
from _http_helpers import HEADERS, INIT_PARAMS, sse_events

from mcpkit._http import InMemoryEventStore

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


class HeldStore:
    """A store of its own (not the in-process one, which is written first: it costs
    nothing): keeps events in an in-memory store, but holds the writes of answers
    (``result``) at ``gate``. The server runs on its own thread and loop: thread events,
    waited for in worker threads."""

    def __init__(self) -> None:
        self.kept = InMemoryEventStore()
        self.gate = threading.Event()
        self.answer_write_started = threading.Event()
        self.answer_kept = threading.Event()

    async def store_event(self, session_key: str, stream_id: str, seq: int, message: Any) -> None:
        answer = isinstance(message, dict) and "result" in message and "id" in message
        if answer and message["result"].get("protocolVersion") is None:  # not initialize's
            self.answer_write_started.set()
            await anyio.to_thread.run_sync(self.gate.wait, 10)
            await self.kept.store_event(session_key, stream_id, seq, message)
            self.answer_kept.set()
            return
        await self.kept.store_event(session_key, stream_id, seq, message)

    async def events_after(self, session_key: str, stream_id: str, seq: int) -> Any:
        return await self.kept.events_after(session_key, stream_id, seq)

    async def forget_session(self, session_key: str) -> None:
        await self.kept.forget_session(session_key)


async def test_an_answer_reaches_its_client_while_its_event_is_being_kept(serve: Any) -> None:
    store = HeldStore()
    srv = serve(event_store=store)
    with anyio.fail_after(20):
        async with httpx.AsyncClient(timeout=10) as c:
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
            r = await c.post(srv.url, json=init, headers=HEADERS)
            h = {
                **HEADERS,
                "mcp-session-id": r.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await c.post(srv.url, json=note, headers=h)).status_code == 202
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "hi"}},
            }
            async with c.stream("POST", srv.url, json=call, headers=h) as resp:
                events = [ev async for ev in sse_events(resp)]
            # The whole response arrived while the answer's write is still held...
            assert store.answer_write_started.is_set()
            assert not store.answer_kept.is_set()
            assert '"hi"' in events[-1].data
            # ...and once it is let go the answer is there for a client that resumes.
            store.gate.set()
            assert await anyio.to_thread.run_sync(store.answer_kept.wait, 10)
            get_h = {**h, "accept": "text/event-stream", "last-event-id": events[0].id}
            async with c.stream("GET", srv.url, headers=get_h) as resp:
                assert resp.status_code == 200
                replayed = [ev async for ev in sse_events(resp)]
    assert [e.data for e in replayed] == [events[-1].data]
