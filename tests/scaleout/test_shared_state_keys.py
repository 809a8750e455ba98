"""2026-07-28 multi round-trip requests across workers: the ``requestState`` one worker sealed
is verified by another, because workers on one Redis share the sealing key by themselves
(created there once, rotated). Real ``mcpkit run --redis`` workers on a real redis-server;
the rotation itself with an injected clock (two backends, as two workers would hold them).
"""

from __future__ import annotations

from typing import Any

import httpx2
import orjson
import pytest
from redis.asyncio import Redis
from tests.scaleout._cluster import RedisServer
from tests.scaleout._run import environment, run_argv, worker

from mcpkit import RedisBackend
from mcpkit._exceptions import InvalidParams
from mcpkit._server._mrtr import StatelessSettings, seal, unseal

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

REV = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": REV,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "retry-elsewhere", "version": "1"},
}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": REV,
    "mcp-method": "tools/call",
    "mcp-name": "greet",
}


async def _greet(http: httpx2.AsyncClient, url: str, **rounds: Any) -> dict[str, Any]:
    """POST a 2026-07-28 ``tools/call greet`` (with what earlier rounds gave); its response."""
    params = {"name": "greet", "arguments": {}, "_meta": META, **rounds}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    r = await http.post(url, headers=HEADERS, content=orjson.dumps(body))
    assert r.status_code == 200, r.text
    if r.headers["content-type"].startswith("text/event-stream"):
        data = [ln[5:] for ln in r.text.splitlines() if ln.startswith("data:")]
        return orjson.loads(data[-1])  # type: ignore[no-any-return]
    return r.json()  # type: ignore[no-any-return]


async def test_an_elicitation_asked_on_one_worker_is_answered_on_another(
    redis: RedisServer,
) -> None:
    redis_argv = run_argv("--redis", redis.url)
    with worker(redis_argv) as a, worker(redis_argv) as b, worker(run_argv()) as alone:
        async with httpx2.AsyncClient(timeout=20) as http:
            first = (await _greet(http, a.url))["result"]
            assert first["resultType"] == "input_required"
            assert list(first["inputRequests"]) == ["name"]
            answer = {"name": {"action": "accept", "content": {"name": "Alice"}}}
            rounds = {"inputResponses": answer, "requestState": first["requestState"]}
            # The retry reaches another worker, which never saw the first round.
            done = (await _greet(http, b.url, **rounds))["result"]
            assert done["content"] == [{"type": "text", "text": "Hello, Alice!"}]
            # A worker sharing neither Redis nor a key refuses it, and says why.
            refused = (await _greet(http, alone.url, **rounds))["error"]
    assert refused["code"] == -32602
    assert "random key of its own" in refused["message"]
    assert "MCPKIT_STATE_KEY" in refused["message"] and "--redis" in refused["message"]


async def test_a_key_set_on_every_worker_wins_over_the_redis_ones(redis: RedisServer) -> None:
    # docs/http.md and deploy.md: MCPKIT_STATE_KEY, the same on every worker. One worker
    # on Redis and one without it share the key set in their environment, not Redis's.
    keyed = environment({"MCPKIT_STATE_KEY": "the-same-key-on-every-worker"})
    on_redis = run_argv("--redis", redis.url)
    with worker(on_redis, keyed) as a, worker(run_argv(), keyed) as b:
        async with httpx2.AsyncClient(timeout=20) as http:
            first = (await _greet(http, a.url))["result"]
            answer = {"name": {"action": "accept", "content": {"name": "Bob"}}}
            rounds = {"inputResponses": answer, "requestState": first["requestState"]}
            done = (await _greet(http, b.url, **rounds))["result"]
    assert done["content"] == [{"type": "text", "text": "Hello, Bob!"}]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000 * 3600.0  # the start of a period

    def __call__(self) -> float:
        return self.now


def test_a_rotation_under_a_minute_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 60 seconds"):
        RedisBackend("redis://127.0.0.1:6379/0", state_key_rotation=59)


async def test_the_shared_keys_rotate_and_the_previous_one_still_verifies(
    redis: RedisServer, db: Redis
) -> None:
    hour = 3600.0
    clock = Clock()
    one, two = (
        RedisBackend(redis.url, prefix="rotation:", state_key_rotation=hour) for _ in range(2)
    )
    keys_one, keys_two = one.state_keys(), two.state_keys()
    keys_one.clock = keys_two.clock = clock
    seals, checks = StatelessSettings(), StatelessSettings()
    assert seals.share_keys(keys_one) and checks.share_keys(keys_two)
    try:
        await keys_one.refresh()
        await keys_two.refresh()
        # One key per period, made once in Redis (the current one and the next), the same
        # for both workers.
        stored = sorted(await db.keys("rotation:statekey:*"))
        assert len(stored) == 2
        made = keys_one.sealing_key()
        assert keys_two.sealing_key() == made
        first = seal(seals, {"n": 1})
        assert unseal(checks, first) == {"n": 1}

        # An hour on, before anyone read Redis again: the next key was read ahead.
        clock.now += hour
        second = seal(seals, {"n": 2})
        assert keys_one.sealing_key() != made  # a new key seals
        assert unseal(checks, second) == {"n": 2}
        assert unseal(checks, first) == {"n": 1}  # the previous key still verifies

        # Two hours on, keys read again: the first key is gone, the second still good.
        clock.now += hour
        await keys_one.refresh()
        await keys_two.refresh()
        assert len(keys_two.verifying_keys()) == 3  # previous, current, next: bounded
        assert unseal(checks, second) == {"n": 2}
        with pytest.raises(InvalidParams) as refused:
            unseal(checks, first)
        message = str(refused.value.message)
        assert f"Redis 127.0.0.1:{redis.port}/0" in message and "rotations" in message
        # Each key expires from Redis by itself, three periods after it was made.
        for key in await db.keys("rotation:statekey:*"):
            assert 0 < await db.ttl(key) <= 3 * hour + 60

        # A key the server was given wins over the shared ones.
        given = StatelessSettings(state_key=b"k" * 32)
        assert not given.share_keys(keys_one)
        assert given.key() == b"k" * 32
    finally:
        for backend in (one, two):
            await backend.client.aclose()
