"""Slowloris: requests sent a byte at a time must not hold the server's connections forever.

Before: no limit on slow heads or bodies (300 half-sent requests held; a body at 1 byte/s
held 40 s). Over real uvicorn, with raw sockets playing the slow client.
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.http._http_helpers import free_port, running

from mcpkit import Server

WAIT = 10.0


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.settimeout(WAIT)
    return sock


def _wait_listening(proc: subprocess.Popen[bytes]) -> None:
    """Until uvicorn says it listens (its own log line on stderr), bounded."""
    assert proc.stderr is not None
    seen = b""
    deadline = time.monotonic() + 20
    while b"Uvicorn running" not in seen:
        ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"the server never listened: {seen!r}"
        chunk = os.read(proc.stderr.fileno(), 4096)
        assert chunk, f"the server died while starting: {seen!r}"
        seen += chunk


def _answer_of(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (bounded by WAIT)."""
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data


@pytest.fixture
def slow_head_server(tmp_path: Path) -> object:
    port = free_port()
    script = tmp_path / "serve.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from mcpkit import Server, serve_http

            serve_http(Server("slow"), port={port}, header_timeout=1.0, log_level="info")
            """
        )
    )
    proc = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.PIPE)
    try:
        _wait_listening(proc)
        yield port
    finally:
        proc.kill()
        proc.wait(timeout=10)
        assert proc.stderr is not None
        proc.stderr.close()


def test_heads_sent_a_byte_at_a_time_are_cut_off(slow_head_server: int) -> None:
    port = slow_head_server
    socks = [_connect(port) for _ in range(50)]
    try:
        for sock in socks:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        started = time.monotonic()
        for sock in socks:
            assert _answer_of(sock).startswith(b"HTTP/1.1 408")
        assert time.monotonic() - started < WAIT
    finally:
        for sock in socks:
            sock.close()
    # A prompt client is served as usual.
    with _connect(port) as sock:
        sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert _answer_of(sock).startswith(b"HTTP/1.1 4")  # a GET without a session: 4xx


def test_a_body_sent_a_byte_at_a_time_is_cut_off() -> None:
    app = Server("slow").http_app()
    app.options.body_timeout = 0.5
    with running(app) as srv, _connect(srv.port) as sock:
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"accept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n{"
        )
        started = time.monotonic()
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert time.monotonic() - started < WAIT
