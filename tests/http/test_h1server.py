"""mcpkit's HTTP/1.1 server protocol (``mcpkit._http._h1server``) on real sockets.

``serve_app`` runs uvicorn with our protocol in the test's own loop (port 0) serving small
ASGI apps; a raw TCP client checks the bytes on the wire: keep-alive and close, the scope,
response framing (Content-Length, chunked, close-delimited), pipelining, request bodies
(split, chunked, 100-continue), HEAD, failing apps, the client leaving, the concurrency
limit, graceful shutdown. Hostile input: test_h1server_hostile.py; the mcpkit app and its
direct way in: test_h1server_mcp.py. uvicorn runs on asyncio only.
"""

from __future__ import annotations

import anyio
import pytest
from _h1_wire import H1_MARKS, WAIT, Launcher, PlainApp, counting_writes, request

from mcpkit._http import _h1server

pytestmark = H1_MARKS


# ------------------------------------------------------------------ keep-alive and close


async def test_two_requests_on_one_keep_alive_connection_are_both_answered(
    launcher: Launcher,
) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        for body in (b"first", b"second"):
            await c.send(request("POST", "/echo", body))
            r = await c.response()
            assert (r.status, r.body) == (200, b"POST /echo|" + body), r
            assert r.get("connection") is None
        assert not c.eof


async def test_a_connection_close_request_is_answered_with_close_then_closed(
    launcher: Launcher,
) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("POST", "/echo", b"bye", {"connection": "close"}))
        r = await c.response()
        assert (r.status, r.body, r.get("connection")) == (200, b"POST /echo|bye", "close")
        await c.assert_closed()


async def test_an_http10_request_without_keep_alive_is_answered_then_closed(
    launcher: Launcher,
) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("POST", "/echo", b"old", version="1.0"))
        r = await c.response()
        assert (r.status, r.body, r.get("connection")) == (200, b"POST /echo|old", "close")
        assert r.raw.startswith(b"HTTP/1.1 200 OK\r\n")
        await c.assert_closed()


async def test_a_bodiless_request_gives_the_app_an_empty_body_then_an_answer(
    launcher: Launcher,
) -> None:
    """ASGI: the first ``receive`` of a request without a body (GET, Content-Length: 0) is
    ``http.request`` with an empty body, not a wait for the client to leave."""
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("GET", "/echo"))
        r = await c.response()
        assert (r.status, r.body) == (200, b"GET /echo|"), r
        await c.send(request("POST", "/echo", headers={"content-length": "0"}))
        r = await c.response()
        assert (r.status, r.body) == (200, b"POST /echo|"), r


async def test_the_scope_describes_the_request(launcher: Launcher) -> None:
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv, srv.connect() as c:
        head = request("POST", "/ech%6F?a=1&b=%20", b"x", {"X-Custom": "One", "x-custom": "two"})
        await c.send(head)
        r = await c.response()
        assert (r.status, r.body) == (200, b"POST /echo|x")
        await c.send(b"GET http://127.0.0.1/static?q HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        assert (await c.response()).body == b"static body"
        first, absolute = app.scopes
        client = first.pop("client")
        assert client[0] == "127.0.0.1" and isinstance(client[1], int)
        assert first == {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "server": ("127.0.0.1", srv.port),
            "scheme": "http",
            "method": "POST",
            "root_path": "",
            "path": "/echo",
            "raw_path": b"/ech%6F",
            "query_string": b"a=1&b=%20",
            "headers": [
                (b"host", b"127.0.0.1"),
                (b"x-custom", b"One"),
                (b"x-custom", b"two"),
                (b"content-length", b"1"),
            ],
        }
        assert (absolute["path"], absolute["raw_path"], absolute["query_string"]) == (
            "/static",
            b"/static",
            b"q",
        )


# ------------------------------------------------------------------ response framing


async def test_a_sized_response_keeps_its_content_length(launcher: Launcher) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("GET", "/static"))
        r = await c.response()
        assert (r.status, r.all("content-length"), r.body) == (200, ["11"], b"static body")
        assert r.get("transfer-encoding") is None
        assert r.raw.endswith(b"\r\n\r\nstatic body")
        await c.still_open()


async def test_a_whole_body_response_without_a_length_is_framed_and_complete(
    launcher: Launcher,
) -> None:
    """One ``http.response.body`` and no Content-Length from the app: framed either way
    (the module's docstring: a response without a length has its head written at
    ``http.response.start``, so chunked), the body whole, the connection kept."""
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("GET", "/whole"))
        r = await c.response()
        assert (r.status, r.body) == (200, b"whole body")
        if r.get("content-length") is None:
            assert r.raw.endswith(b"\r\n\r\na\r\nwhole body\r\n0\r\n\r\n"), r
        else:
            assert r.get("content-length") == "10" and r.get("transfer-encoding") is None
        await c.still_open()


async def test_a_streamed_response_is_chunked_on_http11(launcher: Launcher) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("GET", "/stream"))
        r = await c.response()
        assert (r.status, r.get("transfer-encoding"), r.get("content-length")) == (
            200,
            "chunked",
            None,
        )
        assert r.raw.endswith(b"\r\n\r\n3\r\none\r\n3\r\ntwo\r\n5\r\nthree\r\n0\r\n\r\n"), r
        assert (r.chunks, r.body) == ([3, 3, 5], b"onetwothree")
        await c.still_open()


async def test_a_streamed_response_is_close_delimited_on_http10(launcher: Launcher) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("GET", "/stream", version="1.0", headers={"connection": "keep-alive"}))
        r = await c.response()
        assert r.get("transfer-encoding") is None and r.get("content-length") is None, r
        assert (r.status, r.get("connection"), r.body) == (200, "close", b"onetwothree")
        assert c.eof  # the body ended with the connection


async def test_an_unsized_responses_head_goes_out_before_its_body(launcher: Launcher) -> None:
    """A stream (SSE) without a length: the client gets the head at once."""
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv, srv.connect() as c:
        await c.send(request("GET", "/late-body"))
        await app.log.wait_for("started")
        head = await c.until(b"\r\n\r\n")  # before the body was sent
        assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"transfer-encoding: chunked" in head
        app.release.set()
        assert await c.until(b"0\r\n\r\n") == b"4\r\nlate\r\n0\r\n\r\n"
        await c.still_open()


async def test_the_apps_content_length_frames_a_body_sent_in_parts(launcher: Launcher) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("GET", "/length"))
        r = await c.response()
        assert (r.status, r.all("content-length"), r.body) == (200, ["5"], b"abcde")
        assert r.get("transfer-encoding") is None
        await c.still_open()


async def test_a_sized_json_response_goes_out_in_one_write(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    with counting_writes(monkeypatch) as writes:
        async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
            await c.send(request("GET", "/json"))
            r = await c.response()
            assert (r.status, r.get("content-length"), r.json()) == (200, "12", {"ok": True})
            assert writes.all == [r.raw]  # head and body: one write


# ------------------------------------------------------------------ pipelining


async def test_pipelined_requests_are_answered_one_at_a_time_in_order(
    launcher: Launcher,
) -> None:
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv, srv.connect() as c:
        await c.send(
            request("GET", "/hold")
            + request("POST", "/echo", b"second")
            + request("GET", "/stream")
        )
        await app.log.wait_for("held")
        assert [s["path"] for s in app.scopes] == ["/hold"]  # the next waits its turn
        app.release.set()
        answers = [await c.response() for _ in range(3)]
        assert [(r.status, r.body) for r in answers] == [
            (200, b"released"),
            (200, b"POST /echo|second"),
            (200, b"onetwothree"),
        ]
        assert [s["path"] for s in app.scopes] == ["/hold", "/echo", "/stream"]
        await c.still_open()


# ------------------------------------------------------------------ request bodies


async def test_a_content_length_body_sent_in_parts_reaches_the_app_as_it_comes(
    launcher: Launcher,
) -> None:
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv, srv.connect() as c:
        head = request("POST", "/echo", headers={"content-length": "11"})
        await c.send(head + b"hello ")
        await app.log.wait_for(("part", b"hello "))
        await c.send(b"world")
        r = await c.response()
        assert (r.status, r.body) == (200, b"POST /echo|hello world")
        assert app.log.items == [("part", b"hello "), ("part", b"world")]
        await c.still_open()


async def test_a_chunked_request_body_is_decoded(launcher: Launcher) -> None:
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv, srv.connect() as c:
        head = request("POST", "/echo", headers={"transfer-encoding": "chunked"})
        await c.send(head + b"6\r\nhello \r\n")
        await app.log.wait_for(("part", b"hello "))
        await c.send(b"5;ext=1\r\nworld\r\n0\r\n\r\n")
        r = await c.response()
        assert (r.status, r.body) == (200, b"POST /echo|hello world")
        await c.still_open()


async def test_expect_100_continue_is_answered_once_the_app_reads(launcher: Launcher) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(
            request("POST", "/echo", headers={"content-length": "4", "expect": "100-continue"})
        )
        interim = await c.response()
        assert interim.raw == b"HTTP/1.1 100 Continue\r\n\r\n"
        await c.send(b"body")
        r = await c.response()
        assert (r.status, r.body) == (200, b"POST /echo|body")
        await c.still_open()


async def test_expect_100_continue_is_not_answered_when_the_app_does_not_read(
    launcher: Launcher,
) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(
            request("POST", "/static", headers={"content-length": "4", "expect": "100-continue"})
        )
        r = await c.response()
        assert (r.status, r.body) == (200, b"static body")  # no 100 before it
        # The body never came: what would follow cannot be told apart from it.
        await c.assert_closed()


# ------------------------------------------------------------------ HEAD


@pytest.mark.parametrize("path", ["/static", "/whole", "/stream"])
async def test_a_head_request_gets_the_headers_and_no_body(launcher: Launcher, path: str) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("HEAD", path))
        r = await c.response("HEAD")
        assert r.status == 200 and r.raw.endswith(b"\r\n\r\n"), r
        if path == "/static":
            assert r.get("content-length") == "11"
        # No body bytes came (nor a chunk terminator): the next bytes on the wire are the
        # next response.
        await c.still_open()


# ------------------------------------------------------------------ failing apps


async def test_an_app_raising_before_its_response_gets_500_and_close(launcher: Launcher) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("GET", "/raise-before"))
        r = await c.response()
        assert (r.status, r.get("connection")) == (500, "close")
        await c.assert_closed()


async def test_an_app_raising_mid_response_cuts_the_connection(launcher: Launcher) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("GET", "/raise-after"))
        wire = await c.rest()
        assert wire.startswith(b"HTTP/1.1 200 OK\r\n"), wire
        assert b"transfer-encoding: chunked\r\n" in wire
        assert wire.endswith(b"\r\n\r\n7\r\npartial\r\n"), wire  # no terminating chunk


async def test_an_app_returning_without_a_response_gets_500(launcher: Launcher) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("POST", "/no-response", b"x"))
        r = await c.response()
        assert (r.status, r.get("connection")) == (500, "close")
        await c.assert_closed()


@pytest.mark.parametrize("path", ["/bad-header", "/empty-name"])
async def test_an_invalid_response_header_is_never_written(launcher: Launcher, path: str) -> None:
    """A header value with CR LF (header injection) or an empty name: the app's send
    raises, the app fails before anything went out, and the client gets a 500."""
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(request("POST", path, b"x"))
        r = await c.response()  # a header line without a name fails the reading
        assert b"pwned" not in r.raw and b"nameless" not in r.raw, r
        assert (r.status, r.get("connection")) == (500, "close"), r
        await c.assert_closed()


# ------------------------------------------------------------------ the client leaving


async def test_an_app_waiting_in_receive_gets_the_disconnect(launcher: Launcher) -> None:
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv:
        async with srv.connect() as c:
            await c.send(request("POST", "/after-body", b"payload"))
            await app.log.wait_for("read")
        await app.log.wait_for("http.disconnect")


async def test_a_half_closed_client_is_a_client_that_left(launcher: Launcher) -> None:
    """A client that shuts its side after the request (``shutdown(SHUT_WR)``) cannot be
    told from one that closed: closing a response stream is how an MCP client cancels its
    request, so the app in flight sees ``http.disconnect`` and the connection closes (as
    on uvicorn's own protocols)."""
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv, srv.connect() as c:
        await c.send(request("POST", "/after-body", b"payload"))
        await app.log.wait_for("read")
        await c.stream.send_eof()
        await app.log.wait_for("http.disconnect")
        await c.assert_closed()


# ------------------------------------------------------------------ limits and shutdown


@pytest.mark.parametrize("http", ["mcpkit", "h11"])
async def test_a_request_over_the_concurrency_limit_gets_503(launcher: Launcher, http: str) -> None:
    """uvicorn's ``limit_concurrency`` counts open connections and running requests, the
    asking connection included (as uvicorn's own protocols do, ``h11`` here): at 2, one
    request in flight leaves no room for a request on a second connection."""
    app = PlainApp()
    async with launcher.serve(app, lifespan="off", limit_concurrency=2, http=http) as srv:
        async with srv.connect() as first:
            await first.send(request("GET", "/hold"))
            await app.log.wait_for("held")
            async with srv.connect() as second:
                await second.send(request("POST", "/echo", b"x"))
                r = await second.response()
                assert (r.status, r.get("connection")) == (503, "close"), r
                await second.assert_closed()
            app.release.set()
            r = await first.response()
            assert (r.status, r.body) == (200, b"released")
        assert [s["path"] for s in app.scopes] == ["/hold"]


@pytest.mark.parametrize("http", ["mcpkit", "h11"])
async def test_a_concurrency_limit_of_1_refuses_even_a_lone_request(
    launcher: Launcher, http: str
) -> None:
    """At ``limit_concurrency=1`` the asking connection fills the limit by itself: every
    request gets 503, on our protocol as on uvicorn's."""
    app = PlainApp()
    async with (
        launcher.serve(app, lifespan="off", limit_concurrency=1, http=http) as srv,
        srv.connect() as c,
    ):
        await c.send(request("POST", "/echo", b"x"))
        r = await c.response()
        assert (r.status, r.get("connection")) == (503, "close"), r
        await c.assert_closed()
    assert app.scopes == []


async def test_graceful_shutdown_finishes_the_request_in_flight_then_stops(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = PlainApp()
    shutting = anyio.Event()
    original = _h1server.H1Protocol.shutdown

    def shutdown(self: _h1server.H1Protocol) -> None:
        original(self)
        shutting.set()

    monkeypatch.setattr(_h1server.H1Protocol, "shutdown", shutdown)
    async with launcher.serve(app, lifespan="off") as srv, srv.connect() as c:
        await c.send(request("GET", "/hold"))
        await app.log.wait_for("held")
        srv.server.should_exit = True
        with anyio.fail_after(WAIT):
            await shutting.wait()  # uvicorn asked our connection to close
        assert not srv.stopped.is_set()
        app.release.set()
        r = await c.response()
        assert (r.status, r.body, r.get("connection")) == (200, b"released", "close")
        await c.assert_closed()
        with anyio.fail_after(WAIT):
            await srv.stopped.wait()
        with pytest.raises(OSError):
            await anyio.connect_tcp("127.0.0.1", srv.port)


@pytest.mark.parametrize(
    ("http", "ours"),
    [(None, True), ("mcpkit", True), ("h11", False), ("httptools", False)],
)
async def test_the_http_option_chooses_the_protocol(
    launcher: Launcher, http: str | None, ours: bool
) -> None:
    """serve_app's default (what serve_http and mcpkit run use) is our protocol; naming
    one of uvicorn's (``uvicorn_options={"http": "h11"}``) gives uvicorn's, and "mcpkit"
    names ours explicitly. Either way the request is served."""
    from mcpkit._http._h1server import H1Protocol

    options = {} if http is None else {"http": http}
    async with launcher.serve(PlainApp(), lifespan="off", **options) as srv:
        chosen = srv.server.config.http_protocol_class
        assert isinstance(chosen, type) and issubclass(chosen, H1Protocol) is ours
        async with srv.connect() as c:
            await c.send(request("GET", "/static"))
            r = await c.response()
            assert (r.status, r.body) == (200, b"static body")


async def test_a_large_sized_body_is_written_apart_from_its_head(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body over 64 KiB is not copied to be joined to its head: two writes, and the
    response arrives whole."""
    with counting_writes(monkeypatch) as writes:
        async with launcher.serve(BigApp(), lifespan="off") as srv, srv.connect() as c:
            await c.send(request("GET", "/big"))
            r = await c.response()
            assert (r.status, len(r.body)) == (200, 256 * 1024)
            assert len(writes.all) == 2 and writes.all[1] == r.body


class BigApp:
    async def __call__(self, scope: dict[str, object], receive: object, send: object) -> None:
        body = b"x" * (256 * 1024)
        headers = [(b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": body})  # type: ignore[operator]


async def test_uvicorns_root_path_is_in_the_scope_as_uvicorn_puts_it(launcher: Launcher) -> None:
    """``uvicorn_options={"root_path": "/api"}``: path and raw_path begin with it, as on
    uvicorn's own protocols (ASGI: path includes root_path)."""
    app = PlainApp()
    async with launcher.serve(app, lifespan="off", root_path="/api") as srv, srv.connect() as c:
        await c.send(request("GET", "/static?x=1"))
        await c.response()  # 404: this app routes on the full path
    scope = app.scopes[0]
    assert (scope["root_path"], scope["path"], scope["raw_path"], scope["query_string"]) == (
        "/api",
        "/api/static",
        b"/api/static",
        b"x=1",
    )


async def test_the_access_log_names_each_request_when_asked_for(launcher: Launcher) -> None:
    """``uvicorn_options={"access_log": True}`` (off by default): one line per request on
    uvicorn's access logger, as uvicorn's protocols write it."""
    import logging

    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    access = logging.getLogger("uvicorn.access")
    keep = Keep()
    options = {"access_log": True, "log_level": "info"}
    async with launcher.serve(PlainApp(), lifespan="off", **options) as srv:
        access.addHandler(keep)  # after uvicorn configured its loggers at startup
        try:
            async with srv.connect() as c:
                await c.send(request("GET", "/static?x=1"))
                assert (await c.response()).status == 200
        finally:
            access.removeHandler(keep)
    assert len(lines) == 1
    assert lines[0].endswith('"GET /static?x=1 HTTP/1.1" 200') and "127.0.0.1:" in lines[0]
