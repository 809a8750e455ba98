"""Fixtures of the multi-worker tests: a real Redis server, and workers behind the proxy.

redis-py's asyncio client runs on asyncio only, and the clusters are processes the test
process only talks HTTP to: these tests run once, in the asyncio pass of the suite. A module
that talks to its workers over HTTP only and reads Redis with the blocking client (in a
worker thread) sets ``BOTH_BACKENDS = True``: it runs in the trio pass too, on trio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from tests.conftest import BACKEND
from tests.scaleout._cluster import RedisServer, redis_server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if BACKEND == "asyncio":
        return
    mark = pytest.mark.skip(
        reason="Redis tests run in the asyncio pass (redis-py is asyncio-only; the workers "
        "are subprocesses whatever the test's loop)"
    )
    here = Path(__file__).parent
    for item in items:
        both = getattr(getattr(item, "module", None), "BOTH_BACKENDS", False)
        if here in Path(item.path).parents and not both:
            item.add_marker(mark)


@pytest.fixture
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return BACKEND if getattr(request.module, "BOTH_BACKENDS", False) else "asyncio"


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
async def db(redis: RedisServer) -> AsyncIterator[Redis]:
    """A client of the module's Redis, to look at what the workers keep (asyncio only)."""
    client = Redis.from_url(redis.url)
    try:
        yield client
    finally:
        await client.aclose()


JOBS = Path(__file__).with_name("_jobs.py")
