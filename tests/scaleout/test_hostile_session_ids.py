"""Hostile: a session id naming another Redis key reads nothing, renews nothing, deletes nothing.

A session's record is ``mcpkit:s:<id>``; beside it live ``mcpkit:s:<id>:get`` (the worker
holding its GET stream) and ``mcpkit:s:<id>:bl`` (its backlog). Once, ``Mcp-Session-Id:
<victim>:get`` made a worker ``GETEX`` the victim's ``:get`` key (renewing it) and answer a
plain-text 500. Now an id of any shape but ours is an unknown session, answered 404 with a
JSON-RPC error before any key is built.
"""

from __future__ import annotations

import httpx2
import orjson
import pytest
from redis.asyncio import Redis
from tests.scaleout._cluster import RedisServer
from tests.scaleout._run import run_argv, worker
from tests.scaleout._wire import headers, initialize

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

LIST = orjson.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})


async def test_an_id_naming_another_key_reads_renews_and_deletes_nothing(
    redis: RedisServer, db: Redis
) -> None:
    with worker(run_argv("--redis", redis.url)) as w:
        assert f"sessions in Redis 127.0.0.1:{redis.port}/0" in w.announcement
        async with httpx2.AsyncClient(timeout=20) as http:
            victim = await initialize(http, w.url)
            # The victim's side keys, with a short life we can watch.
            await db.set(f"mcpkit:s:{victim}:get", b"deadbeef", px=50_000)
            await db.rpush(f"mcpkit:s:{victim}:bl", b'{"jsonrpc":"2.0","method":"x"}')
            await db.pexpire(f"mcpkit:s:{victim}:bl", 50_000)
            record_ttl = await db.pttl(f"mcpkit:s:{victim}")
            for bad in (f"{victim}:get", f"{victim}:bl", f"{victim}*", "*", victim + ":"):
                h = headers(bad)
                for answer in (
                    await http.post(w.url, headers=h, content=LIST),
                    await http.get(w.url, headers={**h, "accept": "text/event-stream"}),
                    await http.delete(w.url, headers=h),
                ):
                    assert answer.status_code == 404, (bad, answer.status_code, answer.text)
                    assert answer.headers["content-type"].startswith("application/json")
                    assert answer.json()["error"]["code"] == -32600
            # Nothing read, renewed or deleted: the keys are as we left them.
            assert await db.get(f"mcpkit:s:{victim}:get") == b"deadbeef"
            assert 0 < await db.pttl(f"mcpkit:s:{victim}:get") <= 50_000
            assert await db.llen(f"mcpkit:s:{victim}:bl") == 1
            assert 0 < await db.pttl(f"mcpkit:s:{victim}:bl") <= 50_000
            assert await db.pttl(f"mcpkit:s:{victim}") <= record_ttl
            # The victim's own session is served as before.
            ok = await http.post(w.url, headers=headers(victim), content=LIST)
            assert ok.status_code == 200, ok.text
