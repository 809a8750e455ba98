"""Our client transport with our sessions, against the app in process.

The real HTTP client transports run over :class:`mcpkit.lowlevel.ASGIClient`, which calls the
app in the test's own event loop: every code path of the transports above the socket (SSE and
JSON answers, the GET stream, resumption, 404 and a new session, DELETE on close), without a
server. What needs a real socket (our HTTP client's keep-alive connections, TLS, auth hooks, a
trio client against uvicorn) and the end-to-end checks over uvicorn are in
``test_uvicorn_end_to_end.py``.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import orjson
import pytest
from _http_helpers import CLIENT_INFO, IN_PROCESS_BASE, DemoServer, Recorder, broken_app

from mcpkit._app import create_http_app, create_sse_app
from mcpkit._exceptions import ConnectionClosed, ProtocolError
from mcpkit._http import SessionExpired, open_http, open_sse, open_streamable_http
from mcpkit._session import ClientSession
from mcpkit.lowlevel import ASGIClient

try:
    from tests._schema import WireRecorder
except ImportError:  # tests/ is not a package: pytest put tests/ itself on sys.path
    from _schema import WireRecorder  # type: ignore[no-redef]

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]
URL = IN_PROCESS_BASE + "/mcp"


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def call(cs: ClientSession, name: str, **args: Any) -> dict[str, Any]:
    r = await cs.send_request("tools/call", {"name": name, "arguments": args}, timeout=10)
    assert isinstance(r, dict)
    return r


@pytest.mark.req(
    "HTTP-CLIENT-BOTH-RESPONSE-TYPES",
    "HTTP-CLIENT-POST",
    "HTTP-CLIENT-ACCEPT-BOTH",
    "HTTP-BODY-SINGLE-MESSAGE",
    "HTTP-CLIENT-SESSION-HEADER",
    "HTTP-CLIENT-PROTOCOL-VERSION",
    "LIFECYCLE-HTTP-PROTOCOL-VERSION-HEADER",
    "HTTP-CLIENT-NEGOTIATED-VERSION",
    "HTTP-CLIENT-DELETE",
    "HTTP-CLIENT-ACCEPT-GET",
    "HTTP-SSE-INCLUDE-RESPONSE",
    "HTTP-SSE-TERMINATE-AFTER-RESPONSE",
)
@pytest.mark.parametrize("json_response", [False, True])
async def test_session_over_http(demo: DemoServer, json_response: bool) -> None:
    rec = Recorder(create_http_app(demo, json_response=json_response))
    with anyio.fail_after(15):
        async with ASGIClient(rec) as http:
            async with (
                open_streamable_http(URL, http_client=http) as t,
                ClientSession(
                    wire := WireRecorder(t, side="client"),
                    client_info=CLIENT_INFO,
                    protocol_version="2025-06-18",
                ) as cs,
            ):
                await cs.initialize()
                assert cs.protocol_version == "2025-06-18"
                assert text(await call(cs, "echo", text="hi")) == "hi"
                tools = await cs.send_request("tools/list", timeout=10)
                assert len(tools["tools"]) == 7
                sid = t.session_id
                assert sid and len(rec.app.sessions) == 1
                # Wait for the GET stream to be up, so the recording shows it.
                await rec.wait_for(lambda: any(m == "GET" for _, m, _, _ in rec.requests))
            assert len(rec.app.sessions) == 0  # DELETE freed it
    assert wire.check() == "2025-06-18"
    posts = [(h, b) for _, m, h, b in rec.requests if m == "POST"]
    assert len(posts) == 4  # initialize, initialized, tools/call, tools/list: one POST each
    for h, b in posts:
        assert "application/json" in h["accept"] and "text/event-stream" in h["accept"]
        assert isinstance(orjson.loads(b), dict)
    for h, _ in posts[1:]:
        assert h["mcp-session-id"] == sid
        assert h["mcp-protocol-version"] == "2025-06-18"
    gets = [h for _, m, h, _ in rec.requests if m == "GET"]
    assert gets and all(
        h["accept"] == "text/event-stream" and h["mcp-session-id"] == sid for h in gets
    )
    assert rec.requests[-1][1] == "DELETE" and rec.requests[-1][2]["mcp-session-id"] == sid


@pytest.mark.req("HTTP-SSE-RELATED-MESSAGES")
async def test_sampling_travels_on_the_request_stream(demo: DemoServer) -> None:
    async def sample(ctx: Any, params: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "sampled!"}, "model": "m"}

    # No GET stream: the server's request can only reach us on the tool call's stream.
    with anyio.fail_after(15):
        async with (
            ASGIClient(create_http_app(demo, get_stream=False)) as http,
            open_streamable_http(URL, http_client=http) as t,
            ClientSession(
                wire := WireRecorder(t, side="client"),
                client_info=CLIENT_INFO,
                capabilities={"sampling": {}},
                handlers={"sampling/createMessage": sample},
            ) as cs,
        ):
            await cs.initialize()
            assert text(await call(cs, "sample")) == "sampled!"
    wire.check()
    assert any(
        isinstance(r.message, dict) and r.message.get("method") == "sampling/createMessage"
        for r in wire.messages
    )


async def test_1000_progress_notifications_over_sse(demo: DemoServer) -> None:
    got: list[float] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        got.append(p)

    with anyio.fail_after(20):
        async with (
            ASGIClient(create_http_app(demo)) as http,
            open_streamable_http(URL, http_client=http) as t,
            ClientSession(wire := WireRecorder(t, side="client"), client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            r = await cs.send_request(
                "tools/call",
                {"name": "progress", "arguments": {"n": 1000}},
                on_progress=on_progress,
                timeout=15,
            )
            assert text(r) == "sent 1000"
            wire.check()
            # On SSE, the stream is ordered: every notification arrived before the result.
            assert got == [float(i) for i in range(1, 1001)]


@pytest.mark.req(
    "HTTP-RETRY-BEFORE-CLOSE",
    "HTTP-CLIENT-POLL",
    "HTTP-CLIENT-RESPECT-RETRY",
    "HTTP-CLIENT-RESUME-GET",
)
async def test_server_closes_stream_and_client_resumes_after_retry(demo: DemoServer) -> None:
    rec = Recorder(create_http_app(demo))
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params["data"])

    with anyio.fail_after(15):
        async with (
            ASGIClient(rec) as http,
            open_streamable_http(URL, http_client=http) as t,
            ClientSession(
                t, client_info=CLIENT_INFO, notification_handlers={"notifications/message": on_log}
            ) as cs,
        ):
            await cs.initialize()
            t0 = time.monotonic()
            assert text(await call(cs, "poll", retry=300)) == "polled"
            assert logs == ["before", "after"]
    resumes = [(ts, h) for ts, m, h, _ in rec.requests if m == "GET" and "last-event-id" in h]
    assert len(resumes) == 1
    ts, h = resumes[0]
    assert ts - t0 >= 0.3  # waited the retry the server asked for
    assert h["last-event-id"].endswith("_1")  # the "before" notification was the last seen


async def test_session_expired_is_clear(demo: DemoServer) -> None:
    app = create_http_app(demo)
    with anyio.fail_after(15):
        async with (
            ASGIClient(app) as http,
            open_streamable_http(URL, reinitialize=False, http_client=http) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            entry = next(iter(app.sessions.values()))
            app.registry.drop(entry)
            with pytest.raises(ProtocolError, match="404"):
                await call(cs, "echo", text="x")
            with pytest.raises(SessionExpired):
                await call(cs, "echo", text="x")
            assert isinstance(SessionExpired("x"), ConnectionClosed)


@pytest.mark.req("HTTP-CLIENT-404-NEW-SESSION")
@pytest.mark.parametrize("json_response", [False, True])
async def test_404_starts_a_new_session_and_the_call_goes_through(
    demo: DemoServer, json_response: bool
) -> None:
    rec = Recorder(create_http_app(demo, json_response=json_response))
    app = rec.app

    def get_stream_of(sid: str | None) -> bool:
        return any(m == "GET" and h.get("mcp-session-id") == sid for _, m, h, _ in rec.requests)

    with anyio.fail_after(15):
        async with (
            ASGIClient(rec) as http,
            open_streamable_http(URL, http_client=http) as t,
            ClientSession(t, client_info=CLIENT_INFO, protocol_version="2025-06-18") as cs,
        ):
            await cs.initialize()
            first = t.session_id
            assert first is not None and list(app.sessions) == [first]
            await rec.wait_for(lambda: get_stream_of(first))  # the GET stream is up

            for round_ in range(2):
                for e in list(app.sessions.values()):
                    app.registry.drop(e)
                mark = len(rec.requests)
                # Several calls meet the 404 at once: one new session serves them all.
                answers: dict[int, str] = {}

                async def one(i: int, answers: dict[int, str]) -> None:
                    answers[i] = text(await call(cs, "echo", text=f"again {i}"))

                async with anyio.create_task_group() as tg:
                    for i in range(5):
                        tg.start_soon(one, i, answers)
                assert answers == {i: f"again {i}" for i in range(5)}
                assert t.renewals == round_ + 1 and not t.session_expired
                assert t.session_id not in (None, first) and list(app.sessions) == [t.session_id]
                first = t.session_id
                later = rec.requests[mark:]
                inits = [
                    (h, orjson.loads(b))
                    for _, m, h, b in later
                    if m == "POST" and b and b"initialize" in b and b"initialized" not in b
                ]
                # A new InitializeRequest without a session id, same parameters as the first.
                assert len(inits) == 1
                h, body = inits[0]
                assert "mcp-session-id" not in h
                assert body["params"]["protocolVersion"] == "2025-06-18"
                assert body["params"]["clientInfo"] == CLIENT_INFO
                assert any(
                    m == "POST" and h.get("mcp-session-id") == t.session_id and b"initialized" in b
                    for _, m, h, b in later
                )
            # The GET stream followed the session: server notifications still reach us.
            await rec.wait_for(lambda: get_stream_of(t.session_id))


async def test_404_when_no_new_session_can_start(demo: DemoServer) -> None:
    app = create_http_app(demo, max_sessions=1)
    with anyio.fail_after(15):
        async with (
            ASGIClient(app) as http,
            open_streamable_http(URL, http_client=http) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            entry = next(iter(app.sessions.values()))
            app.registry.drop(entry)
            app.options.max_sessions = 0  # the server takes no new session (503)
            t0 = time.monotonic()
            with pytest.raises(ProtocolError, match="404"):
                await call(cs, "echo", text="x")
            assert time.monotonic() - t0 < 3
            assert t.session_expired
            with pytest.raises(SessionExpired):
                await call(cs, "echo", text="x")


# "bad-json" is over a socket, in test_uvicorn_end_to_end.py (ASGIClient wraps what the
# transport raises while reading in an ExceptionGroup, so it fails differently there).
@pytest.mark.parametrize("kind", ["500", "midstream", "garbage-sse"])
async def test_broken_server_fails_promptly(kind: str) -> None:
    async with ASGIClient(broken_app(kind), lifespan=False) as http:
        t0 = time.monotonic()
        with anyio.fail_after(10):
            async with (
                open_streamable_http(URL, http_client=http) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                with pytest.raises(ProtocolError) as ei:
                    await cs.initialize(timeout=None)
        assert time.monotonic() - t0 < 3
        expected = {
            "500": "500",
            "midstream": "closed the stream",
            "garbage-sse": "closed the stream",
        }
        assert expected[kind] in str(ei.value)


@pytest.mark.req("HTTP-CLIENT-CANCEL-EXPLICIT")
async def test_timeout_sends_cancellation(demo: DemoServer) -> None:
    # The server asks for a short reconnection delay, so that a client wrongly resuming the
    # cancelled call would do so well within the observation window below.
    rec = Recorder(create_http_app(demo, retry_ms=50))
    with anyio.fail_after(15):
        async with (
            ASGIClient(rec) as http,
            open_streamable_http(URL, http_client=http) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            with pytest.raises(Exception, match="no response"):
                await cs.send_request("tools/call", {"name": "gated", "arguments": {}}, timeout=0.3)
            await rec.wait_for(
                lambda: any(b.get("method") == "notifications/cancelled" for b in rec.bodies())
            )
            # Something that must *not* happen has no event: watch for it a while.
            await anyio.sleep(0.3)  # a client wrongly resuming the cancelled call would GET now
            assert not any(e.transport.requests for e in rec.app.sessions.values())
    call_id = next(b["id"] for b in rec.bodies() if b.get("method") == "tools/call")
    cancel = next(b for b in rec.bodies() if b.get("method") == "notifications/cancelled")
    assert cancel["params"]["requestId"] == call_id
    assert not any("last-event-id" in h for _, _, h, _ in rec.requests)


async def test_legacy_sse_transport_and_fallback(demo: DemoServer) -> None:
    with anyio.fail_after(15):
        async with ASGIClient(create_sse_app(demo)) as http:
            async with (
                open_sse(IN_PROCESS_BASE + "/sse", http_client=http) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                await cs.initialize()
                assert text(await call(cs, "echo", text="legacy")) == "legacy"
            # open_http: the initialize POST to /sse gets 404/405, so it falls back to HTTP+SSE.
            async with (
                open_http(IN_PROCESS_BASE + "/sse", http_client=http) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                await cs.initialize()
                assert text(await call(cs, "log")) == "logged"


async def test_open_http_prefers_streamable(demo: DemoServer) -> None:
    with anyio.fail_after(15):
        async with (
            ASGIClient(create_http_app(demo)) as http,
            open_http(URL, http_client=http) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            assert t.session_id is not None and t._legacy is None
            assert text(await call(cs, "echo", text="new")) == "new"


# The app starts its host lazily when the framework does not forward lifespan events to it:
# asyncio only (a task outliving the request that started it).
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_mounted_in_starlette(demo: DemoServer, anyio_backend: str) -> None:
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Mount, Route

    async def hello(request: Any) -> PlainTextResponse:
        return PlainTextResponse("hello")

    mcp_app = create_http_app(demo, path="/mcp")
    app = Starlette(routes=[Route("/hello", hello), Mount("/api", app=mcp_app)])
    with anyio.fail_after(15):
        async with ASGIClient(app) as http:
            async with (
                open_streamable_http(IN_PROCESS_BASE + "/api/mcp", http_client=http) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                await cs.initialize()
                assert text(await call(cs, "echo", text="mounted")) == "mounted"
            r = await http.request("GET", IN_PROCESS_BASE + "/hello")
            assert await r.aread() == b"hello"
            # Starlette does not forward lifespan to mounts: the app started its host lazily.
            await mcp_app.aclose()


@pytest.mark.parametrize("json_response", [False, True])
async def test_concurrent_calls_each_get_their_own_answer(
    demo: DemoServer, json_response: bool
) -> None:
    with anyio.fail_after(15):
        async with (
            ASGIClient(create_http_app(demo, json_response=json_response)) as http,
            open_streamable_http(URL, http_client=http) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            answers: dict[int, str] = {}

            async def one(i: int) -> None:
                if i % 2:
                    await call(cs, "slow", seconds=0.2)
                answers[i] = text(await call(cs, "echo", text=f"answer {i}"))

            t0 = time.monotonic()
            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(one, i)
            assert answers == {i: f"answer {i}" for i in range(40)}
            assert time.monotonic() - t0 < 3  # the slow calls ran side by side


async def test_mounted_in_fastapi(demo: DemoServer) -> None:
    fastapi = pytest.importorskip("fastapi")
    mcp_app = create_http_app(demo, path="/")

    async def lifespan(app: Any) -> Any:
        async with mcp_app:  # FastAPI does not forward lifespan to mounts: enter it here
            yield

    from contextlib import asynccontextmanager

    app = fastapi.FastAPI(lifespan=asynccontextmanager(lifespan))
    app.mount("/mcp", mcp_app)
    with anyio.fail_after(15):
        async with (
            ASGIClient(app) as http,
            open_streamable_http(IN_PROCESS_BASE + "/mcp/", http_client=http) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            assert text(await call(cs, "echo", text="fastapi")) == "fastapi"


async def test_legacy_session_ends_with_its_stream(demo: DemoServer) -> None:
    app = create_sse_app(demo)
    with anyio.fail_after(15):
        async with ASGIClient(app) as http:
            async with (
                open_sse(IN_PROCESS_BASE + "/sse", http_client=http) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                await cs.initialize()
                assert len(app.sessions) == 1
            # Closing the client ended its stream, and the app has seen it finish (the
            # in-process client waits for that): the session went with it.
            assert not app.sessions


async def test_one_app_serves_old_and_new_clients(demo: DemoServer) -> None:
    app = create_http_app(demo, legacy_sse=True)
    with anyio.fail_after(15):
        async with ASGIClient(app) as http:
            async with (
                open_http(URL, http_client=http) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                await cs.initialize()
                assert t._legacy is None
                assert text(await call(cs, "echo", text="new")) == "new"
            async with (
                open_sse(IN_PROCESS_BASE + "/sse", http_client=http) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                await cs.initialize()
                assert text(await call(cs, "echo", text="old")) == "old"
