"""Requests the layer above knows to be short (``JSONRPCEngine.serves_at_once``) are served
in the reader's own step: no task, no loop iteration of their own. Both backends.

What must hold all the same: the answer, the order of what the reader reads next, a free
slot (never the reader waiting for one), batches in tasks, and a cancellation that arrives
meanwhile ending the handler's answer without ending the reader.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.engine.test_engine import Blocking, Raw

from mcpkit._incoming import IncomingRequest
from mcpkit._jsonrpc import JSONRPCEngine

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _short(method: str, params: dict[str, Any] | None) -> bool:
    return method == "echo"


class _ReaderTask:
    """A notification handler (the reader awaits it): remembers the reader's task."""

    def __init__(self) -> None:
        self.id: int | None = None

    async def __call__(self, method: str, params: dict[str, Any] | None) -> None:
        self.id = anyio.get_current_task().id


def _engine(
    make_pair: Any, *, at_once: bool = True, **kw: Any
) -> tuple[Raw, Blocking, _ReaderTask, JSONRPCEngine]:
    """An engine over a memory pair (its far end driven by hand), serving ``echo`` at once."""
    a, b = make_pair()
    handler = Blocking()
    reader = _ReaderTask()
    engine = JSONRPCEngine(b, on_request=handler, on_notification=reader, **kw)
    if at_once:
        engine.serves_at_once = _short
    return Raw(a), handler, reader, engine


async def test_a_short_request_is_served_by_the_reader_itself(make_pair: Any) -> None:
    raw, handler, reader, engine = _engine(make_pair)
    async with engine:
        await raw.send({"jsonrpc": "2.0", "method": "notifications/hello"})
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": 1}})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"x": 1}}
        await raw.send({"jsonrpc": "2.0", "id": 2, "method": "other", "params": {"y": 2}})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 2, "result": {"y": 2}}
    assert reader.id is not None
    # The short one in the reader's task; the other in a task of its own.
    assert handler.tasks[0] == reader.id
    assert handler.tasks[1] != reader.id


async def test_without_the_predicate_every_request_has_a_task(make_pair: Any) -> None:
    raw, handler, reader, engine = _engine(make_pair, at_once=False)
    async with engine:
        await raw.send({"jsonrpc": "2.0", "method": "notifications/hello"})
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": 1}})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"x": 1}}
    assert handler.tasks == [handler.tasks[0]] and handler.tasks[0] != reader.id


async def test_with_no_slot_free_a_short_request_waits_in_a_task(make_pair: Any) -> None:
    # One slot, held by a long request: the reader must not wait for the slot itself, or
    # the cancellation that frees it could never be read.
    raw, handler, reader, engine = _engine(make_pair, max_concurrency=1)
    async with engine:
        await raw.send({"jsonrpc": "2.0", "method": "notifications/hello"})
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "long"})
        with anyio.fail_after(5):
            await handler.started.wait()
        await raw.send({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"x": 2}})
        await raw.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        )
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 2, "result": {"x": 2}}
    assert handler.stopped.is_set()
    assert handler.tasks[1] != reader.id


async def test_a_batch_of_short_requests_is_served_in_tasks(make_pair: Any) -> None:
    raw, handler, reader, engine = _engine(make_pair, allow_batch=lambda: True)
    async with engine:
        await raw.send({"jsonrpc": "2.0", "method": "notifications/hello"})
        await raw.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": 1}},
                {"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"x": 2}},
            ]
        )
        answers = await raw.recv()
    assert sorted(r["id"] for r in answers) == [1, 2]
    assert reader.id not in handler.tasks


async def test_a_cancellation_meanwhile_drops_the_answer_and_the_reader_goes_on(
    make_pair: Any,
) -> None:
    # A predicate that got it wrong: the "short" handler waits. A cancellation reaching the
    # engine meanwhile (here through serve_inline, as an HTTP POST brings one) must not end
    # the reader that serves it: the answer is dropped, and the engine serves on.
    a, b = make_pair()
    raw = Raw(a)
    release = anyio.Event()
    waiting = anyio.Event()

    async def handler(req: IncomingRequest) -> Any:
        if req.method == "stuck":
            waiting.set()
            with anyio.fail_after(5):
                await release.wait()
        return req.params

    engine = JSONRPCEngine(b, on_request=handler)
    engine.serves_at_once = lambda method, params: True
    async with engine:
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "stuck"})
        with anyio.fail_after(5):
            await waiting.wait()
        await engine.serve_inline(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        )
        release.set()
        await raw.send({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"x": 2}})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 2, "result": {"x": 2}}
        assert engine.running
