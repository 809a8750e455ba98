"""The load generator of ``python -m bench.eras``: raw sockets, keep-alive, no MCP SDK.

    python bench/eras_load.py --port P [--eras 2025,2026] --conns N --calls C
        [--chunks K] [--warmup W] [--server-pid PID]

For each era, opens ``--conns`` TCP connections to ``http://127.0.0.1:P/mcp`` and drives
``tools/call`` of ``echo`` over them with one request in flight per connection, from one
``epoll`` loop over non-blocking sockets (stdlib only: no asyncio, no HTTP library, no JSON
parsing on the hot path), so that the client costs little next to the server it measures.

The eras take turns: after ``--warmup`` calls of each, the ``--calls`` of each era run in
``--chunks`` slices, era after era, the first era of a slice alternating; each era's time is
the sum of its slices. Drift on a shared machine (other processes, frequency changes) then
hits both eras alike, and the ratio of their rates is taken within one process.

* ``--era 2025``: each connection first opens its own session the 2025-11-25 way
  (``initialize``, then ``notifications/initialized``), and every ``tools/call`` carries its
  ``Mcp-Session-Id`` and ``MCP-Protocol-Version: 2025-11-25``. The sessions are deleted at
  the end (``DELETE``).
* ``--era 2026``: no handshake and no session: every ``tools/call`` carries
  ``params._meta`` with ``io.modelcontextprotocol/protocolVersion`` ``2026-07-28`` and
  ``io.modelcontextprotocol/clientCapabilities`` ``{}``, and the standard headers
  ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name``.

Every response must be ``200`` with a JSON body (``Content-Length``) holding a ``result``:
anything else ends the run with an error. Prints one JSON object, per era: ``calls``,
``seconds``, ``calls_s``, and the CPU time per call of this process (``client_cpu_us``) and,
with ``--server-pid``, of the server (``server_cpu_us``, from ``/proc``, 10 ms ticks summed
over the slices) while the era's slices ran.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import sys
import time

MODERN = "2026-07-28"
SESSION = "2025-11-25"
TEXT = "hello"
CALL_PARAMS = '"params":{"name":"echo","arguments":{"text":"' + TEXT + '"}'
MODERN_META = (
    ',"_meta":{"io.modelcontextprotocol/protocolVersion":"' + MODERN + '",'
    '"io.modelcontextprotocol/clientCapabilities":{}}'
)


class LoadError(Exception):
    """The server answered something other than a successful JSON result."""


def initialize_body(client: str) -> bytes:
    """The 2025-11-25 ``initialize`` request that opens a session, as bytes."""
    params = {
        "protocolVersion": SESSION,
        "capabilities": {},
        "clientInfo": {"name": client, "version": "1"},
    }
    return json.dumps(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    ).encode()


def head(port: int, length: int, extra: str, method: str = "POST") -> bytes:
    return (
        f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        f"{extra}Content-Length: {length}\r\n\r\n"
    ).encode()


def parse(buf: bytearray) -> tuple[int, bytes, bytes, int] | None:
    """One whole response at the start of ``buf``: (status, head, body, bytes used)."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    top = bytes(buf[:end])
    length = header(top, "content-length")
    if length is None:
        raise LoadError(f"a response without Content-Length: {top!r}")
    used = end + 4 + int(length)
    if len(buf) < used:
        return None
    return int(top[9:12]), top, bytes(buf[end + 4 : used]), used


def header(top: bytes, name: str) -> str | None:
    """Header ``name`` (lower-case) of a response head, or None."""
    at = top.lower().find(b"\r\n" + name.encode() + b":")
    if at < 0:
        return None
    stop = top.find(b"\r\n", at + 2)
    return top[at + 3 + len(name) : stop if stop >= 0 else None].strip().decode("latin-1")


def exchange(sock: socket.socket, request: bytes) -> tuple[int, bytes, bytes]:
    """Send one request and read its whole response (blocking; setup and teardown only)."""
    sock.sendall(request)
    buf = bytearray()
    while True:
        got = parse(buf)
        if got is not None:
            return got[:3]
        chunk = sock.recv(65536)
        if not chunk:
            raise LoadError("the server closed the connection")
        buf += chunk


class Conn:
    """One keep-alive connection and the fixed parts of its ``tools/call`` requests."""

    def __init__(self, port: int, era: str) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.session: str | None = None
        if era == "2025":
            self.session = self._open_session()
            extra = f"Mcp-Session-Id: {self.session}\r\nMcp-Protocol-Version: {SESSION}\r\n"
            self.tail = (',"method":"tools/call",' + CALL_PARAMS + "}}").encode()
        else:
            extra = (
                f"Mcp-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n"
            )
            self.tail = (',"method":"tools/call",' + CALL_PARAMS + MODERN_META + "}}").encode()
        self.extra = extra
        self.buf = bytearray()

    def _open_session(self) -> str:
        init = initialize_body("eras-load")
        status, top, body = exchange(self.sock, head(self.port, len(init), "") + init)
        session = header(top, "mcp-session-id")
        if status != 200 or session is None:
            raise LoadError(f"initialize: HTTP {status} {body[:300]!r}")
        note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        extra = f"Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: {SESSION}\r\n"
        status, _, body = exchange(self.sock, head(self.port, len(note), extra) + note)
        if status != 202:
            raise LoadError(f"notifications/initialized: HTTP {status} {body[:300]!r}")
        return session

    def request(self, rid: int) -> bytes:
        body = b'{"jsonrpc":"2.0","id":' + str(rid).encode() + self.tail
        return head(self.port, len(body), self.extra) + body

    def close(self) -> None:
        if self.session is not None:
            extra = f"Mcp-Session-Id: {self.session}\r\nMcp-Protocol-Version: {SESSION}\r\n"
            self.sock.setblocking(True)
            exchange(self.sock, head(self.port, 0, extra, "DELETE"))
        self.sock.close()


def drive(conns: list[Conn], calls: int, first_id: int) -> float:
    """``calls`` tools/call over ``conns``, one in flight on each; the seconds it took."""
    poller = select.epoll()
    by_fd = {}
    for c in conns:
        c.sock.setblocking(False)
        poller.register(c.sock.fileno(), select.EPOLLIN)
        by_fd[c.sock.fileno()] = c
    next_id = first_id
    sent = done = 0
    start = time.perf_counter()
    for c in conns:
        if sent < calls:
            c.sock.sendall(c.request(next_id))
            next_id += 1
            sent += 1
    while done < calls:
        for fd, _ in poller.poll():
            c = by_fd[fd]
            chunk = c.sock.recv(65536)
            if not chunk:
                raise LoadError("the server closed the connection")
            c.buf += chunk
            got = parse(c.buf)
            if got is None:
                continue
            status, _, body, used = got
            del c.buf[:used]
            if status != 200 or b'"result"' not in body:
                raise LoadError(f"tools/call: HTTP {status} {body[:300]!r}")
            done += 1
            if sent < calls:
                c.sock.sendall(c.request(next_id))
                next_id += 1
                sent += 1
    elapsed = time.perf_counter() - start
    poller.close()
    return elapsed


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICK


TICK = os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/eras_load.py")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--eras", default="2025,2026", help="comma-separated: 2025, 2026")
    p.add_argument("--conns", type=int, default=1, help="connections per era")
    p.add_argument("--calls", type=int, default=2000, help="timed calls per era")
    p.add_argument("--chunks", type=int, default=10, help="slices the eras alternate in")
    p.add_argument("--warmup", type=int, default=200, help="untimed calls per era first")
    p.add_argument("--server-pid", type=int, default=0)
    a = p.parse_args(argv)
    eras = a.eras.split(",")
    if not set(eras) <= {"2025", "2026"}:
        p.error(f"unknown era in {a.eras!r}")
    conns = {era: [Conn(a.port, era) for _ in range(a.conns)] for era in eras}
    totals = {era: {"calls": 0, "seconds": 0.0, "cpu": 0.0, "server_cpu": 0.0} for era in eras}
    next_id = 1
    try:
        for era in eras:
            if a.warmup:
                drive(conns[era], max(a.warmup, a.conns), next_id)
                next_id += max(a.warmup, a.conns)
        for k in range(a.chunks):
            for era in eras if k % 2 == 0 else eras[::-1]:
                n = a.calls // a.chunks + (a.calls % a.chunks if k == a.chunks - 1 else 0)
                server = cpu_seconds(a.server_pid) if a.server_pid else 0.0
                cpu = time.process_time()
                seconds = drive(conns[era], n, next_id)
                t = totals[era]
                t["cpu"] += time.process_time() - cpu
                if a.server_pid:
                    t["server_cpu"] += cpu_seconds(a.server_pid) - server
                t["calls"] += n
                t["seconds"] += seconds
                next_id += n
    finally:
        for group in conns.values():
            for c in group:
                c.close()
    out = {}
    for era, t in totals.items():
        out[era] = {
            "calls": t["calls"],
            "seconds": t["seconds"],
            "calls_s": t["calls"] / t["seconds"],
            "client_cpu_us": t["cpu"] / t["calls"] * 1e6,
            "server_cpu_us": t["server_cpu"] / t["calls"] * 1e6 if a.server_pid else None,
        }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
