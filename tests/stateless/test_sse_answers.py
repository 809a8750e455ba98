"""How a 2026-07-28 request is answered when the app streams (``json_response`` off, the default).

A request that asked for nothing live (no ``progressToken``, no log level) is served in the
ASGI task and answered with one SSE body; one that asked for progress gets it as it comes.
Either way, the client closing the response stream cancels the request
(basic/transports/streamable-http.mdx: at 2026-07-28 a request is cancelled by closing its
stream), in process and over a real socket.
"""

from __future__ import annotations

import threading

import anyio
import anyio.to_thread
import httpx2
import orjson
import pytest
from _stateless_helpers import headers_for, meta, post, request, stream
from tests.http._http_helpers import running

from mcpkit import Context, Server
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio


async def _wait(event: threading.Event) -> None:
    assert await anyio.to_thread.run_sync(event.wait, 10), "not within 10 s"


class Watched:
    """A tool that waits until cancelled, saying when it started and how it ended (thread
    events: over a socket the app runs on the server thread's loop)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()

    def server(self) -> Server:
        server = Server("sse-answers")

        @server.tool()
        def echo(text: str) -> str:
            """Echo the text."""
            return text

        @server.tool()
        async def wait(ctx: Context) -> str:
            """Report progress once (if asked), then wait until cancelled."""
            await ctx.report_progress(1, 2)
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled.set()
            return "never"  # pragma: no cover

        return server


async def test_a_request_that_asked_for_nothing_live_is_one_sse_body() -> None:
    async with ASGIClient(Watched().server().http_app()) as http:
        answer = await post(
            http, request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        )
    assert answer.status == 200
    assert answer.content_type.startswith("text/event-stream")
    assert answer.messages == [answer.response]  # the answer alone, no notification
    assert answer.result["content"] == [{"type": "text", "text": "hi"}]


def _live_server(release: anyio.Event | None = None) -> Server:
    server = Server("live-answers")

    @server.tool()
    async def steps(ctx: Context) -> str:
        """Reports two steps; between them waits for ``release`` (when given)."""
        await ctx.report_progress(1, 2)
        if release is not None:
            await release.wait()
        await ctx.report_progress(2, 2)
        return "done"

    return server


async def test_a_live_request_answered_quickly_is_one_body_with_what_it_said_first() -> None:
    # Progress asked for, the answer there before anything went out: one body (with a
    # Content-Length), its notifications in order before the answer.
    msg = request("tools/call", {"name": "steps", "arguments": {}, "_meta": meta(progressToken=7)})
    async with ASGIClient(_live_server().http_app()) as http:
        with anyio.fail_after(10):
            resp = await http.post(
                "http://127.0.0.1:8000/mcp", content=orjson.dumps(msg), headers=headers_for(msg)
            )
        assert resp.headers.get("content-length") is not None
        answer = await post(http, msg)
    assert answer.content_type.startswith("text/event-stream")
    assert [n["params"]["progress"] for n in answer.notifications] == [1, 2]
    assert answer.messages[-1] == answer.response and answer.result["content"][0]["text"] == "done"


async def test_a_live_request_still_running_streams_what_it_says_as_it_comes() -> None:
    # The tool waits after its first step until the test has read that step: only a
    # stream that sends progress while the request runs lets this finish.
    release = anyio.Event()
    msg = request("tools/call", {"name": "steps", "arguments": {}, "_meta": meta(progressToken=7)})
    async with ASGIClient(_live_server(release).http_app()) as http:
        with anyio.fail_after(10):
            async with stream(http, msg) as s:
                first = await s.next()
                assert first["method"] == "notifications/progress"
                assert first["params"]["progress"] == 1
                release.set()
                second = await s.next()
                assert second["params"]["progress"] == 2
                last = await s.next()
                assert last["result"]["content"][0]["text"] == "done"


async def test_a_live_request_streams_over_a_socket_from_the_task_that_took_it_over() -> None:
    # uvicorn on its own thread: the stream is sent from the task that took it over, not
    # the ASGI task; the tool goes on only once the client has read its first step.
    release = threading.Event()
    server = Server("live-socket")

    @server.tool()
    async def steps(ctx: Context) -> str:
        """Reports a step, waits for the client to have seen it, reports another."""
        await ctx.report_progress(1, 2)
        if not await anyio.to_thread.run_sync(release.wait, 10):
            return "the client never saw the first step"
        await ctx.report_progress(2, 2)
        return "done"

    msg = request("tools/call", {"name": "steps", "arguments": {}, "_meta": meta(progressToken=7)})
    seen: list[object] = []
    with running(server.http_app()) as srv, anyio.fail_after(15):
        async with httpx2.AsyncClient(timeout=10) as http:
            url = f"http://127.0.0.1:{srv.port}/mcp"
            body = orjson.dumps(msg)
            async with http.stream("POST", url, content=body, headers=headers_for(msg)) as r:
                assert r.headers.get("content-length") is None  # a stream, not one body
                async for line in r.aiter_lines():
                    if line.startswith("data:"):
                        seen.append(orjson.loads(line[5:]))
                        if len(seen) == 1:
                            release.set()
    assert [m["params"]["progress"] for m in seen[:2]] == [1, 2]  # type: ignore[index]
    assert seen[2]["result"]["content"][0]["text"] == "done"  # type: ignore[index]


@pytest.mark.parametrize(
    "msg",
    [
        request("tools/call", {"name": "nope", "arguments": {}}),
        request("tools/call", {"name": "echo", "arguments": {"text": 3}}),
        request("no/such/method"),
    ],
    ids=["unknown-tool", "bad-arguments", "unknown-method"],
)
async def test_an_error_is_answered_as_the_json_app_answers_it(msg: dict[str, object]) -> None:
    # Same status and same message; a JSON-RPC error with an HTTP error status is a JSON body.
    answers = []
    for json_response in (False, True):
        app = Watched().server().http_app(json_response=json_response)
        async with ASGIClient(app) as http:
            answers.append(await post(http, msg, headers_for(msg), validate=False))
    streamed, plain = answers
    assert (streamed.status, streamed.messages) == (plain.status, plain.messages)
    if streamed.status != 200:
        assert streamed.content_type.startswith("application/json")


async def test_closing_the_stream_cancels_the_request_in_process() -> None:
    # A stream under way (progress asked for: the head went out). One answered at once has no
    # head before its answer: its client can only drop the connection (the socket test).
    watched = Watched()
    msg = request(
        "tools/call", {"name": "wait", "arguments": {}, "_meta": meta(progressToken="p1")}
    )
    async with ASGIClient(watched.server().http_app()) as http:
        with anyio.fail_after(10):
            async with stream(http, msg) as s:
                await _wait(watched.started)
                progress = await s.next()
                assert progress["method"] == "notifications/progress"
            await _wait(watched.cancelled)  # closing the stream ended the tool


@pytest.mark.parametrize("live", [False, True], ids=["at-once", "streamed"])
async def test_closing_the_connection_cancels_the_request_over_a_socket(live: bool) -> None:
    watched = Watched()
    params: dict[str, object] = {"name": "wait", "arguments": {}}
    if live:
        params["_meta"] = meta(progressToken="p1")
    msg = request("tools/call", params)
    with running(watched.server().http_app()) as srv, anyio.fail_after(15):
        async with await anyio.connect_tcp("127.0.0.1", srv.port) as conn:
            body = orjson.dumps(msg)
            head = "".join(f"{k}: {v}\r\n" for k, v in headers_for(msg).items())
            await conn.send(
                f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{srv.port}\r\n{head}"
                f"content-length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await _wait(watched.started)
        # The connection is closed (no DELETE, no cancellation message): the tool ends.
        await _wait(watched.cancelled)
