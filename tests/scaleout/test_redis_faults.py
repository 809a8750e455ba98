"""Redis going away, coming back, or never answering: clear errors, bounded waits, recovery."""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import orjson
import pytest
from tests.scaleout._cluster import (
    RedisServer,
    free_port,
    redis_server,
    start_worker,
    stop_process,
    wait_port,
)
from tests.scaleout._wire import answer, call, headers, initialize
from tests.scaleout.conftest import JOBS

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(120)]

PING = b'{"jsonrpc":"2.0","id":5,"method":"ping"}'


@asynccontextmanager
async def _worker(redis: RedisServer, log: Path) -> AsyncIterator[tuple[str, httpx2.AsyncClient]]:
    """A worker on ``redis`` (its log in ``log``), its URL and a client; after the block the
    worker is stopped and must have stopped on SIGTERM, gracefully, not stuck (SIGKILL)."""
    port = free_port()
    worker = start_worker(redis.url, JOBS, port, log)
    try:
        wait_port(port, worker)
        async with httpx2.AsyncClient(timeout=30) as http:
            yield f"http://127.0.0.1:{port}/mcp", http
    finally:
        stop_process(worker)
    assert worker.returncode == 0


@pytest.fixture
def durable_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis that keeps its data across a restart (append-only file, fsync always)."""
    with redis_server(tmp_path, durable=True) as server:
        yield server


async def _ping_until(
    http: httpx2.AsyncClient, url: str, sid: str, done: Callable[[int], bool], within: float
) -> httpx2.Response:
    """Ping in session ``sid`` until ``done(status)`` (a worker noticing Redis go or come
    back: its bus tells it, a moment later), for ``within`` seconds at most."""
    with anyio.fail_after(within):
        while True:
            r = await http.post(url, headers=headers(sid), content=PING)
            if done(r.status_code):
                return r
            await anyio.sleep(0.1)


async def test_redis_restarted_under_a_worker(durable_redis: RedisServer, tmp_path: Path) -> None:
    async with _worker(durable_redis, tmp_path / "worker.log") as (url, http):
        sid = await initialize(http, url)
        assert (await call(http, url, sid, "ping", None))["result"] == {}
        durable_redis.stop()
        # Down: a clear 503 with Retry-After, soon, not a hang or a 500. A session read
        # within FRESH_FOR (1 s) may still be served from the worker's replica until the
        # worker's bus has seen Redis go: 200s are tolerated until the 503 comes.
        r = await _ping_until(http, url, sid, lambda status: status != 200, within=15)
        assert r.status_code == 503, r.text
        assert r.headers["retry-after"] == "1"
        assert "session store" in r.json()["error"]["message"]
        durable_redis.start()
        # Back: the same session goes on (its state was kept by Redis), the worker too.
        r = await _ping_until(http, url, sid, lambda status: status != 503, within=20)
        assert r.status_code == 200, r.text
        built = await call(
            http, url, sid, "tools/call", {"name": "build", "arguments": {"steps": 1}}
        )
        assert built["result"]["content"][0]["text"] == "built in 1 steps"


def _modern(rid: int, method: str, params: dict[str, Any]) -> tuple[dict[str, str], bytes]:
    """A 2026-07-28 request from a client declaring the tasks extension, and its headers."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    }
    msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": meta}}
    h = {"mcp-protocol-version": "2026-07-28", "mcp-method": method}
    named = params.get("name", params.get("taskId"))  # what Mcp-Name mirrors
    if named is not None:
        h["mcp-name"] = named
    return headers(**h), orjson.dumps(msg)


async def _logged(log: Path, text: str) -> None:
    """Until the worker's log holds ``text`` (it writes there; there is no event to wait on)."""
    while text not in await anyio.Path(log).read_text():  # noqa: ASYNC110  (another process)
        await anyio.sleep(0.05)


def _task_call(rid: int) -> tuple[dict[str, str], bytes]:
    """``tools/call`` of ``build``: the server runs it as a task, its record in Redis."""
    return _modern(rid, "tools/call", {"name": "build", "arguments": {"steps": 1}})


async def test_a_2026_task_call_while_redis_is_down_is_answered_503(
    durable_redis: RedisServer, tmp_path: Path
) -> None:
    """No session to read, but the task's record to write: with Redis gone the call gets
    503 with Retry-After (the client may retry; nothing was started), not a 200 carrying
    an internal error; once Redis is back the same call starts its task."""
    async with _worker(durable_redis, tmp_path / "worker.log") as (url, http):
        h, body = _task_call(1)
        r = await http.post(url, headers=h, content=body)
        assert r.status_code == 200 and answer(r)["result"]["resultType"] == "task", r.text
        durable_redis.stop()
        with anyio.fail_after(30):
            r = await http.post(url, headers=h, content=_task_call(2)[1])
        assert r.status_code == 503, r.text
        assert r.headers["retry-after"] == "1"
        error = r.json()
        assert error["id"] == 2 and error["error"]["code"] == -32603, error
        assert "not answering" in error["error"]["message"], error
        durable_redis.start()
        with anyio.fail_after(30):
            while True:
                r = await http.post(url, headers=h, content=_task_call(3)[1])
                if r.status_code != 503:
                    break
                await anyio.sleep(0.1)
        assert r.status_code == 200 and answer(r)["result"]["resultType"] == "task", r.text


async def test_a_task_ending_while_redis_is_down_is_recorded_once_redis_is_back(
    durable_redis: RedisServer, tmp_path: Path
) -> None:
    """A task that ends while Redis is down: its end is recorded again and again (bounded)
    rather than raised, which stopped the worker ("Application shutdown failed"); the
    worker serves on, and once Redis is back the task reads completed, with its result."""
    log = tmp_path / "worker.log"
    async with _worker(durable_redis, log) as (url, http):
        h, body = _modern(1, "tools/call", {"name": "nap", "arguments": {"seconds": 0.3}})
        created = answer(await http.post(url, headers=h, content=body))["result"]
        assert created["resultType"] == "task", created
        durable_redis.stop()
        with anyio.fail_after(30):  # the worker says the task ended, unrecorded yet
            await _logged(log, "recording it again")
        h, body = _modern(2, "tools/list", {})
        r = await http.post(url, headers=h, content=body)
        assert r.status_code == 200, r.text  # still serving what needs no Redis
        durable_redis.start()
        h, body = _modern(3, "tasks/get", {"taskId": created["taskId"]})
        with anyio.fail_after(30):
            while True:
                r = await http.post(url, headers=h, content=body)
                if r.status_code == 200 and answer(r)["result"].get("status") != "working":
                    break
                await anyio.sleep(0.05)
        done = answer(r)["result"]
        assert done["status"] == "completed", done
        assert done["result"]["content"][0]["text"] == "napped 0.3 s", done
    assert "not recorded" not in log.read_text()


class BlackHole:
    """A TCP server that accepts connections and never says a word (a wedged Redis)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()


async def test_a_redis_that_never_answers_holds_no_worker(tmp_path: Path) -> None:
    hole = BlackHole()
    port = free_port()
    worker = start_worker(f"redis://127.0.0.1:{hole.port}/0", JOBS, port, tmp_path / "worker.log")
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_port(port, worker)
        async with httpx2.AsyncClient(timeout=30) as http:
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            }
            for _ in range(2):  # bounded each time, and the worker keeps answering
                with anyio.fail_after(20):
                    r = await http.post(url, headers=headers(), content=orjson.dumps(init))
                assert r.status_code == 503, r.text
            # What needs no shared state is still served: a stateless (2026-07-28) request.
            listing = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/list",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
                    }
                },
            }
            with anyio.fail_after(10):
                r = await http.post(
                    url,
                    headers=headers(
                        **{"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
                    ),
                    content=orjson.dumps(listing),
                )
            assert r.status_code == 200, r.text
    finally:
        stop_process(worker)
        hole.close()
    assert worker.returncode == 0  # nothing held it: a graceful stop, no SIGKILL needed
    # It started all the same, and said why at startup (deploy.md, "Turning it on").
    said = (tmp_path / "worker.log").read_text()
    assert f"Redis 127.0.0.1:{hole.port}/0 did not answer within 5 s; serving on" in said
