# ruff: noqa: ASYNC110, ASYNC220, ASYNC230  (polling a server process; test-only blocking calls)
"""10,000 sessions opened and dropped without DELETE, over real sockets: the companion of
``test_streams.py::test_10000_sessions_dropped_without_delete_are_reaped`` (which drives the
ASGI app in-process). Here the app runs under real uvicorn on 127.0.0.1 in its own process
(``_memory_server.py``), so the test can read that process's RSS from ``/proc``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import anyio
import httpx2 as httpx
import orjson
import pytest
from _http_helpers import HEADERS, INIT_PARAMS, free_port

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SESSIONS = 10_000
WARMUP = 300
CONNECTIONS = 4  # keep-alive connections opening sessions at once
PIPELINE = 4  # requests written back to back on one connection before reading the answers
IDLE_TIMEOUT = 1.0
INIT = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
PING = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_memory_server.py")


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


class _Conn:
    """A minimal keep-alive HTTP/1.1 client connection (Content-Length and chunked bodies).

    The 10,000 initialize POSTs are the test's bulk: httpx spends about 3 ms of CPU on each
    and the transports' HTTP client about 1 ms, which on 2 shared cores starves the server
    under test (about 1.5 ms each); this spends a fraction of that.
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.buf = bytearray()

    async def _line(self) -> bytes:
        while (i := self.buf.find(b"\r\n")) < 0:
            self.buf += await self.stream.receive(65536)
        out = bytes(self.buf[:i])
        del self.buf[: i + 2]
        return out

    async def _exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            self.buf += await self.stream.receive(65536)
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    async def response(self) -> tuple[int, dict[str, str], bytes]:
        status = int((await self._line()).split()[1])
        headers: dict[str, str] = {}
        while line := await self._line():
            k, _, v = line.partition(b":")
            headers[k.strip().lower().decode()] = v.strip().decode()
        if "content-length" in headers:
            return status, headers, await self._exactly(int(headers["content-length"]))
        assert headers.get("transfer-encoding") == "chunked", headers
        parts = []
        while size := int((await self._line()).split(b";")[0], 16):
            parts.append(await self._exactly(size))
            await self._exactly(2)
        await self._line()
        return status, headers, b"".join(parts)


async def _open_sessions(port: int, n: int) -> list[str]:
    """POST ``initialize`` ``n`` times over ``CONNECTIONS`` keep-alive connections; the
    session ids, in order of arrival. Nothing is ever DELETEd."""
    request = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
        "accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n"
        f"content-length: {len(INIT)}\r\n\r\n"
    ).encode() + INIT
    sids: list[str] = []

    async def worker(count: int) -> None:
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            conn = _Conn(stream)
            while count:
                k = min(PIPELINE, count)
                await stream.send(request * k)
                for _ in range(k):
                    status, headers, body = await conn.response()
                    assert status == 200 and b'"protocolVersion"' in body, (status, body)
                    sids.append(headers["mcp-session-id"])
                count -= k

    async with anyio.create_task_group() as tg:
        for i in range(CONNECTIONS):
            tg.start_soon(worker, n // CONNECTIONS + (i < n % CONNECTIONS))
    return sids


@pytest.mark.slow
@pytest.mark.req("HTTP-SESSION-404")
# The server under test runs in its own process on uvicorn's asyncio whatever the suite's
# loop; the test's loop only drives the sockets. One pass is enough (13 CPU s each).
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_10000_sessions_dropped_without_delete_free_their_memory_over_uvicorn(
    tmp_path: Any, anyio_backend: str
) -> None:
    port = free_port()
    log = tmp_path / "server.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, SERVER, str(port), str(IDLE_TIMEOUT)], stderr=err)
    base = f"http://127.0.0.1:{port}"
    t0 = time.monotonic()
    figures: dict[str, Any] = {}

    def note(**kw: Any) -> None:
        figures.update(kw)
        print(f"{time.monotonic() - t0:6.1f}s", kw, flush=True)

    try:
        async with httpx.AsyncClient(base_url=base, timeout=30) as c:

            async def ctl(path: str, body: str | None = None) -> dict[str, Any]:
                if body is None:
                    r = await c.get(path)
                else:
                    r = await c.post(path, content=body.encode())
                assert r.status_code == 200
                return dict(r.json())

            async def ping(sid: str) -> int:
                h = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
                return (await c.post("/mcp", content=PING, headers=h)).status_code

            async def wait_reaped(limit: float) -> None:
                # Another process: nothing to wait on but its answers (bounded poll).
                with anyio.fail_after(limit):
                    while (await ctl("/_test/count"))["sessions"]:
                        await anyio.sleep(0.1)

            async def settled() -> dict[str, Any]:
                # Dropped sessions' tasks unwind on the server's loop after the table
                # empties: measure until the object count stops falling (bounded).
                m = await ctl("/_test/measure")
                with anyio.fail_after(10):
                    while True:
                        await anyio.sleep(0.2)
                        nxt = await ctl("/_test/measure")
                        if nxt["objects"] >= m["objects"] - 100:
                            break
                        m = nxt
                await ctl("/_test/trim", "")
                m["rss_trimmed"] = _rss_kib(proc.pid)
                return m

            with anyio.fail_after(15):
                while True:
                    try:
                        await ctl("/_test/count")
                        break
                    except httpx.ConnectError:
                        assert proc.poll() is None, log.read_text()
                        await anyio.sleep(0.05)

            # Warm up (imports, caches, allocator pools) with a few hundred sessions, let the
            # idle timeout end them, and take the baseline.
            warm = await _open_sessions(port, WARMUP)
            rss_warm_peak = _rss_kib(proc.pid)
            await ctl("/_test/advance", str(IDLE_TIMEOUT + 1))
            await wait_reaped(10)
            assert await ping(warm[0]) == 404
            rss_base = _rss_kib(proc.pid)
            b = await settled()
            note(base=b, rss_base=rss_base, rss_warm_peak=rss_warm_peak)

            # 10,000 sessions, held together: the server's clock stands still meanwhile, so
            # none goes idle however long opening them takes.
            with anyio.fail_after(60):
                sids = await _open_sessions(port, SESSIONS)
            assert len(set(sids)) == SESSIONS
            held = await ctl("/_test/measure")
            rss_held = _rss_kib(proc.pid)
            assert held["sessions"] == SESSIONS
            assert await ping(sids[0]) == 200  # the app holds the first one too
            per_session = (rss_held - rss_base) * 1024 / SESSIONS
            note(held=held, rss_held=rss_held, rss_per_session_bytes=round(per_session))

            # Nobody sends DELETE: the idle timeout ends them all.
            await ctl("/_test/advance", str(IDLE_TIMEOUT + 1))
            t_reap = time.monotonic()
            await wait_reaped(20)
            reap_s = time.monotonic() - t_reap
            assert await ping(sids[0]) == 404
            assert await ping(sids[-1]) == 404
            rss_after = _rss_kib(proc.pid)
            a = await settled()
            note(after=a, rss_after=rss_after, reap_seconds=round(reap_s, 1))

            # Still serving.
            r = await c.post("/mcp", content=INIT, headers=HEADERS)
            assert r.status_code == 200 and "mcp-session-id" in r.headers
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    note(wall_seconds=round(time.monotonic() - t0, 1))

    # 10,000 live sessions are visible (measured: ~91 objects, ~149 pymalloc blocks, ~3.5 kB
    # of malloc and ~19 kB of RSS each)...
    assert held["objects"] - b["objects"] > 50 * SESSIONS, figures
    assert held["blocks"] - b["blocks"] > 100 * SESSIONS, figures
    grown = rss_held - rss_base
    assert grown * 1024 > 5_000 * SESSIONS, figures
    # ...and gone: every Python object and pymalloc block they held is freed (margins: 0.1
    # object and 0.5 block per session; measured: +0 objects, +30 blocks).
    assert a["stored"] == 0
    assert a["objects"] - b["objects"] < 1_000, figures
    assert a["blocks"] - b["blocks"] < 5_000, figures
    if a["heap"] is not None:
        # malloc'd bytes: +7.3 MB once (a high-water mark: the same after three rounds of
        # 10,000), against ~35 MB held by the live sessions.
        assert a["heap"] - b["heap"] < 12 * 2**20, figures
    # RSS, with the C allocator's cached free memory returned first (malloc_trim): without
    # that, RSS stays near its peak (glibc keeps freed heap memory), though nothing is
    # alive. Measured: +38 MB over the baseline, against +184 MB held by the sessions; a leak
    # of them all would keep all of it.
    assert a["rss_trimmed"] - b["rss_trimmed"] < grown / 2, figures
