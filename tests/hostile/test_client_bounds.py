"""A hostile server cannot exhaust our HTTP client's memory (issue 43, W1 W2 W3 W9).

Each test runs our client (both HTTP paths: our own HTTP/1.1 client and httpx2, taken with
``http_client=`` or, as deployments meet it, by ``HTTP_PROXY`` through a real forward proxy)
against a hand-written server on 127.0.0.1 (``_hostile_http.py``). An endless answer is
capped at :data:`CAP` so the code these tests guard against ends instead of taking the
machine: what fails there is the assertion that the client hung up long before the cap
(W1, W3), or the peak of what the process allocated while the client read (W2).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import httpx2
import orjson
import pytest
from tests.hostile._hostile_http import (
    Answer,
    MiB,
    Request,
    chunked_head,
    gzip_of,
    hostile_server,
    initialize_result,
    response,
)
from tests.http._http_helpers import CLIENT_INFO
from tests.http._proxy import forward_proxy

from mcpkit._exceptions import HTTPStatusError, ProtocolError, TransportError
from mcpkit.lowlevel import ClientSession, open_sse, open_streamable_http

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

#: Where an endless answer stops (the client should hang up long before).
CAP = 64 * MiB
#: The clients' max_message_size here.
LIMIT = MiB
_PROXY_VARS = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


@pytest.fixture(autouse=True)
def _no_proxy_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each test picks its path itself: no proxy of the environment changes it.
    for name in (*_PROXY_VARS, "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


@asynccontextmanager
async def _session(
    url: str, via: str, monkeypatch: pytest.MonkeyPatch, **kw: Any
) -> AsyncIterator[ClientSession]:
    """A client session (not initialized) to ``url`` over the path ``via`` names: ``own``
    (our HTTP/1.1 client), ``httpx2`` (``http_client=``) or ``proxy`` (``HTTP_PROXY``)."""
    if via == "proxy":
        async with forward_proxy() as (proxy, proxy_url):
            monkeypatch.setenv("HTTP_PROXY", proxy_url)
            async with (
                open_streamable_http(url, max_message_size=LIMIT, **kw) as t,
                ClientSession(t, client_info=CLIENT_INFO) as cs,
            ):
                yield cs
            assert proxy.requests, "the client did not go through the proxy"
        return
    if via == "httpx2":
        kw["http_client"] = httpx2.AsyncClient(follow_redirects=True)
    try:
        async with (
            open_streamable_http(url, max_message_size=LIMIT, **kw) as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            yield cs
    finally:
        if via == "httpx2":
            await kw["http_client"].aclose()


# ------------------------------------------------------------------ W1: error bodies

_ENDLESS_TEXT = b"endless error " * 4096


async def _endless_500(request: Request, answer: Answer) -> None:
    await answer.endless(chunked_head(500, "text/plain"), _ENDLESS_TEXT, CAP)


def _stopped_early(answer: Answer) -> None:
    assert answer.hung_up, f"the client read the whole endless body ({answer.sent} bytes)"
    assert answer.sent < CAP // 2


@pytest.mark.parametrize("via", ["own", "httpx2"])
async def test_w1_an_endless_error_answer_to_a_request_is_read_only_in_part(
    via: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with hostile_server(_endless_500) as srv:
        with anyio.fail_after(30):
            async with _session(srv.url, via, monkeypatch) as cs:
                with pytest.raises(ProtocolError, match=r"HTTP 500: endless error endless"):
                    await cs.initialize()
            await srv.answers[0].finished.wait()
    _stopped_early(srv.answers[0])


@pytest.mark.parametrize("via", ["own", "httpx2"])
async def test_w1_an_endless_error_answer_to_a_notification_and_to_delete(
    via: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The POST of a notification and the DELETE on close read no more of a body either.
    async def handler(request: Request, answer: Answer) -> None:
        if request.method == "POST" and request.json()["method"] == "initialize":
            body = initialize_result(request)
            await answer.send(response(200, body, mcp_session_id="s1"))
        elif request.method == "POST":
            await _endless_500(request, answer)
        elif request.method == "DELETE":
            await answer.endless(chunked_head(200, "text/plain"), _ENDLESS_TEXT, CAP)
        else:
            await answer.send(response(405, b""))

    async with hostile_server(handler) as srv:
        with anyio.fail_after(30):
            async with _session(srv.url, via, monkeypatch) as cs:
                with pytest.raises(HTTPStatusError, match=r"endless error endless"):
                    await cs.initialize()
            for answer in srv.answers[1:]:
                await answer.finished.wait()
    assert [r.method for r in srv.requests][:2] == ["POST", "POST"]
    _stopped_early(srv.answers[1])  # notifications/initialized
    deletes = [a for r, a in zip(srv.requests, srv.answers, strict=True) if r.method == "DELETE"]
    assert deletes, "the client did not end its session"
    _stopped_early(deletes[0])


def _the_one(error: BaseException) -> BaseException:
    """The error inside groups of one (open_sse raises from its task group)."""
    inner: tuple[BaseException, ...] = getattr(error, "exceptions", ())
    while len(inner) == 1:
        error = inner[0]
        inner = getattr(error, "exceptions", ())
    return error


@pytest.mark.parametrize("via", ["own", "httpx2"])
async def test_w1_an_endless_error_answer_to_the_legacy_sse_stream(via: str) -> None:
    async with hostile_server(_endless_500) as srv, httpx2.AsyncClient() as http:
        with anyio.fail_after(30):
            with pytest.raises(Exception) as refused:  # which one: checked below
                async with open_sse(srv.url, http_client=http if via == "httpx2" else None):
                    pass
            await srv.answers[0].finished.wait()
    error = _the_one(refused.value)
    assert isinstance(error, TransportError) and "HTTP 500: endless error" in str(error)
    _stopped_early(srv.answers[0])


def test_the_error_body_bound_is_small_and_documented() -> None:
    from mcpkit._http._client_common import MAX_ERROR_BODY

    assert MAX_ERROR_BODY <= 64 * 1024
    doc = " ".join((Path(__file__).parents[2] / "docs" / "client.md").read_text().split())
    assert f"error answer's body the client reads at most {MAX_ERROR_BODY // 1024} KiB" in doc


# ------------------------------------------------------------------ W2: decoded bytes

#: The decoded size of the hostile gzip answers (1000 times what goes over the wire).
INFLATED = 64 * MiB


@cache
def _gzipped(kind: str) -> bytes:
    if kind == "sse":
        return gzip_of(b'event: message\ndata: {"jsonrpc": "2.0", "id": 0, ', INFLATED, b"}\n\n")
    return gzip_of(b'{"jsonrpc": "2.0", "id": 0, "error": {"code": 1, "message": "x"}', INFLATED)


def _gzip_answer(kind: str) -> bytes:
    ctype = "text/event-stream" if kind == "sse" else "application/json"
    status = 500 if kind == "error" else 200
    return response(status, _gzipped(kind), ctype, content_encoding="gzip")


@pytest.mark.parametrize("kind", ["json", "sse", "error"])
async def test_w2_a_gzip_answer_counts_its_decoded_bytes_on_the_proxy_path(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _gzip_answer(kind)
    assert len(body) < INFLATED // 100

    async def handler(request: Request, answer: Answer) -> None:
        await answer.send(body if request.method == "POST" else response(405, b""))

    # What Python allocated at its peak while the client read: the decoded body, if held.
    tracemalloc.start()
    try:
        async with hostile_server(handler) as srv:
            with anyio.fail_after(30):
                async with _session(srv.url, "proxy", monkeypatch) as cs:
                    with pytest.raises(ProtocolError) as refused:
                        await cs.initialize()
        held = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if kind == "error":
        assert "HTTP 500" in str(refused.value)
    else:  # the JSON body as one message; the event stream's events one by one
        decoded = " once decompressed (Content-Encoding: gzip)" if kind == "json" else ""
        assert f"larger than max_message_size (1 MiB){decoded};" in str(refused.value)
    assert held < 16 * MiB, f"the client held {held / MiB:.0f} MiB of a {INFLATED // MiB} MiB body"


async def test_w2_our_own_client_asks_for_no_encoding_and_inflates_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def handler(request: Request, answer: Answer) -> None:
        await answer.send(_gzip_answer("json") if request.method == "POST" else response(405, b""))

    async with hostile_server(handler) as srv:
        with anyio.fail_after(30):
            async with _session(srv.url, "own", monkeypatch) as cs:
                with pytest.raises(ProtocolError, match="malformed response"):
                    await cs.initialize()
    assert "accept-encoding" not in srv.requests[0].headers


# ------------------------------------------------------------------ W3: SSE lines


@pytest.mark.parametrize(
    "line", [b"data:\n", b"data\n", b"data:\r\n"], ids=["colon", "bare", "crlf"]
)
@pytest.mark.parametrize("via", ["own", "httpx2"])
async def test_w3_an_event_of_endless_empty_data_lines_is_refused(
    via: str, line: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def handler(request: Request, answer: Answer) -> None:
        if request.method != "POST":
            await answer.send(response(405, b""))
            return
        head = chunked_head(200, "text/event-stream")
        await answer.endless(head + b"4\r\nid:1\r\n", line * 8192, CAP)

    async with hostile_server(handler) as srv:
        with anyio.fail_after(30):
            async with _session(srv.url, via, monkeypatch, max_reconnects=0) as cs:
                with pytest.raises(ProtocolError, match=r"larger than max_message_size \(1 MiB\)"):
                    await cs.initialize()
            await srv.answers[0].finished.wait()
    _stopped_early(srv.answers[0])


# ------------------------------------------------------------------ W9: redirects


class _HookHeaders:
    """An auth hook as mcpkit.auth's flows are: headers per request (a DPoP proof, a key)."""

    def headers_for(self, method: str, url: str) -> dict[str, str]:
        return {
            "authorization": "DPoP t0ken",
            "dpop": f"proof-for {method} {url}",
            "x-api-key": "k3y",
        }


class _HttpxAuth(httpx2.Auth):
    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, Any, None]:
        request.headers["authorization"] = "Bearer t0ken"
        request.headers["dpop"] = "proof"
        request.headers["x-api-key"] = "k3y"
        yield request


_SECRETS = ("authorization", "dpop", "x-api-key")


@pytest.mark.parametrize(
    ("via", "auth"),
    [("own", "hook"), ("proxy", "hook"), ("proxy", "httpx2"), ("httpx2", "hook")],
)
async def test_w9_a_redirect_to_another_port_carries_no_auth_headers(
    via: str, auth: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse(request: Request, answer: Answer) -> None:
        await answer.send(response(500, b"no", "text/plain"))

    async with hostile_server(refuse) as other:

        async def moved(request: Request, answer: Answer) -> None:
            await answer.send(response(307, b"", location=other.url))

        async with hostile_server(moved) as first:
            with anyio.fail_after(30):
                hook = _HookHeaders() if auth == "hook" else _HttpxAuth()
                headers = {"x-trace": "keep"}
                async with _session(first.url, via, monkeypatch, auth=hook, headers=headers) as cs:
                    with pytest.raises(ProtocolError, match="HTTP 500: no"):
                        await cs.initialize()
    sent = first.requests[0].headers
    assert all(name in sent for name in _SECRETS), sent  # the hook's, on its own origin
    (hop,) = other.requests
    assert hop.method == "POST" and orjson.loads(hop.body)["method"] == "initialize"
    assert hop.headers["x-trace"] == "keep"
    leaked = {name: hop.headers[name] for name in _SECRETS if name in hop.headers}
    assert not leaked, f"the hook's headers went to another origin: {leaked}"


@pytest.mark.parametrize(("via", "auth"), [("own", "hook"), ("proxy", "hook"), ("proxy", "httpx2")])
async def test_w9_a_redirect_on_the_same_origin_keeps_the_auth_headers(
    via: str, auth: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rule strips only across origins: a hop on the same one is signed anew.
    async def handler(request: Request, answer: Answer) -> None:
        if request.target.endswith("/mcp"):
            await answer.send(response(307, b"", location="/moved"))
        else:
            await answer.send(response(500, b"no", "text/plain"))

    async with hostile_server(handler) as srv:
        with anyio.fail_after(30):
            hook = _HookHeaders() if auth == "hook" else _HttpxAuth()
            async with _session(srv.url, via, monkeypatch, auth=hook) as cs:
                with pytest.raises(ProtocolError, match="HTTP 500: no"):
                    await cs.initialize()
    assert [r.target.rsplit("/", 1)[1] for r in srv.requests] == ["mcp", "moved"]
    hop = srv.requests[1]
    assert all(name in hop.headers for name in _SECRETS), hop.headers
    if auth == "hook":
        assert hop.headers["dpop"].endswith(f"127.0.0.1:{srv.port}/moved")
