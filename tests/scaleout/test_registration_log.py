"""The registration log over a real redis-server: tools, resources and prompts added or
removed at run time on one worker are made on every other, in the log's order, and on a
worker starting later. Each "worker" here is an app on a :class:`RedisBackend` of its own
(its own worker id), all in this process, so the test can look into each server's registry;
``tests/scaleout/test_cluster_changes.py`` does the same with real worker processes.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.lowlevel
import orjson
import pytest
from redis.asyncio import Redis
from tests.scaleout._cluster import RedisServer

from mcpkit import RedisBackend, Server, create_http_app
from mcpkit._redis._changes import RedisRegistrationLog

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def shout(text: str) -> str:
    """Say ``text`` louder (module-level: every worker finds it again)."""
    return text.upper()


def note() -> str:
    """A note, served as a resource."""
    return "noted"


def ask(topic: str) -> str:
    """A prompt about ``topic``."""
    return f"Tell me about {topic}"


class Worker:
    """One worker: a server running the same code as the others, on a backend of its own.
    ``greeter`` is its change function (what a tool of it would call)."""

    def __init__(self, backend: RedisBackend) -> None:
        self.server = server = Server("changes")
        self.backend = backend
        self.log = backend.registration_log()

        @server.tool()
        def static() -> str:
            """Registered by the code itself, on every worker."""
            return "static"

        @server.runtime_change
        def greeter(who: str) -> None:
            def greet() -> str:
                return f"hello from {who}"

            server.add_tool(greet, name=f"greet_{who}", description=f"Greets as {who}.")

        self.greeter = greeter
        self.told: list[str] = []  # what its listen streams were told since, in order
        post = server.listeners.post

        def spy(method: str, params: dict[str, Any] | None = None) -> None:
            self.told.append(method)
            post(method, params)

        server.listeners.post = spy  # type: ignore[method-assign]

    def tools(self) -> list[str]:
        return list(self.server.registry.tools)


@contextlib.asynccontextmanager
async def worker(url: str, prefix: str) -> AsyncIterator[Worker]:
    """A worker on Redis at ``url`` under ``prefix`` until the block ends; yields once it
    serves (from then on its changes are logged)."""
    w = Worker(RedisBackend(url, prefix=prefix))
    async with create_http_app(w.server, backend=w.backend):
        await until(lambda: w.log.shared)  # the log starts with the app's task group
        yield w


async def until(check: Callable[[], bool]) -> None:
    """Until ``check()`` holds (bounded)."""
    with anyio.fail_after(10):
        while not check():  # noqa: ASYNC110 (what the bus's task changes: no event to await)
            await anyio.sleep(0.01)


@pytest.fixture
def prefix() -> str:
    return f"rc{secrets.token_hex(4)}:"


def _only_here(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "on this worker only" in r.getMessage()]


async def test_a_change_on_one_worker_is_made_on_the_others_and_on_a_later_one(
    redis: RedisServer, prefix: str
) -> None:
    async with worker(redis.url, prefix) as a, worker(redis.url, prefix) as b:
        a.server.add_tool(shout, name="shout", title="Shout")
        a.server.add_resource("note://today", note, mime_type="text/plain")
        a.server.add_resource("note://static", b"\x00bytes")
        a.server.add_prompt(ask)
        a.server.remove_tool("static")
        await until(lambda: "static" not in b.tools())
        assert b.tools() == ["shout"]
        assert b.server.tools[0]["title"] == "Shout"
        assert set(b.server.registry.resources) == {"note://today", "note://static"}
        assert b.server.registry.resources["note://today"].mime_type == "text/plain"
        assert list(b.server.registry.prompts) == ["ask"]
        # The other way round: b removes what a added.
        b.server.remove_prompt("ask")
        await until(lambda: not a.server.registry.prompts)
        # A worker starting now makes every change before it serves.
        async with worker(redis.url, prefix) as late:
            assert late.tools() == ["shout"]
            assert set(late.server.registry.resources) == {"note://today", "note://static"}
            assert late.server.registry.resources["note://static"]._value == b"\x00bytes"
            assert not late.server.registry.prompts


async def test_a_change_function_runs_on_every_worker_with_its_arguments(
    redis: RedisServer, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    async with worker(redis.url, prefix) as a, worker(redis.url, prefix) as b:
        a.greeter("ann")  # a closure, made by each worker itself
        await until(lambda: "greet_ann" in b.tools())
        made = b.server.registry.tools["greet_ann"]
        assert made.fn() == "hello from ann"
        assert made.definition["description"] == "Greets as ann."
        with pytest.raises(TypeError, match="JSON-able"):
            a.greeter(object())
        async with worker(redis.url, prefix) as late:
            assert late.server.registry.tools["greet_ann"].fn() == "hello from ann"
    assert _only_here(caplog) == []


async def test_a_closure_added_with_a_shared_backend_stays_and_says_so(
    redis: RedisServer, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    # One process, nothing shared: silent.
    alone = Server("alone")
    alone.add_tool(lambda: "x", name="quiet")
    assert _only_here(caplog) == []
    async with worker(redis.url, prefix) as a, worker(redis.url, prefix) as b:
        a.server.add_tool(lambda: "here", name="lonely")
        a.server.add_tool(shout, name="shared")  # logged after it: b makes both in order
        await until(lambda: "shared" in b.tools())
        assert "lonely" not in b.tools() and "lonely" in a.tools()
    (warning,) = _only_here(caplog)
    assert "tool 'lonely' was added on this worker only" in warning
    assert "@server.runtime_change" in warning


async def test_each_worker_tells_its_clients_once_after_making_the_change(
    redis: RedisServer, prefix: str
) -> None:
    async with worker(redis.url, prefix) as a, worker(redis.url, prefix) as b:
        a.server.add_tool(shout, name="shout")
        await until(lambda: "notifications/tools/list_changed" in b.told)
        assert "shout" in b.tools()  # made before it was told
        a.server.add_prompt(ask)  # a marker: told after any duplicate of the first
        await until(lambda: "notifications/prompts/list_changed" in b.told)
        expected = ["notifications/tools/list_changed", "notifications/prompts/list_changed"]
        assert a.told == b.told == expected


async def test_the_log_keeps_one_change_per_key_and_at_most_its_limit(
    redis: RedisServer, prefix: str, db: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    async with worker(redis.url, prefix) as a:
        for _ in range(3):
            a.server.add_tool(shout, name="shout")
            a.server.remove_tool("shout")
        await until(lambda: a.log.applied == 6)  # its own six, back on the bus
        assert await db.hkeys(prefix + "rc:log") == [b"tool:shout"]
        assert b"remove" in await db.hget(prefix + "rc:log", "tool:shout")
        a.log.limit = 2
        for name in ("one", "two", "three"):
            a.server.add_tool(shout, name=name)
        await until(lambda: a.log.applied == 9)
        assert sorted(await db.hkeys(prefix + "rc:log")) == [b"tool:three", b"tool:two"]
    assert any("2 changes: the 1 oldest were dropped" in m for m in _messages(caplog))


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records]


async def test_workers_changing_one_tool_at_once_end_alike(
    redis: RedisServer, prefix: str, db: Redis
) -> None:
    async with worker(redis.url, prefix) as a, worker(redis.url, prefix) as b:
        for _ in range(20):
            # Both at the same moment, neither waiting for the other's: the log orders them.
            for w in (a, b):
                _toggle(w.server)
                await anyio.lowlevel.checkpoint()  # the bus may bring the other's meanwhile
        await until(lambda: not a.log._pending and not b.log._pending)  # all logged
        last = int(await db.get(prefix + "rc:seq") or 0)
        assert last == 80
        await until(lambda: a.log.applied == b.log.applied == last)
        # As the log has it: each key's last change.
        logged = {
            k: orjson.loads(v)["op"] for k, v in (await db.hgetall(prefix + "rc:log")).items()
        }
        tool = logged[b"tool:contested"] == "add"
        prompt = logged[b"prompt:contested"] == "add"
        for w in (a, b):
            assert ("contested" in w.tools(), "contested" in w.server.registry.prompts) == (
                tool,
                prompt,
            )


def _toggle(server: Server) -> None:
    """Remove tool and prompt ``contested``, or add them where absent."""
    try:
        server.remove_tool("contested")
    except KeyError:
        server.add_tool(shout, name="contested")
    try:
        server.remove_prompt("contested")
    except KeyError:
        server.add_prompt(ask, name="contested")


async def test_a_change_missed_on_the_bus_is_read_from_the_log(
    redis: RedisServer, prefix: str
) -> None:
    async with worker(redis.url, prefix) as a, worker(redis.url, prefix) as b:
        a.server.add_tool(shout, name="first")
        await until(lambda: "first" in b.tools())
        # b misses the next change's message (its bus was down, say) ...
        b.backend.on("rc", _dropped)
        a.server.add_tool(shout, name="missed")
        await until(lambda: a.log.applied == 2)
        b.backend.on("rc", b.log._on_change)
        # ... and reads it from the log when the next one shows the gap.
        a.server.add_tool(shout, name="third")
        await until(lambda: "third" in b.tools())
        assert b.tools() == ["static", "first", "missed", "third"]


async def _dropped(message: dict[str, Any]) -> None:
    return None


def test_the_log_of_a_backend_is_one_object() -> None:
    backend = RedisBackend("redis://127.0.0.1:1/0")
    assert backend.registration_log() is backend.registration_log()
    assert isinstance(backend.registration_log(), RedisRegistrationLog)
