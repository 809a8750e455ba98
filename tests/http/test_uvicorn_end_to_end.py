"""The HTTP tests that need a real socket: uvicorn serving on 127.0.0.1 (a background thread).

Everything else at the HTTP level runs in process, through
:class:`mcpkit.lowlevel.ASGIClient` (``test_server_protocol.py``, ``test_client.py``). Here:

- End to end over uvicorn, one of each: a POST answered with JSON, an SSE stream the server
  closes and the client resumes, a client session from initialize to DELETE, and a client
  that disconnects mid-stream.
- What only a socket shows: a body refused before it is all sent, our HTTP client's
  keep-alive connections, TLS, auth hooks (applied by the socket clients), and our HTTP client
  on trio against uvicorn's asyncio.
- What the in-process client does not reproduce (see each test): a truncated JSON answer, a
  read timeout before the response starts, and the failed fallback to HTTP+SSE.
"""

from __future__ import annotations

import time
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
    broken_app,
    running,
    sse_events,
)

from mcpkit._app import create_http_app
from mcpkit._exceptions import ProtocolError
from mcpkit._http import open_http, open_streamable_http
from mcpkit._session import ClientSession

try:
    from tests._schema import WireRecorder
except ImportError:  # tests/ is not a package: pytest put tests/ itself on sys.path
    from _schema import WireRecorder  # type: ignore[no-redef]

pytestmark = pytest.mark.timeout(30)
anyio_test = pytest.mark.anyio


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def call(cs: ClientSession, name: str, **args: Any) -> dict[str, Any]:
    r = await cs.send_request("tools/call", {"name": name, "arguments": args}, timeout=10)
    assert isinstance(r, dict)
    return r


def _tool(rid: int, name: str, **args: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": args},
    }


async def _session(c: httpx.AsyncClient, url: str) -> dict[str, str]:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    r = await c.post(url, json=init, headers=HEADERS)
    assert r.status_code == 200
    h = {
        **HEADERS,
        "mcp-session-id": r.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await c.post(url, json=note, headers=h)).status_code == 202
    return h


# ---------------------------------------------------------------- end to end, one of each


@anyio_test
async def test_e2e_post_answered_with_json(serve: Any) -> None:
    srv = serve(json_response=True)
    with anyio.fail_after(15):
        async with httpx.AsyncClient(timeout=10) as c:
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
            r = await c.post(srv.url, json=init, headers=HEADERS)
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("application/json")
            assert r.json()["result"]["protocolVersion"] == "2025-11-25"
            assert r.headers["mcp-session-id"]
            h = await _session(c, srv.url)
            r = await c.post(srv.url, json=_tool(2, "echo", text="over a socket"), headers=h)
            assert r.status_code == 200
            assert r.json() == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"content": [{"type": "text", "text": "over a socket"}]},
            }
            assert (await c.delete(srv.url, headers=h)).status_code == 200


@anyio_test
@pytest.mark.req(
    "HTTP-RETRY-BEFORE-CLOSE",
    "HTTP-CLIENT-POLL",
    "HTTP-CLIENT-RESPECT-RETRY",
    "HTTP-CLIENT-RESUME-GET",
)
async def test_e2e_sse_stream_closed_by_the_server_is_resumed(demo: DemoServer) -> None:
    rec = Recorder(create_http_app(demo))
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params["data"])

    with running(rec) as srv, anyio.fail_after(15):
        async with (
            open_streamable_http(srv.url) as t,
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


@anyio_test
async def test_e2e_client_session_from_initialize_to_delete(demo: DemoServer) -> None:
    rec = Recorder(create_http_app(demo))
    with running(rec) as srv:
        with anyio.fail_after(15):
            async with (
                open_streamable_http(srv.url) as t,
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
    posts = [h for _, m, h, _ in rec.requests if m == "POST"]
    assert len(posts) == 4  # initialize, initialized, tools/call, tools/list
    assert all(h["mcp-session-id"] == sid for h in posts[1:])
    assert rec.requests[-1][1] == "DELETE" and rec.requests[-1][2]["mcp-session-id"] == sid


@anyio_test
async def test_e2e_client_disconnecting_mid_stream(demo: DemoServer) -> None:
    """The connection drops while a call runs: the server lets go of the stream, the call
    runs on, and its answer is replayed to a GET that resumes after the last event seen."""
    rec = Recorder(create_http_app(demo))
    with running(rec) as srv, anyio.fail_after(15):
        async with httpx.AsyncClient(timeout=10) as c:
            h = await _session(c, srv.url)
            async with c.stream("POST", srv.url, json=_tool(5, "gated"), headers=h) as r:
                events = sse_events(r)
                priming = await events.__anext__()
                await events.aclose()
            assert priming.id and priming.data == ""
            # The server saw the disconnect: the POST's handler returned...
            (call_post,) = [
                i for i, (_, m, _, b) in enumerate(rec.requests) if m == "POST" and b'"gated"' in b
            ]
            await rec.wait_for(lambda: call_post in rec.finished)
            # ...letting go of the stream, not of the call.
            (entry,) = rec.app.sessions.values()
            assert entry.transport.requests[5].conn_recv is None
            assert "gated" in demo.started and "gated" not in demo.finished
            demo.gate.set()
            await demo.changes.wait_for(lambda: "gated" in demo.finished)
            resume = {**h, "accept": "text/event-stream", "last-event-id": priming.id}
            async with c.stream("GET", srv.url, headers=resume) as r:
                async for ev in sse_events(r):
                    if ev.data:
                        msg = orjson.loads(ev.data)
                        assert msg["id"] == 5 and text(msg["result"]) == "through the gate"
                        break


# ---------------------------------------------------------------- what only a socket shows


def _raw_post(port: int, head_extra: str, body_chunks: Any) -> tuple[int, int]:
    """POST over a raw socket; returns (status, bytes of body sent before the answer)."""
    import socket

    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\n{head_extra}\r\n"
        )
        sock.sendall(head.encode())
        sock.setblocking(False)
        answer = b""
        for chunk in body_chunks:
            try:
                answer += sock.recv(65536)
            except BlockingIOError:
                pass
            if answer:
                break
            try:
                sock.setblocking(True)
                sock.sendall(chunk)
                sent += len(chunk)
                sock.setblocking(False)
            except OSError:
                break
        sock.setblocking(True)
        sock.settimeout(10)
        while b"\r\n" not in answer:
            more = sock.recv(65536)
            if not more:
                break
            answer += more
    return int(answer.split(b" ", 2)[1]), sent


def test_100mb_body_rejected_early(serve: Any) -> None:
    srv = serve()  # default limit: 4 MiB
    mb = b"x" * (1024 * 1024)
    # Declared size over the limit: refused before a single body byte is read.
    status, sent = _raw_post(srv.port, f"Content-Length: {100 * 1024 * 1024}\r\n", iter(()))
    assert status == 413 and sent == 0
    # Chunked (no declared size): refused once the limit is crossed, long before 100 MB.
    chunks = (b"%x\r\n" % len(mb) + mb + b"\r\n" for _ in range(100))
    status, sent = _raw_post(srv.port, "Transfer-Encoding: chunked\r\n", chunks)
    assert status == 413
    assert sent < 20 * 1024 * 1024


def test_an_oversize_body_sent_whole_before_reading_gets_its_413(serve: Any) -> None:
    """A client that sends all of a body over the limit and only then reads, asking for
    ``Connection: close`` (urllib does): it reads the 413. Answered while the rest of the
    body was still coming, then closed, the connection was reset by the kernel and the
    client saw the reset instead."""
    import socket

    srv = serve()  # default limit: 4 MiB
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": "' + b"x" * (5 << 20) + b'"}'
    for framing in (f"Content-Length: {len(body)}\r\n", "Transfer-Encoding: chunked\r\n"):
        payload = (
            body if framing.startswith("Content") else b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        )
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"{framing}Connection: close\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", srv.port), timeout=20) as sock:
            sock.sendall(head + payload)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 413 "), (framing, answer[:200])
        assert b"the limit is 4194304 bytes" in answer


@anyio_test
async def test_custom_headers_and_auth_hooks(demo: DemoServer) -> None:
    rec = Recorder(create_http_app(demo))

    class Bearer(httpx.Auth):
        def auth_flow(self, request: httpx.Request) -> Any:
            request.headers["authorization"] = "Bearer from-auth-class"
            yield request

    async def async_hook() -> dict[str, str]:
        return {"authorization": "Bearer from-async-hook"}

    hooks: list[Any] = [lambda: {"authorization": "Bearer from-sync-hook"}, async_hook, Bearer()]
    expected = ["Bearer from-sync-hook", "Bearer from-async-hook", "Bearer from-auth-class"]
    with running(rec) as srv, anyio.fail_after(15):
        for n, (hook, want) in enumerate(zip(hooks, expected, strict=True)):
            # Each round's requests carry its number: a request of the round before (its
            # session's end, reaching the server thread late under load) is not this one's.
            headers = {"x-tenant": "t1", "x-round": str(n)}
            async with (
                open_streamable_http(srv.url, headers=headers, auth=hook) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                await cs.initialize()
                await call(cs, "echo", text="x")
            mine = [h for _, _, h, _ in rec.requests if h.get("x-round") == str(n)]
            assert mine
            for h in mine:
                assert h["x-tenant"] == "t1" and h["authorization"] == want
            assert all("x-round" in h for _, _, h, _ in rec.requests)


def _self_signed(tmp_path: Any) -> tuple[str, str]:
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=30,
    )  # fmt: skip
    return cert, key


@anyio_test
async def test_https_with_a_private_ca(demo: DemoServer, tmp_path: Any) -> None:
    import ssl

    cert, key = _self_signed(tmp_path)
    app = create_http_app(demo)
    with running(app, ssl_certfile=cert, ssl_keyfile=key) as srv, anyio.fail_after(15):
        url = srv.url.replace("http://", "https://")
        ctx = ssl.create_default_context(cafile=cert)
        async with (
            open_http(url, ssl_context=ctx) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            assert text(await call(cs, "echo", text="over TLS")) == "over TLS"
        # Without trusting that CA, the connection is refused, promptly and clearly.
        async with (
            open_streamable_http(url) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            with pytest.raises(ProtocolError, match=r"(?i)certificate"):
                await cs.initialize(timeout=5)


@anyio_test
@pytest.mark.parametrize("json_response", [False, True])
async def test_posts_reuse_one_keep_alive_connection(demo: DemoServer, json_response: bool) -> None:
    # Every POST's answer (a JSON body, or an SSE stream the server ends after the
    # response) is read to its end, so the connection goes back to the pool.
    ports: list[tuple[str, int]] = []
    inner = create_http_app(demo, json_response=json_response)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            ports.append(tuple(scope["client"]))
        await inner(scope, receive, send)

    app.aclose = inner.aclose  # type: ignore[attr-defined]
    with running(app) as srv, anyio.fail_after(15):
        async with (
            open_streamable_http(srv.url) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            for i in range(20):
                assert text(await call(cs, "echo", text=str(i))) == str(i)
    assert len(ports) >= 21
    # One connection carries the POSTs (a second may open while the first is still
    # finishing the initialize exchange); never one per call.
    assert len(set(ports)) <= 2, f"{len(set(ports))} connections for {len(ports)} POSTs"


@anyio_test
@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_client_on_trio(demo: DemoServer, anyio_backend: str) -> None:
    with running(create_http_app(demo)) as srv, anyio.fail_after(15):
        async with (
            open_http(srv.url) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            assert text(await call(cs, "log")) == "logged"
            assert text(await call(cs, "poll", retry=50)) == "polled"


# ------------------------------------------- what the in-process client does not reproduce
# ASGIClient wraps in an ExceptionGroup what the transport raises while it reads a response
# (here the JSON decode error, and the 404 of the SSE fallback's GET), and gives a bare
# TimeoutError rather than HTTPReadTimeout when no response starts within the read timeout.


@anyio_test
async def test_broken_server_sending_bad_json_fails_promptly() -> None:
    with running(broken_app("bad-json")) as srv:
        t0 = time.monotonic()
        with anyio.fail_after(10):
            async with (
                open_streamable_http(srv.url) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                with pytest.raises(ProtocolError) as ei:
                    await cs.initialize(timeout=None)
        assert time.monotonic() - t0 < 3
        assert "malformed" in str(ei.value)


@anyio_test
async def test_read_timeout(demo: DemoServer) -> None:
    with running(create_http_app(demo, json_response=True)) as srv, anyio.fail_after(10):
        async with (
            open_streamable_http(srv.url, sse_read_timeout=0.3) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            t0 = time.monotonic()
            with pytest.raises(ProtocolError, match="Timeout"):
                await call(cs, "slow", seconds=3)
            assert time.monotonic() - t0 < 2


@anyio_test
async def test_fallback_failure_reports_both_attempts(demo: DemoServer) -> None:
    # Nothing at that URL: the initialize POST gets 404, and so does the SSE GET.
    with running(create_http_app(demo)) as srv, anyio.fail_after(10):
        async with (
            open_http(srv.base + "/nothing") as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            with pytest.raises(ProtocolError) as ei:
                await cs.initialize()
    msg = str(ei.value)
    assert "neither Streamable HTTP (HTTP 404" in msg and "HTTP+SSE (HTTP 404" in msg
