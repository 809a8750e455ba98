"""W15: without auth, one client cannot hold every listen stream of the server.

Before: listen streams (2026-07-28 ``subscriptions/listen``) of clients without a verified
principal counted against the app-wide bound only, so one address could open all 1,024 and
every other client's listen got 503. Now each client (its verified principal, else its
address) holds at most ``max_listen_streams_per_principal`` (64 by default); past it the
client gets 429 naming the per-client limit, and other clients still listen.

Over real uvicorn on 127.0.0.1, with raw sockets: the second client's socket is bound to
127.0.0.2 (all of 127.0.0.0/8 is loopback on Linux), so the server sees another address.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest
from tests.http._http_helpers import CLIENT_INFO, HEADERS, running

from mcpkit import Server

WAIT = 10.0
#: The documented default per client (docs/deploy.md, "Limits of one worker").
PER_CLIENT = 64
LISTEN = {"notifications": {"toolsListChanged": True}}


def _listen_request(url: str, rid: int) -> bytes:
    parts = urlsplit(url)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    body = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "subscriptions/listen",
            "params": {**LISTEN, "_meta": meta},
        }
    )
    headers = {
        **HEADERS,
        "host": parts.netloc,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "subscriptions/listen",
        "content-length": str(len(body)),
    }
    head = [f"POST {parts.path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def _head(sock: socket.socket) -> bytes:
    """What the server sent up to the end of the response head (and perhaps more)."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed after {got!r}"
        got += chunk
    return got


@contextmanager
def _listener(url: str, source: str, rid: int) -> Iterator[tuple[socket.socket, bytes]]:
    """A listen stream opened from address ``source``: yields its socket and what came up
    to the end of its response head."""
    parts = urlsplit(url)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(WAIT)
        sock.bind((source, 0))
        sock.connect((parts.hostname or "127.0.0.1", parts.port or 80))
        sock.sendall(_listen_request(url, rid))
        yield sock, _head(sock)


def _refusal(sock: socket.socket, got: bytes) -> dict[str, Any]:
    """The JSON-RPC error of a 429 whose head (and perhaps some body) is ``got``."""
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 429"), got[:300]
    lines = head.lower().split(b"\r\n")
    assert b"retry-after: 1" in lines
    length = next(
        int(v) for k, _, v in (x.partition(b": ") for x in lines) if k == b"content-length"
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed mid-body"
        body += chunk
    return dict(orjson.loads(body))


def _server() -> Server:
    server = Server("listeners")

    @server.tool()
    def echo(text: str) -> str:
        """Says it back."""
        return text

    return server


def _skip_without_second_loopback() -> None:
    probe = socket.socket()
    try:
        probe.bind(("127.0.0.2", 0))
    except OSError:
        pytest.skip("127.0.0.2 cannot be bound here (no second loopback address)")
    finally:
        probe.close()


def test_one_address_holds_its_budget_of_listen_streams_and_no_more() -> None:
    _skip_without_second_loopback()
    with running(_server().http_app()) as srv, ExitStack() as held:
        for i in range(PER_CLIENT):
            _, got = held.enter_context(_listener(srv.url, "127.0.0.1", i))
            assert got.startswith(b"HTTP/1.1 200"), got[:300]
        with _listener(srv.url, "127.0.0.1", 1000) as (sock, got):
            error = _refusal(sock, got)["error"]
            assert error["message"] == (
                "Too many subscriptions/listen streams of this caller (at most 64 per "
                "client: its verified principal, else its address); retry later"
            )
        # Another client (another address) still listens: the app-wide bound is far off.
        with _listener(srv.url, "127.0.0.2", 2000) as (_, got):
            assert got.startswith(b"HTTP/1.1 200"), got[:300]


def test_a_smaller_per_client_budget_is_the_deployers_choice() -> None:
    _skip_without_second_loopback()
    app = _server().http_app(max_listen_streams=10, max_listen_streams_per_principal=2)
    with running(app) as srv, ExitStack() as held:
        for i in range(2):
            _, got = held.enter_context(_listener(srv.url, "127.0.0.2", i))
            assert got.startswith(b"HTTP/1.1 200"), got[:300]
        with _listener(srv.url, "127.0.0.2", 100) as (sock, got):
            assert "at most 2 per client" in _refusal(sock, got)["error"]["message"]
        for i in range(2):
            _, got = held.enter_context(_listener(srv.url, "127.0.0.1", 200 + i))
            assert got.startswith(b"HTTP/1.1 200"), got[:300]
    # Every stream closed: the budget was given back (nothing held by either address).
    assert app.stateless_era.listens.held == 0
