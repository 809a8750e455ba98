"""The JSON-RPC engine, over an in-memory pair: matching, concurrency, cancellation,
progress, timeouts and malformed input. Both backends (asyncio and trio)."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest

from mcpkit._exceptions import (
    ConnectionClosed,
    InvalidParams,
    MethodNotFound,
    ProtocolError,
    RequestTimeout,
)
from mcpkit._incoming import IncomingRequest
from mcpkit._jsonrpc import JSONRPCEngine
from mcpkit._transports import MemoryTransport

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Raw:
    """The far end of a memory pair driven by hand: send bytes, read decoded messages."""

    def __init__(self, t: MemoryTransport) -> None:
        self.t = t

    async def send(self, msg: Any) -> None:
        await self.t.send_raw(msg if isinstance(msg, bytes) else orjson.dumps(msg))

    async def recv(self, timeout: float = 5) -> Any:
        with anyio.fail_after(timeout):
            data = await self.t.receive()
        assert isinstance(data, bytes)
        return orjson.loads(data)

    async def nothing_within(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            msg = await self.t.receive()
            raise AssertionError(f"unexpected message {msg!r}")


class Blocking:
    """A request handler answering with the params; ``long`` blocks until it is cancelled.

    ``started``/``stopped`` tell when ``long`` began and ended; ``tasks`` records the task
    that served each request.
    """

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.stopped = anyio.Event()
        self.tasks: list[object] = []

    async def __call__(self, req: IncomingRequest) -> Any:
        self.tasks.append(anyio.get_current_task().id)
        if req.method == "long":
            self.started.set()
            try:
                await anyio.sleep(30)
            finally:
                self.stopped.set()
        return req.params


async def _echo(req: IncomingRequest) -> Any:
    if req.method == "echo":
        return req.params
    if req.method == "fail":
        raise InvalidParams(message="bad value", data={"field": "x"})
    if req.method == "crash":
        raise RuntimeError("secret internals")
    if req.method == "sleep":
        await anyio.sleep((req.params or {}).get("s", 30))
        return {}
    raise MethodNotFound(message=f"Method not found: {req.method}")


@pytest.mark.req(
    "JSONRPC-RESULT-SAME-ID", "JSONRPC-RESULT-HAS-RESULT", "JSONRPC-REQ-ID-STRING-OR-INT"
)
async def test_string_and_integer_ids_are_answered_with_the_same_id(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(a)
    async with JSONRPCEngine(b, on_request=_echo):
        await raw.send({"jsonrpc": "2.0", "id": "abc", "method": "echo", "params": {"x": 1}})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": "abc", "result": {"x": 1}}
        await raw.send({"jsonrpc": "2.0", "id": 0, "method": "echo"})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 0, "result": None}


@pytest.mark.req(
    "JSONRPC-REQ-ID-NOT-NULL",
    "JSONRPC-ERROR-SAME-ID",
    "JSONRPC-ERROR-HAS-CODE-MESSAGE",
    "JSONRPC-ERROR-CODE-INT",
)
async def test_null_float_and_bool_ids_are_invalid_requests(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(a)
    async with JSONRPCEngine(b, on_request=_echo):
        for bad in (None, 1.5, True, [1], {"a": 1}):
            await raw.send({"jsonrpc": "2.0", "id": bad, "method": "echo"})
            reply = await raw.recv()
            assert reply["id"] is None
            assert reply["error"]["code"] == -32600
            assert isinstance(reply["error"]["message"], str) and "id" in reply["error"]["message"]
        # still serving
        await raw.send({"jsonrpc": "2.0", "id": 7, "method": "echo", "params": {}})
        assert (await raw.recv())["result"] == {}


@pytest.mark.req("JSONRPC-FOLLOW-JSONRPC-2", "TRANSPORT-UTF8", "LIFECYCLE-HANDLE-ERROR-CASES")
async def test_malformed_input_is_answered_and_the_peer_keeps_serving(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(a)
    async with JSONRPCEngine(b, on_request=_echo):
        cases: list[tuple[Any, int]] = [
            (b"{not json", -32700),
            (
                b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"\xff\xfe"}}',
                -32700,
            ),  # invalid UTF-8
            (b"42", -32600),
            ({"jsonrpc": "1.0", "id": 1, "method": "echo"}, -32600),
            ({"id": 1, "method": "echo"}, -32600),
            ({"jsonrpc": "2.0", "id": 1, "method": 5}, -32600),
            ({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": [1, 2]}, -32600),
            ({"jsonrpc": "2.0", "id": 1}, -32600),
            (
                [{"jsonrpc": "2.0", "id": 1, "method": "echo"}],
                -32600,
            ),  # batch: not allowed by default
        ]
        for payload, code in cases:
            await raw.send(payload)
            reply = await raw.recv()
            assert reply["jsonrpc"] == "2.0"
            assert reply["error"]["code"] == code, (payload, reply)
            assert reply["error"]["message"]
        await raw.send({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"ok": True}})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 2, "result": {"ok": True}}


@pytest.mark.req("JSONRPC-NOTIF-NO-RESPONSE")
async def test_notifications_get_no_response_even_when_malformed_or_unknown(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(a)
    seen: list[str] = []

    async def on_note(method: str, params: dict[str, Any] | None) -> None:
        seen.append(method)

    async with JSONRPCEngine(b, on_request=_echo, on_notification=on_note):
        await raw.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"a": 1}})
        await raw.send({"jsonrpc": "2.0", "method": "notifications/bad", "params": [1]})
        await raw.send({"jsonrpc": "2.0", "id": 3, "method": "echo", "params": {"after": 1}})
        # the first answer we get is the request's: nothing was sent for the notifications
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 3, "result": {"after": 1}}
        assert seen == ["notifications/whatever"]


async def test_handler_errors_become_error_responses_without_leaking_internals(
    make_pair: Any,
) -> None:
    a, b = make_pair()
    raw = Raw(a)
    async with JSONRPCEngine(b, on_request=_echo):
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "fail"})
        assert await raw.recv() == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32602, "message": "bad value", "data": {"field": "x"}},
        }
        await raw.send({"jsonrpc": "2.0", "id": 2, "method": "crash"})
        reply = await raw.recv()
        assert reply["error"]["code"] == -32603
        assert "secret internals" not in reply["error"]["message"]
        await raw.send({"jsonrpc": "2.0", "id": 3, "method": "nope"})
        assert (await raw.recv())["error"]["code"] == -32601


async def test_duplicate_in_flight_id_is_rejected_not_cross_wired(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(a)
    release = anyio.Event()

    async def handler(req: IncomingRequest) -> Any:
        await release.wait()
        return {"who": req.params}

    async with JSONRPCEngine(b, on_request=handler):
        await raw.send({"jsonrpc": "2.0", "id": 9, "method": "x", "params": {"n": "first"}})
        await raw.send({"jsonrpc": "2.0", "id": 9, "method": "x", "params": {"n": "second"}})
        dup = await raw.recv()
        assert (
            dup["id"] == 9
            and dup["error"]["code"] == -32600
            and "already in use" in dup["error"]["message"]
        )
        release.set()
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 9, "result": {"who": {"n": "first"}}}
        # once answered, the id may be used again
        await raw.send({"jsonrpc": "2.0", "id": 9, "method": "x", "params": {"n": "third"}})
        assert (await raw.recv())["result"] == {"who": {"n": "third"}}


async def test_slow_handler_does_not_block_other_requests(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(a)
    async with JSONRPCEngine(b, on_request=_echo):
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "sleep", "params": {"s": 30}})
        await raw.send({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"fast": 1}})
        assert await raw.recv(timeout=2) == {"jsonrpc": "2.0", "id": 2, "result": {"fast": 1}}


async def test_requests_beyond_the_queue_bound_are_refused_at_once(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(a)
    gate = anyio.Event()

    async def handler(req: IncomingRequest) -> Any:
        await gate.wait()
        return req.id

    async with JSONRPCEngine(b, on_request=handler, max_concurrency=2, max_queued=2):
        for i in range(5):
            await raw.send({"jsonrpc": "2.0", "id": i, "method": "x"})
        refused = await raw.recv()
        assert refused["id"] == 4 and refused["error"]["code"] == -32603
        gate.set()
        got = sorted([(await raw.recv())["result"] for _ in range(4)])
        assert got == [0, 1, 2, 3]


@pytest.mark.req(
    "CANCEL-RECEIVER-STOP-PROCESSING",
    "CANCEL-RECEIVER-NO-RESPONSE",
    "CANCEL-RECEIVER-FREE-RESOURCES",
    "CANCEL-IGNORE-INVALID",
)
async def test_cancelled_notification_cancels_the_handler_and_no_response_is_sent(
    make_pair: Any,
) -> None:
    a, b = make_pair()
    raw = Raw(a)
    handler = Blocking()
    engine = JSONRPCEngine(b, on_request=handler)
    async with engine:
        await raw.send({"jsonrpc": "2.0", "id": "L", "method": "long"})
        with anyio.fail_after(2):
            await handler.started.wait()
        # unknown ids and malformed cancellations are ignored
        await raw.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "zzz"}}
        )
        await raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
        await raw.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": "L", "reason": "user"},
            }
        )
        with anyio.fail_after(2):
            await handler.stopped.wait()
        await raw.send({"jsonrpc": "2.0", "id": "next", "method": "short", "params": {"n": 1}})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": "next", "result": {"n": 1}}
        await raw.nothing_within(0.2)
        assert "L" not in engine._in_flight


async def test_uncancellable_methods_ignore_cancellation(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(a)
    started = anyio.Event()
    proceed = anyio.Event()

    async def handler(req: IncomingRequest) -> Any:
        if req.method == "ping":
            return {}
        started.set()
        await proceed.wait()
        return {"ok": True}

    async with JSONRPCEngine(b, on_request=handler, uncancellable=frozenset({"initialize"})):
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        with anyio.fail_after(2):
            await started.wait()
        await raw.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        )
        await raw.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        # the ping is answered first: the cancellation was processed and ignored
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        proceed.set()
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}


async def _pair(
    make_pair: Any, handler_b: Any = _echo, **kw: Any
) -> tuple[JSONRPCEngine, JSONRPCEngine]:
    a, b = make_pair()
    return JSONRPCEngine(a, on_request=_echo, name="A", **kw), JSONRPCEngine(
        b, on_request=handler_b, name="B"
    )


async def test_request_round_trip_and_errors_between_two_engines(make_pair: Any) -> None:
    ea, eb = await _pair(make_pair)
    async with ea, eb:
        assert await ea.request("echo", {"v": [1, 2]}) == {"v": [1, 2]}
        with pytest.raises(InvalidParams) as info:
            await ea.request("fail")
        assert info.value.code == -32602 and info.value.data == {"field": "x"}
        with pytest.raises(MethodNotFound):
            await eb.request("nope")  # symmetric: B asks A
        results = []

        async def one(i: int) -> None:
            results.append((i, await ea.request("echo", {"i": i})))

        async with anyio.create_task_group() as tg:
            for i in range(200):
                tg.start_soon(one, i)
        assert sorted(results, key=lambda r: r[0]) == [(i, {"i": i}) for i in range(200)]


@pytest.mark.req("JSONRPC-NOTIF-NO-ID")
@pytest.mark.req(
    "LIFECYCLE-TIMEOUTS",
    "LIFECYCLE-TIMEOUT-SEND-CANCEL",
    "LIFECYCLE-TIMEOUT-PER-REQUEST-CONFIG",
    "CANCEL-SENDER-IGNORE-LATE-RESPONSE",
    "CANCEL-REF-SAME-DIRECTION",
    "CANCEL-REF-IN-PROGRESS",
)
async def test_timeout_sends_cancelled_and_ignores_the_late_response(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(b)
    engine = JSONRPCEngine(a, on_request=_echo)
    async with engine:
        with pytest.raises(RequestTimeout):
            with anyio.fail_after(5):
                await engine.request("slow", {}, timeout=0.1)
        req = await raw.recv()
        assert req["method"] == "slow"
        note = await raw.recv()
        assert note == {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": req["id"], "reason": "timed out"},
        }
        # the late response is ignored, and the engine keeps working
        await raw.send({"jsonrpc": "2.0", "id": req["id"], "result": {"late": True}})
        async with anyio.create_task_group() as tg:
            tg.start_soon(engine.request, "echo2", {})
            nxt = await raw.recv()
            assert nxt["method"] == "echo2" and nxt["id"] != req["id"]
            await raw.send({"jsonrpc": "2.0", "id": nxt["id"], "result": {}})


async def test_cancelling_the_caller_sends_cancelled_to_the_peer(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(b)
    engine = JSONRPCEngine(a, on_request=_echo)
    async with engine:
        async with anyio.create_task_group() as tg:
            tg.start_soon(engine.request, "slow", {})
            req = await raw.recv()
            tg.cancel_scope.cancel()
        note = await raw.recv()
        assert note["method"] == "notifications/cancelled"
        assert note["params"]["requestId"] == req["id"]


@pytest.mark.req(
    "PROGRESS-TOKEN-STRING-OR-INT",
    "PROGRESS-TRACK-ACTIVE-TOKENS",
    "PROGRESS-REF-ACTIVE-REQUEST",
    "LIFECYCLE-TIMEOUT-MAXIMUM",
)
async def test_progress_is_routed_and_resets_the_timeout_up_to_a_maximum(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(b)
    engine = JSONRPCEngine(a, on_request=_echo)
    got: list[tuple[float, float | None, str | None]] = []

    async def on_progress(p: float, total: float | None, msg: str | None) -> None:
        got.append((p, total, msg))

    async with engine, anyio.create_task_group() as tg:
        outcome: dict[str, Any] = {}

        async def call() -> None:
            try:
                outcome["r"] = await engine.request(
                    "work",
                    {"x": 1},
                    timeout=0.3,
                    on_progress=on_progress,
                    reset_timeout_on_progress=True,
                    max_timeout=5,
                )
            except Exception as e:
                outcome["e"] = e

        tg.start_soon(call)
        req = await raw.recv()
        token = req["params"]["_meta"]["progressToken"]
        assert isinstance(token, (str, int)) and req["params"]["x"] == 1
        # 5 progress notifications, 0.15 s apart: 0.75 s in all, longer than the 0.3 s timeout
        for i in range(1, 6):
            await anyio.sleep(0.15)
            await raw.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {
                        "progressToken": token,
                        "progress": i,
                        "total": 5,
                        "message": f"step {i}",
                    },
                }
            )
        # a stray token is ignored
        await raw.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "other", "progress": 1},
            }
        )
        await raw.send({"jsonrpc": "2.0", "id": req["id"], "result": {"done": True}})
    assert outcome == {"r": {"done": True}}
    assert got == [(i, 5, f"step {i}") for i in range(1, 6)]

    # the hard maximum wins over progress
    a, b = make_pair()
    raw = Raw(b)
    engine = JSONRPCEngine(a, on_request=_echo)
    async with engine, anyio.create_task_group() as tg:
        start = anyio.current_time()
        failed = anyio.Event()

        async def capped() -> None:
            with pytest.raises(RequestTimeout):
                await engine.request(
                    "work", {}, timeout=0.2, reset_timeout_on_progress=True, max_timeout=0.5
                )
            failed.set()

        tg.start_soon(capped)
        req = await raw.recv()
        token = req["params"]["_meta"]["progressToken"]
        i = 0
        while not failed.is_set():
            i += 1
            await raw.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": i},
                }
            )
            with anyio.move_on_after(0.1):
                await failed.wait()
            assert anyio.current_time() - start < 3
        assert 0.45 < anyio.current_time() - start < 2


async def test_connection_closed_fails_pending_requests_promptly(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(b)
    engine = JSONRPCEngine(a, on_request=_echo)
    async with engine, anyio.create_task_group() as tg:
        err: dict[str, BaseException] = {}

        async def call() -> None:
            try:
                await engine.request("x", {})
            except ConnectionClosed as e:
                err["e"] = e

        tg.start_soon(call)
        await raw.recv()
        await b.aclose()
    assert isinstance(err["e"], ConnectionClosed)
    with pytest.raises(ConnectionClosed):
        await engine.request("x")


async def test_batches_only_when_allowed_and_answered_together(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(a)
    allowed = {"v": False}
    async with JSONRPCEngine(b, on_request=_echo, allow_batch=lambda: allowed["v"]):
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": 1}},
            {"jsonrpc": "2.0", "method": "notifications/x"},
            {"jsonrpc": "2.0", "id": 2, "method": "fail"},
            5,
        ]
        await raw.send(batch)
        rejected = await raw.recv()
        assert rejected["error"]["code"] == -32600 and "batch" in rejected["error"]["message"]
        allowed["v"] = True
        await raw.send(batch)
        answers = await raw.recv()
        assert isinstance(answers, list)
        by_id = {r["id"]: r for r in answers}
        assert by_id[1]["result"] == {"a": 1}
        assert by_id[2]["error"]["code"] == -32602
        assert by_id[None]["error"]["code"] == -32600
        assert len(answers) == 3
        await raw.send([{"jsonrpc": "2.0", "method": "notifications/only"}])
        await raw.nothing_within(0.2)
        await raw.send([])
        assert (await raw.recv())["error"]["code"] == -32600


async def test_error_from_peer_keeps_code_message_and_data(make_pair: Any) -> None:
    a, b = make_pair()
    raw = Raw(b)
    engine = JSONRPCEngine(a, on_request=_echo)
    async with engine, anyio.create_task_group() as tg:
        out: dict[str, Any] = {}

        async def call() -> None:
            try:
                await engine.request("x")
            except ProtocolError as e:
                out["e"] = e

        tg.start_soon(call)
        req = await raw.recv()
        await raw.send(
            {
                "jsonrpc": "2.0",
                "id": req["id"],
                "error": {"code": -32002, "message": "Resource not found", "data": {"uri": "u"}},
            }
        )
    e = out["e"]
    assert (e.code, e.message, e.data) == (-32002, "Resource not found", {"uri": "u"})


async def test_requests_served_inline_answer_and_can_be_cancelled(make_pair: Any) -> None:
    # serve_inline runs the handler in the caller's task (HTTP POSTs answered with JSON do
    # this); the answer still goes out through the transport, and a cancellation from the
    # peer ends the handler without ending the caller.
    a, b = make_pair()
    raw = Raw(a)
    handler = Blocking()
    engine = JSONRPCEngine(b, on_request=handler)
    with pytest.raises(ConnectionClosed):
        await engine.serve_inline({"jsonrpc": "2.0", "id": 0, "method": "echo"})
    async with engine:
        await engine.serve_inline({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": 1}})
        assert handler.tasks == [anyio.get_current_task().id]
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"x": 1}}

        async def cancel_when_started() -> None:
            with anyio.fail_after(2):
                await handler.started.wait()
            await raw.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_when_started)
            with anyio.fail_after(5):
                await engine.serve_inline({"jsonrpc": "2.0", "id": 2, "method": "long"})
        assert handler.stopped.is_set()
        await raw.nothing_within(0.2)  # a cancelled request gets no answer
        assert 2 not in engine._in_flight
        # The caller's task goes on (it was not cancelled itself), and so does the engine.
        await engine.serve_inline({"jsonrpc": "2.0", "id": 3, "method": "echo"})
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 3, "result": None}


async def test_a_handler_meeting_the_shared_state_down_says_to_retry() -> None:
    """Redis not answering is no internal error: the answer says to retry (and over HTTP a
    one-request answer carrying it is 503 with Retry-After)."""
    from mcpkit._app._answers import status_of
    from mcpkit._exceptions import UNAVAILABLE, BackendUnavailable
    from mcpkit._incoming import failure_response

    down = BackendUnavailable("cannot reach 127.0.0.1:6379/0: connection refused")
    answer = failure_response(IncomingRequest(None, 4, "tools/call", {}), down, "t")
    assert answer == {"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": UNAVAILABLE}}
    assert "6379" not in str(answer)  # where the shared state lives is not the client's to know
    assert status_of(answer) == 503
    other = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "Internal error"}}
    assert status_of(other) == 200
