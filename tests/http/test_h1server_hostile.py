"""mcpkit's HTTP/1.1 server protocol (``mcpkit._http._h1server``) against hostile or broken
clients, on real sockets: malformed requests and request smuggling (400, the app never
called), oversized heads (431), slow heads (408), idle connections, upgrades, floods of
pipelined requests. After each, the server goes on serving other connections.
uvicorn runs on asyncio only.
"""

from __future__ import annotations

import time

import anyio
import pytest
from _h1_wire import H1_MARKS, WAIT, Launcher, PlainApp, Running, request

from mcpkit._http._h1server import MAX_HEAD

pytestmark = H1_MARKS


async def still_serving(srv: Running) -> None:
    """A new connection is served as usual."""
    async with srv.connect() as c:
        await c.still_open()


# ------------------------------------------------------------------ malformed requests

H = b"host: 127.0.0.1\r\n"
MALFORMED = {
    "garbage request line": b"NOT HTTP AT ALL\r\n\r\n",
    "Content-Length beside Transfer-Encoding": (
        b"POST /echo HTTP/1.1\r\n" + H + b"content-length: 5\r\n"
        b"transfer-encoding: chunked\r\n\r\n0\r\n\r\nGET /echo HTTP/1.1\r\n\r\n"
    ),
    "two Content-Length values": (
        b"POST /echo HTTP/1.1\r\n" + H + b"content-length: 5\r\ncontent-length: 6\r\n\r\nhello!"
    ),
    "Content-Length list": b"POST /echo HTTP/1.1\r\n" + H + b"content-length: 1, 1\r\n\r\nq",
    "negative Content-Length": b"POST /echo HTTP/1.1\r\n" + H + b"content-length: -1\r\n\r\n",
    "chunked not last": (
        b"POST /echo HTTP/1.1\r\n"
        + H
        + b"transfer-encoding: chunked, gzip\r\n\r\n1\r\na\r\n0\r\n\r\n"
    ),
    "non-ASCII target": b"GET /caf\xc3\xa9 HTTP/1.1\r\n" + H + b"\r\n",
    "space before the colon": b"GET /static HTTP/1.1\r\nhost : 127.0.0.1\r\n\r\n",
    "obsolete line folding": b"GET /static HTTP/1.1\r\n" + H + b"x-a: b\r\n folded\r\n\r\n",
    "NUL in a header value": b"GET /static HTTP/1.1\r\n" + H + b"x-a: a\x00b\r\n\r\n",
    "bare LF line ends": b"GET /static HTTP/1.1\nhost: 127.0.0.1\n\n",
    "HTTP/2 preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
}


@pytest.mark.parametrize("wire", list(MALFORMED.values()), ids=list(MALFORMED))
async def test_a_malformed_request_gets_400_and_close(launcher: Launcher, wire: bytes) -> None:
    await _refused(launcher, wire, 400)


async def _refused(launcher: Launcher, wire: bytes, status: int) -> None:
    """``wire`` is answered ``status`` and the connection closes; nothing of it (nor of
    what followed it) reached the app, and the server serves on."""
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv:
        async with srv.connect() as c:
            await c.send(wire)
            r = await c.response()
            assert (r.status, r.get("connection")) == (status, "close"), r
            await c.assert_closed()
        assert app.scopes == []
        await still_serving(srv)


@pytest.mark.parametrize("split", [False, True], ids=["with the head", "after the head"])
async def test_a_bad_chunk_in_a_request_body_ends_the_connection(
    launcher: Launcher, split: bool
) -> None:
    """The docstring: "a bad chunk end[s] the connection with 400". The bad chunk may come
    with the head (the app not started yet) or once the app waits for the body."""
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv:
        async with srv.connect() as c:
            head = request("POST", "/echo", headers={"transfer-encoding": "chunked"})
            if split:
                await c.send(head + b"3\r\nabc\r\n")
                await app.log.wait_for(("part", b"abc"))
                await c.send(b"zz\r\nnot a chunk\r\n")
            else:
                await c.send(head + b"zz\r\nnot a chunk\r\n")
            wire = await c.rest()  # the connection ends (bounded)
            assert wire == b"" or wire.startswith(b"HTTP/1.1 400 "), wire
        await still_serving(srv)


async def test_a_bad_request_pipelined_after_a_good_one_ends_the_connection_after_it(
    launcher: Launcher,
) -> None:
    """The good request is answered (the connection's last answer), then the refusal of
    what followed it is written and the connection closes; the bad one reaches nothing."""
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv:
        async with srv.connect() as c:
            bad = (
                b"GET /static HTTP/1.1\r\n" + H + b"content-length: 1\r\ncontent-length: 2\r\n\r\n"
            )
            await c.send(request("POST", "/echo", b"good") + bad)
            r = await c.response()
            assert (r.status, r.body, r.get("connection")) == (200, b"POST /echo|good", "close")
            refusal = await c.response()
            assert (refusal.status, refusal.get("connection")) == (400, "close")
            await c.assert_closed()
        assert [s["path"] for s in app.scopes] == ["/echo"]
        await still_serving(srv)


# ------------------------------------------------------------------ oversized heads


def _many_headers() -> bytes:
    line = b"x-filler: " + b"f" * 1000 + b"\r\n"
    return b"GET /static HTTP/1.1\r\n" + H + line * (MAX_HEAD // len(line) + 2) + b"\r\n"


OVERSIZED = {
    "many headers": _many_headers(),
    "one long header value": b"GET /static HTTP/1.1\r\n"
    + H
    + b"x-big: "
    + b"b" * (MAX_HEAD + 10)
    + b"\r\n\r\n",
    "a long target": b"GET /" + b"p" * (MAX_HEAD + 10) + b" HTTP/1.1\r\n" + H + b"\r\n",
}


@pytest.mark.parametrize("wire", list(OVERSIZED.values()), ids=list(OVERSIZED))
async def test_a_head_over_64_kib_gets_431_and_close(launcher: Launcher, wire: bytes) -> None:
    await _refused(launcher, wire, 431)


async def test_a_header_value_growing_past_64_kib_gets_431_before_it_ends(
    launcher: Launcher,
) -> None:
    """A head that never ends (one header value, bytes without a line end) must be refused
    once it passes the limit, not buffered until it ends or the head timeout fires:
    httptools keeps a header's value to itself until the value is complete."""
    async with launcher.serve(PlainApp(), lifespan="off") as srv:
        async with srv.connect() as c:
            await c.send(b"GET /static HTTP/1.1\r\n" + H + b"x-big: ")
            for _ in range(4 * MAX_HEAD // 16384):
                await c.send(b"b" * 16384)
            r = await c.response()  # bounded: WAIT, below the 10 s head timeout
            assert (r.status, r.get("connection")) == (431, "close"), r
        await still_serving(srv)


async def test_many_pipelined_requests_in_one_read_are_not_taken_for_a_long_head(
    launcher: Launcher,
) -> None:
    """300 KiB of small pipelined requests in one write, the last head cut short: the
    requests before it are no head of the one that follows (each is answered), and the
    rest of the last head arriving later completes it."""
    one = b"GET /static HTTP/1.1\r\n" + H + b"\r\n"
    n = 300 * 1024 // len(one) + 1
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        await c.send(one * n + one[:20])
        for _ in range(n):
            r = await c.response()
            assert (r.status, r.body) == (200, b"static body"), r
        await c.send(one[20:])
        r = await c.response()
        assert (r.status, r.body) == (200, b"static body"), r


# ------------------------------------------------------------------ slow and idle clients

PARTIAL_HEADS = {
    "nothing": b"",
    "one byte": b"P",
    "the request line": b"POST /mcp HTTP/1.1\r\n",
    "a header without its line end": b"POST /mcp HTTP/1.1\r\nHost: x",
    "a header line": b"POST /mcp HTTP/1.1\r\nHost: x\r\n",
    "two headers and a third begun": b"POST /mcp HTTP/1.1\r\nHost: x\r\nAccept: y\r\nX-",
}


@pytest.mark.parametrize("partial", list(PARTIAL_HEADS.values()), ids=list(PARTIAL_HEADS))
async def test_a_first_head_too_slow_gets_408_and_close(launcher: Launcher, partial: bytes) -> None:
    async with launcher.serve(PlainApp(), lifespan="off", header_timeout=0.5) as srv:
        async with srv.connect() as c:
            t0 = time.monotonic()
            if partial:
                await c.send(partial)
            r = await c.response()  # bounded (WAIT)
            assert (r.status, r.get("connection")) == (408, "close"), r
            await c.assert_closed()
            assert time.monotonic() - t0 >= 0.4  # not before the timeout
        await still_serving(srv)


#: The first head's timeout beside a shorter keep-alive timeout: none, and serve_app's default.
HEAD_TIMEOUTS = pytest.mark.parametrize(
    "head_timeout", [None, 10.0], ids=["no head timeout", "10 s"]
)


@HEAD_TIMEOUTS
async def test_a_later_head_too_slow_gets_408_after_the_keep_alive_timeout(
    launcher: Launcher, head_timeout: float | None
) -> None:
    """Every head after the first has the keep-alive timeout, whatever the first's."""
    async with launcher.serve(
        PlainApp(), lifespan="off", timeout_keep_alive=0.5, header_timeout=head_timeout
    ) as srv:
        async with srv.connect() as c:
            await c.still_open()
            t0 = time.monotonic()
            await c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\n")
            r = await c.response()
            assert (r.status, r.get("connection")) == (408, "close"), r
            await c.assert_closed()
            assert time.monotonic() - t0 >= 0.4
        await still_serving(srv)


@HEAD_TIMEOUTS
async def test_an_idle_keep_alive_connection_is_closed_quietly_after_the_timeout(
    launcher: Launcher, head_timeout: float | None
) -> None:
    """Closed ``timeout_keep_alive`` after its last response, even when the first head's
    own timeout (``header_timeout``) is longer."""
    async with launcher.serve(
        PlainApp(), lifespan="off", timeout_keep_alive=0.5, header_timeout=head_timeout
    ) as srv:
        async with srv.connect() as c:
            await c.still_open()
            t0 = time.monotonic()
            await c.assert_closed()  # bounded (WAIT); no bytes: nothing was asked
            assert time.monotonic() - t0 >= 0.4
        await still_serving(srv)


async def test_the_keep_alive_timeout_does_not_cut_a_request_in_flight(
    launcher: Launcher,
) -> None:
    app = PlainApp()
    async with (
        launcher.serve(app, lifespan="off", timeout_keep_alive=0.5, header_timeout=None) as srv,
        srv.connect() as busy,
        srv.connect() as idle,
    ):
        await busy.send(request("GET", "/hold"))
        await app.log.wait_for("held")
        await idle.still_open()
        await idle.assert_closed()  # the keep-alive timeout has passed
        app.release.set()
        r = await busy.response()
        assert (r.status, r.body) == (200, b"released")
        await busy.still_open()


# ------------------------------------------------------------------ odd requests


async def test_an_upgrade_request_is_served_then_the_connection_closes(
    launcher: Launcher,
) -> None:
    """No upgrade is offered: the request is answered as it is, and (the docstring) the
    connection closes after it: what follows the head is another protocol."""
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv:
        async with srv.connect() as c:
            upgrade = {"connection": "upgrade", "upgrade": "websocket"}
            await c.send(request("GET", "/static", headers=upgrade) + b"\x81\x05hello")
            r = await c.response()
            assert (r.status, r.body) == (200, b"static body")
            await c.assert_closed()
        assert [s["path"] for s in app.scopes] == ["/static"]
        await still_serving(srv)


async def test_a_flood_of_pipelined_requests_is_answered_in_order(launcher: Launcher) -> None:
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        n = 200
        await c.send(b"".join(request("POST", "/echo", b"%d" % i) for i in range(n)))
        bodies = [(await c.response()).body for _ in range(n)]
        assert bodies == [b"POST /echo|%d" % i for i in range(n)]
        await c.still_open()


async def test_a_large_body_reaches_the_app_whole(launcher: Launcher) -> None:
    """A body well past the buffering bound (reading pauses, then resumes as the app reads)."""
    async with launcher.serve(PlainApp(), lifespan="off") as srv, srv.connect() as c:
        body = bytes(range(256)) * 8192  # 2 MiB
        async with anyio.create_task_group() as tg:
            tg.start_soon(c.send, request("POST", "/echo", body))
            with anyio.fail_after(WAIT):
                r = await c.response()
        assert (r.status, r.body) == (200, b"POST /echo|" + body)
        await c.still_open()


async def test_an_upgrade_request_with_a_body_has_its_body_read(launcher: Launcher) -> None:
    """``curl --http2`` on an http URL sends its POST with ``Upgrade: h2c``: the parser
    stops at such a head, so the protocol reads the declared body itself, answers as plain
    HTTP/1.1, and closes the connection."""
    app = PlainApp()
    async with launcher.serve(app, lifespan="off") as srv:
        async with srv.connect() as c:
            upgrade = {"connection": "Upgrade, HTTP2-Settings", "upgrade": "h2c"}
            head_and_part = request("POST", "/echo", b"hello world", headers=upgrade)[:-6]
            await c.send(head_and_part)
            await c.send(b" world")
            r = await c.response()
            assert (r.status, r.body) == (200, b"POST /echo|hello world")
            await c.assert_closed()
        await still_serving(srv)
