# ruff: noqa: ASYNC220, ASYNC230  (test-only blocking calls)
"""Streams, resumability, session lifetime and shutdown of the Streamable HTTP server."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2 as httpx
import orjson
import pytest
from _http_helpers import (
    CLIENT_INFO,
    HEADERS,
    INIT_PARAMS,
    DemoServer,
    Recorder,
    asgi_call,
    running,
    sse_events,
)
from tests._served import Served

from mcpkit._app import create_http_app
from mcpkit._http import InMemoryEventStore, open_streamable_http
from mcpkit._http._h1client import HTTP1Client
from mcpkit._session import ClientSession

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

INIT = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})


async def _session(c: httpx.AsyncClient, url: str) -> dict[str, str]:
    r = await c.post(url, content=INIT, headers=HEADERS)
    assert r.status_code == 200
    h = {
        **HEADERS,
        "mcp-session-id": r.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    r = await c.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
    assert r.status_code == 202
    return h


class _GetWatcher:
    """An HTTP client for the transports (``http_client=``) that sets ``get_open`` once a GET
    stream is answered 200: the client's GET stream is open."""

    def __init__(self, inner: HTTP1Client, get_open: anyio.Event) -> None:
        self.inner = inner
        self.get_open = get_open

    async def __aenter__(self) -> _GetWatcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.inner.aclose()

    @asynccontextmanager
    async def stream(self, method: str, url: str, **kw: Any) -> AsyncIterator[Any]:
        async with self.inner.stream(method, url, **kw) as resp:
            if method == "GET" and resp.status_code == 200:
                self.get_open.set()
            yield resp

    async def post(self, url: str, **kw: Any) -> Any:
        return await self.inner.post(url, **kw)

    async def delete(self, url: str, **kw: Any) -> Any:
        return await self.inner.delete(url, **kw)

    async def aclose(self) -> None:
        """Closed by ``async with``."""


def _tool(rid: int, name: str, **args: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": args},
    }


async def _read_all(c: httpx.AsyncClient, url: str, h: dict[str, str], body: Any) -> list[Any]:
    async with c.stream("POST", url, json=body, headers=h) as r:
        return [ev async for ev in sse_events(r)]


@pytest.mark.req("HTTP-DISCONNECT-NOT-CANCEL", "HTTP-EVENT-ID-STREAM")
async def test_client_disconnect_is_not_cancellation_and_result_resumes(
    serve: Any, demo: DemoServer
) -> None:
    srv = serve()
    with anyio.fail_after(15):
        async with httpx.AsyncClient(timeout=10) as c:
            h = await _session(c, srv.url)
            async with c.stream("POST", srv.url, json=_tool(5, "gated"), headers=h) as r:
                async for ev in sse_events(r):
                    priming = ev
                    break
            # The connection is gone; the tool is not cancelled.
            assert priming.id and priming.data == ""
            demo.gate.set()
            await demo.changes.wait_for(lambda: "gated" in demo.finished)
            async with c.stream(
                "GET",
                srv.url,
                headers={**h, "accept": "text/event-stream", "last-event-id": priming.id},
            ) as r:
                assert r.status_code == 200
                evs = [ev async for ev in sse_events(r)]
    msgs = [orjson.loads(e.data) for e in evs]
    assert msgs == [
        {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"content": [{"type": "text", "text": "through the gate"}]},
        }
    ]
    # Event ids name their stream: the replayed one shares the priming event's stream part.
    assert evs[0].id.rsplit("_", 1)[0] == priming.id.rsplit("_", 1)[0]


@pytest.mark.req("HTTP-NO-CROSS-STREAM-REPLAY")
async def test_replay_is_limited_to_the_stream_of_the_event_id(serve: Any) -> None:
    srv = serve()
    with anyio.fail_after(15):
        async with httpx.AsyncClient(timeout=10) as c:
            h = await _session(c, srv.url)
            a = await _read_all(c, srv.url, h, _tool(6, "log"))
            b = await _read_all(c, srv.url, h, _tool(7, "echo", text="b"))
            assert len(a) == 5 and len(b) == 2  # priming + 3 logs + result; priming + result
            get_h = {**h, "accept": "text/event-stream", "last-event-id": a[1].id}
            async with c.stream("GET", srv.url, headers=get_h) as r:
                replay = [ev async for ev in sse_events(r)]
            assert [e.id for e in replay] == [e.id for e in a[2:]]
            assert [e.data for e in replay] == [e.data for e in a[2:]]
            assert all(orjson.loads(e.data).get("id") != 7 for e in replay)
            # Another session's event id (or a made-up one) is refused, not replayed.
            h2 = await _session(c, srv.url)
            r = await c.get(
                srv.url, headers={**h2, "accept": "text/event-stream", "last-event-id": a[1].id}
            )
            assert r.status_code == 400
            r = await c.get(
                srv.url, headers={**h, "accept": "text/event-stream", "last-event-id": "garbage"}
            )
            assert r.status_code == 400


@pytest.mark.req("HTTP-GET-UNRELATED", "HTTP-GET-NO-RESPONSE", "HTTP-NO-BROADCAST")
async def test_get_stream_carries_unrelated_messages_only(serve: Any, demo: DemoServer) -> None:
    srv = serve()
    get_events: list[Any] = []
    with anyio.fail_after(15):
        async with httpx.AsyncClient(timeout=10) as c:
            h = await _session(c, srv.url)
            entry = next(iter(srv.app.sessions.values()))
            got_unrelated = anyio.Event()

            async def listen(task_status: Any) -> None:
                async with c.stream(
                    "GET", srv.url, headers={**h, "accept": "text/event-stream"}
                ) as r:
                    assert r.status_code == 200
                    task_status.started()
                    async for ev in sse_events(r):
                        if ev.data:
                            get_events.append(orjson.loads(ev.data))
                            got_unrelated.set()

            async with anyio.create_task_group() as tg:
                await tg.start(listen)
                # A second GET stream for the same session is refused (one message, one stream).
                r = await c.get(srv.url, headers={**h, "accept": "text/event-stream"})
                assert r.status_code == 409
                logs = await _read_all(c, srv.url, h, _tool(9, "log"))

                async def unrelated() -> None:
                    await entry.session.notify("notifications/tools/list_changed")

                srv.call(unrelated)
                await got_unrelated.wait()

                async def marker() -> None:
                    await entry.session.notify("notifications/prompts/list_changed")

                # One stream is delivered in order: once this last notification is in,
                # anything else wrongly sent to GET before it is in too.
                got_unrelated = anyio.Event()
                srv.call(marker)
                await got_unrelated.wait()
                tg.cancel_scope.cancel()
    assert get_events == [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"},
    ]
    post_msgs = [orjson.loads(e.data) for e in logs if e.data]
    assert [m.get("method") for m in post_msgs] == ["notifications/message"] * 3 + [None]


async def test_get_stream_backlog_is_delivered_when_it_connects(serve: Any) -> None:
    srv = serve()
    with anyio.fail_after(15):
        async with httpx.AsyncClient(timeout=10) as c:
            h = await _session(c, srv.url)
            entry = next(iter(srv.app.sessions.values()))

            async def unrelated() -> None:
                await entry.session.notify("notifications/resources/list_changed")

            srv.call(unrelated)
            async with c.stream("GET", srv.url, headers={**h, "accept": "text/event-stream"}) as r:
                async for ev in sse_events(r):
                    if ev.data:
                        assert (
                            orjson.loads(ev.data)["method"]
                            == "notifications/resources/list_changed"
                        )
                        break


@pytest.mark.slow
async def test_10000_sessions_dropped_without_delete_are_reaped() -> None:
    demo = DemoServer()
    demo.keep_sessions = False
    store = InMemoryEventStore()
    app = create_http_app(demo, session_idle_timeout=3600, event_store=store)
    now = [1000.0]
    app.registry.clock = lambda: now[0]  # idle time passes when the test says so
    async with app:
        # Warm up (imports, caches), then take the baseline.
        for _ in range(50):
            assert (await asgi_call(app, "POST", HEADERS, INIT))[0] == 200
        for e in list(app.sessions.values()):
            app.registry.drop(e)
        await anyio.wait_all_tasks_blocked()  # the dropped sessions have unwound
        gc.collect()
        base = len(gc.get_objects())
        with anyio.fail_after(60):
            for _ in range(10_000):
                status, headers, _ = await asgi_call(app, "POST", HEADERS, INIT)
                assert status == 200 and "mcp-session-id" in headers
            assert len(app.sessions) == 10_000
            gc.collect()
            held = len(gc.get_objects()) - base
            # Nobody sends DELETE; the idle timeout ends them.
            now[0] += 3600.5
            app.registry.reap_idle()
            assert not app.sessions
            # The cancelled sessions unwind as the scheduler gets to them (trio runs 10,000
            # cancellations in batches): once every task is blocked, they all have.
            await anyio.wait_all_tasks_blocked()
            gc.collect()
            after = len(gc.get_objects()) - base
    assert store.session_count() == 0
    assert held > 100_000  # 10,000 live sessions are visible...
    # ...and gone: a leak of even one object per session would leave 10,000 behind. The
    # margin is for what the rest of the suite's process allocates meanwhile (its other
    # threads, lazily built caches): in the full trio run 1,339 such objects were seen.
    assert after < 5_000, f"{after} objects still alive after every session expired"


async def test_session_cap_evicts_idle_and_refuses_when_all_busy() -> None:
    demo = DemoServer()
    app = create_http_app(demo, max_sessions=2)
    async with app:
        sids = []
        for _ in range(3):
            status, headers, _ = await asgi_call(app, "POST", HEADERS, INIT)
            assert status == 200
            sids.append(headers["mcp-session-id"])
        # The least recently active idle session made room.
        assert list(app.sessions) == sids[1:]
        status, _, _ = await asgi_call(
            app,
            "POST",
            {**HEADERS, "mcp-session-id": sids[0]},
            b'{"jsonrpc":"2.0","id":2,"method":"ping"}',
        )
        assert status == 404
        # Both remaining sessions busy with a request: a new one is refused (503), nobody evicted.
        async with anyio.create_task_group() as tg:
            for sid in sids[1:]:
                tg.start_soon(
                    asgi_call,
                    app,
                    "POST",
                    {**HEADERS, "mcp-session-id": sid},
                    orjson.dumps(_tool(3, "gated")),
                )
            with anyio.fail_after(5):
                await demo.changes.wait_for(lambda: demo.started.count("gated") == 2)
            assert sum(len(e.transport.requests) for e in app.sessions.values()) == 2
            status, _, body = await asgi_call(app, "POST", HEADERS, INIT)
            assert status == 503 and b"too many sessions" in body
            demo.gate.set()
        # Both survive; their order is that of the two calls' arrival, which is the scheduler's.
        assert sorted(app.sessions) == sorted(sids[1:])


@pytest.mark.req("HTTP-BIND-LOCALHOST")
async def test_serve_http_binds_loopback_and_shuts_down_gracefully(tmp_path: Any) -> None:
    script = tmp_path / "srv.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        "from _http_helpers import DemoServer\n"
        "from mcpkit._app import serve_http\n"
        "serve_http(DemoServer(), port=0)\n"
    )
    proc = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.PIPE)
    served = Served(proc)
    try:
        url = await anyio.to_thread.run_sync(served.url)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with anyio.fail_after(20):
            with open("/proc/net/tcp") as f:
                listening = f.read().splitlines()[1:]
            local = [ln.split()[1] for ln in listening if ln.split()[3] == "0A"]
            assert f"0100007F:{port:04X}" in local  # 127.0.0.1 only
            get_open = anyio.Event()
            async with (
                _GetWatcher(HTTP1Client(), get_open) as http,
                open_streamable_http(url, http_client=http) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                await cs.initialize()
                await get_open.wait()  # the GET stream is open now
                t0 = time.monotonic()
                proc.terminate()
                await anyio.to_thread.run_sync(proc.wait, 10)
                # Open streams did not hold the shutdown up.
                assert time.monotonic() - t0 < 4
        # uvicorn re-raises the signal it handled once it has shut down.
        assert proc.returncode in (0, -15), served.stderr()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        served.close()


async def test_graceful_shutdown_ends_open_streams(demo: DemoServer) -> None:
    app = create_http_app(demo)
    with running(app) as srv, anyio.fail_after(15):
        async with httpx.AsyncClient(timeout=10) as c:
            h = await _session(c, srv.url)
            ended = anyio.Event()

            async def listen(task_status: Any) -> None:
                async with c.stream(
                    "GET", srv.url, headers={**h, "accept": "text/event-stream"}
                ) as r:
                    task_status.started()
                    async for _ in sse_events(r):
                        pass
                ended.set()

            async with anyio.create_task_group() as tg:
                await tg.start(listen)
                t0 = time.monotonic()
                await anyio.to_thread.run_sync(srv.stop)
                await ended.wait()
                assert time.monotonic() - t0 < 4


@pytest.mark.parametrize("anyio_backend", ["trio"])
@pytest.mark.parametrize("json_response", [False, True])
async def test_app_runs_on_trio(anyio_backend: str, json_response: bool) -> None:
    demo = DemoServer()
    app = create_http_app(demo, json_response=json_response)
    with anyio.fail_after(10):
        async with app:
            status, headers, _ = await asgi_call(app, "POST", HEADERS, INIT)
            assert status == 200
            h = {
                **HEADERS,
                "mcp-session-id": headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            status, headers, body = await asgi_call(app, "POST", h, orjson.dumps(_tool(2, "log")))
            assert status == 200
            if json_response:
                msgs = [orjson.loads(body)]
            else:
                from mcpkit._http._sse import SSEParser

                msgs = [orjson.loads(e.data) for e in SSEParser().feed(body) if e.data]
                assert [m.get("method") for m in msgs[:3]] == ["notifications/message"] * 3
            assert msgs[-1]["result"]["content"][0]["text"] == "logged"
            status, _, _ = await asgi_call(app, "DELETE", h)
            assert status == 200 and not app.sessions


@pytest.mark.parametrize("json_response", [False, True])
async def test_cancelled_request_ends_its_stream(
    serve: Any, demo: DemoServer, json_response: bool
) -> None:
    srv = serve(json_response=json_response)
    with anyio.fail_after(10):
        async with httpx.AsyncClient(timeout=10) as c:
            h = await _session(c, srv.url)
            result: dict[str, Any] = {}

            async def call() -> None:
                async with c.stream("POST", srv.url, json=_tool(77, "gated"), headers=h) as r:
                    result["status"] = r.status_code
                    result["body"] = await r.aread()

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await demo.changes.wait_for(lambda: "gated" in demo.started)
                assert any(77 in e.transport.requests for e in srv.app.sessions.values())
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": 77},
                }
                assert (await c.post(srv.url, json=cancel, headers=h)).status_code == 202
            # The POST ended without a response to the cancelled request, and nothing is left open.
            assert b'"result"' not in result["body"] and b'"error"' not in result["body"]
            assert result["status"] == (202 if json_response else 200)
            assert not any(e.transport.requests for e in srv.app.sessions.values())
            await demo.changes.wait_for(lambda: "gated" in demo.cancelled)
            demo.gate.set()
            assert "gated" not in demo.finished  # the handler was cancelled, not finished


@pytest.mark.req("HTTP-GET-POLLING")
async def test_get_stream_primes_and_resumes(serve: Any, demo: DemoServer) -> None:
    rec = Recorder(create_http_app(demo))
    srv = serve(app=rec)
    with anyio.fail_after(15):
        async with httpx.AsyncClient(timeout=10) as c:
            h = await _session(c, srv.url)
            entry = next(iter(srv.app.sessions.values()))

            def notify(method: str) -> None:
                async def go() -> None:
                    await entry.session.notify(method)

                srv.call(go)

            get_h = {**h, "accept": "text/event-stream"}
            async with c.stream("GET", srv.url, headers=get_h) as r:
                events = sse_events(r)
                priming = await events.__anext__()
                assert priming.id and priming.data == "" and priming.retry == 1000
                notify("notifications/tools/list_changed")
                first = await events.__anext__()
                assert orjson.loads(first.data)["method"] == "notifications/tools/list_changed"
                await events.aclose()
            # The server saw us go: the GET's handler is over, and let go of the stream.
            (get,) = [i for i, (_, m, _, _) in enumerate(rec.requests) if m == "GET"]
            await rec.wait_for(lambda: get in rec.finished)
            assert entry.transport.standalone.conn is None
            notify("notifications/prompts/list_changed")  # nobody listening now
            async with c.stream("GET", srv.url, headers={**get_h, "last-event-id": first.id}) as r:
                async for ev in sse_events(r):
                    if ev.data:
                        assert (
                            orjson.loads(ev.data)["method"] == "notifications/prompts/list_changed"
                        )
                        break


async def test_garbage_never_breaks_the_server() -> None:
    import random

    rng = random.Random(5)
    demo = DemoServer()
    app = create_http_app(demo)
    shapes: list[Any] = [
        None, 1, "x", [], {}, [1], {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 7}, {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": []},
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": {"x": 1}}},
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"arguments": "nope"}},
        {"jsonrpc": "2.0", "id": 9, "result": None}, {"jsonrpc": "2.0", "error": {}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {}}},
    ]  # fmt: skip
    async with app:
        status, headers, _ = await asgi_call(app, "POST", HEADERS, INIT)
        h = {
            **HEADERS,
            "mcp-session-id": headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        with anyio.fail_after(30):
            for i in range(300):
                kind = rng.randrange(4)
                if kind == 0:
                    body = bytes(rng.randrange(256) for _ in range(rng.randrange(64)))
                elif kind == 1:
                    body = orjson.dumps(rng.choice(shapes))
                elif kind == 2:
                    body = orjson.dumps(rng.choice(shapes))[: rng.randrange(1, 30)]
                else:
                    body = orjson.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": 1000 + i,
                            "method": rng.choice(["ping", "tools/list", "nope/x"]),
                        }
                    )
                hdrs = dict(h)
                if rng.random() < 0.1:
                    hdrs["mcp-protocol-version"] = rng.choice(["", "x", "2099-01-01", "2025-03-26"])
                if rng.random() < 0.05:
                    hdrs["mcp-session-id"] = "\x7f" * rng.randrange(1, 10)
                status, _, _ = await asgi_call(app, "POST", hdrs, body)
                assert status in (200, 202, 400, 404, 409), (status, body)
            # Still serving, same session.
            status, _, body = await asgi_call(
                app, "POST", h, orjson.dumps(_tool(1, "echo", text="alive"))
            )
            assert status == 200 and b"alive" in body


async def test_send_failing_before_the_stream_starts_lets_go_of_the_connection() -> None:
    # The ASGI server's send can raise (the client went away) before a slow request's SSE
    # stream has started: the stream's connection is released, the tool goes on, and its
    # result is kept for resumption.
    demo = DemoServer()
    store = InMemoryEventStore()
    app = create_http_app(demo, event_store=store)
    async with app:
        status, headers, _ = await asgi_call(app, "POST", HEADERS, INIT)
        assert status == 200
        sid = headers["mcp-session-id"]
        entry = app.sessions[sid]

        async def gone(m: Any) -> None:
            raise OSError("the client is gone")

        body = orjson.dumps(_tool(7, "slow", seconds=0.3))
        with anyio.fail_after(5), pytest.raises(OSError):
            await asgi_call(app, "POST", {**HEADERS, "mcp-session-id": sid}, body, send=gone)
        stream = entry.transport.requests[7]
        assert stream.conn_recv is None  # released, not left attached to a dead response
        with anyio.fail_after(5):
            await demo.changes.wait_for(lambda: "slow" in demo.finished)
            # The result goes to the store, and the stream away, in this loop's tasks: done
            # once they all wait.
            await anyio.wait_all_tasks_blocked()
        assert store.session_count() == 1 and 7 not in entry.transport.requests
