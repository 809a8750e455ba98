"""The engine's handler tasks (``mcpkit._backend.HandlerTasks``) seen from the wire: a
cancelled request's task goes on with its bookkeeping, the connection's end cancels the
handlers still running, and a crash in a request's task ends the connection. Both backends."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest

from mcpkit._incoming import IncomingRequest
from mcpkit._jsonrpc import JSONRPCEngine
from mcpkit._transports import MemoryTransport, memory_pair

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def pair() -> Any:
    """memory_pair(), both ends closed after the test (unclosed streams warn)."""
    a, b = memory_pair()
    yield a, b
    a.close()
    b.close()


class Handler:
    """``hang`` blocks until cancelled, ``echo`` answers with the params, ``escape`` raises
    an exception the engine does not turn into an error response."""

    def __init__(self) -> None:
        self.hanging = anyio.Event()
        self.hang_ended = anyio.Event()

    async def __call__(self, req: IncomingRequest) -> Any:
        if req.method == "hang":
            self.hanging.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.hang_ended.set()
        if req.method == "escape":
            raise Escape("out of the handler's error handling")
        return req.params


class Escape(BaseException):
    pass


def _msg(id: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def _cancel(id: int) -> bytes:
    params = {"requestId": id}
    return orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})


async def test_a_cancelled_request_in_a_batch_leaves_the_rest_answered(
    pair: tuple[MemoryTransport, MemoryTransport],
) -> None:
    # The cancellation ends the handler only: the task serving it goes on to count it done,
    # so the batch is still answered, without it.
    a, b = pair
    handler = Handler()
    with anyio.fail_after(5):
        async with JSONRPCEngine(b, on_request=handler, allow_batch=lambda: True):
            await a.send_raw(orjson.dumps([_msg(1, "hang"), _msg(2, "echo", x=2)]))
            await handler.hanging.wait()
            await a.send_raw(_cancel(1))
            answers = orjson.loads(await a.receive())  # type: ignore[arg-type]
            assert handler.hang_ended.is_set()
    assert answers == [{"jsonrpc": "2.0", "id": 2, "result": {"x": 2}}]


async def test_leaving_the_engine_cancels_the_handlers_still_running(
    pair: tuple[MemoryTransport, MemoryTransport],
) -> None:
    a, b = pair
    handler = Handler()
    with anyio.fail_after(5):
        async with JSONRPCEngine(b, on_request=handler):
            await a.send_raw(orjson.dumps(_msg(1, "hang")))
            await handler.hanging.wait()
        assert handler.hang_ended.is_set()  # ended before the engine's exit returned
    with pytest.raises((anyio.EndOfStream, anyio.ClosedResourceError)):
        await a.receive()  # and it sent nothing


async def test_after_the_peer_closes_handlers_get_the_drain_then_are_cancelled(
    pair: tuple[MemoryTransport, MemoryTransport],
) -> None:
    a, b = pair
    handler = Handler()
    release = anyio.Event()

    async def on_request(req: IncomingRequest) -> Any:
        if req.method == "slow":
            await release.wait()
            return "finished in the drain"
        return await handler(req)

    engine = JSONRPCEngine(b, on_request=on_request, drain_timeout=0.2)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(engine.run)
            await a.send_raw(orjson.dumps(_msg(1, "hang")))
            await a.send_raw(orjson.dumps(_msg(2, "slow")))
            await handler.hanging.wait()
            a._send.close()  # the peer half-closes: it still reads
            release.set()
            answer = orjson.loads(await a.receive())  # type: ignore[arg-type]
            assert answer == {"jsonrpc": "2.0", "id": 2, "result": "finished in the drain"}
        # run() returned (the group is done): the hung handler was cancelled at the drain's end.
        assert handler.hang_ended.is_set()


async def test_an_exception_escaping_a_requests_task_ends_the_connection(
    pair: tuple[MemoryTransport, MemoryTransport],
) -> None:
    a, b = pair
    raised: list[BaseException] = []
    with anyio.fail_after(5):
        try:
            async with JSONRPCEngine(b, on_request=Handler()):
                await a.send_raw(orjson.dumps(_msg(1, "escape")))
                await anyio.sleep_forever()  # ended by the connection's failure
        except BaseException as exc:
            raised = _leaves(exc)
    assert [type(e) for e in raised] == [Escape]


def _leaves(exc: BaseException) -> list[BaseException]:
    inner = getattr(exc, "exceptions", None)
    return [exc] if inner is None else [leaf for e in inner for leaf in _leaves(e)]
