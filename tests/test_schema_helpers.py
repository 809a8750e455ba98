"""The schema helpers (tests/_schema.py) accept good messages and reject bad ones."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

try:
    from tests import _schema
    from tests._schema import WireRecorder, message_errors, validate_message
except ImportError:  # tests/ is not a package: pytest put tests/ itself on sys.path
    import _schema  # type: ignore[no-redef]
    from _schema import WireRecorder, message_errors, validate_message  # type: ignore[no-redef]

REVS = _schema.REVISIONS


def initialize(rev: str, id: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": rev,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }


def initialize_result(rev: str, id: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "result": {
            "protocolVersion": rev,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "0"},
        },
    }


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TEXT = {"type": "text", "text": "hi"}


def call_tool(id: Any = 2) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"x": 1}},
    }


def result(id: Any, payload: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": payload}


def errors_of(msg: Any, rev: str, **kw: Any) -> str:
    return "\n".join(message_errors(msg, rev, **kw))


# --------------------------------------------------------------------------- schemas


def test_validator_is_cached_and_picks_the_dialect() -> None:
    assert _schema.validator("2025-11-25", "Result") is _schema.validator("2025-11-25", "Result")
    assert "2020-12" in type(_schema.validator("2025-11-25", "Result")).__name__ + str(
        _schema.validator("2025-11-25", "Result").META_SCHEMA.get("$id")
    )
    assert "Draft7" in type(_schema.validator("2024-11-05", "Result")).__name__
    with pytest.raises(ValueError, match="no definition"):
        _schema.validator("2024-11-05", "ElicitResult")
    with pytest.raises(ValueError, match="no schema"):
        _schema.validator("1999-01-01", "Result")


def test_spec_dir_is_the_vendored_spec() -> None:
    # In the repository, so a clone anywhere runs the suite (MCPKIT_SPEC_DIR may override).
    assert (_schema.SPEC_DIR / "schema" / "2025-11-25.json").is_file()
    assert (_schema.SPEC_DIR / "2025-11-25" / "basic" / "lifecycle.mdx").is_file()
    if "MCPKIT_SPEC_DIR" not in os.environ:
        assert Path(__file__).resolve().parent / "spec" == _schema.SPEC_DIR


@pytest.mark.parametrize("rev", REVS)
def test_method_map_and_result_types_exist_in_every_revision(rev: str) -> None:
    methods = _schema.method_map(rev)
    assert methods["tools/call"] == "CallToolRequest"
    assert methods["notifications/initialized"] == "InitializedNotification"
    requests = _schema.sender_methods(rev, "client", "request") | _schema.sender_methods(
        rev, "server", "request"
    )
    assert "initialize" in requests
    assert "ping" in requests
    for method in requests:
        # every request this revision defines has an explicit, existing result type
        assert method in _schema.RESULT_TYPES, method
        assert _schema.has_definition(rev, _schema.RESULT_TYPES[method]), (rev, method)
    for method, name in _schema.RESULT_TYPES.items():
        if method in methods:
            assert _schema.result_type(rev, method) == name
    assert _schema.result_type(rev, "ping") == "EmptyResult"
    assert _schema.result_type(rev, "x/custom") == "Result"


# --------------------------------------------------------------------------- good messages


@pytest.mark.parametrize("rev", REVS)
def test_accepts_a_normal_exchange(rev: str) -> None:
    assert validate_message(initialize(rev), rev, sender="client") == "request"
    validate_message(initialize_result(rev), rev, sender="server", request_method="initialize")
    assert validate_message(INITIALIZED, rev, sender="client") == "notification"
    validate_message(call_tool("abc"), rev, sender="client")
    validate_message(
        result("abc", {"content": [TEXT]}), rev, sender="server", request_method="tools/call"
    )
    validate_message(result(3, {}), rev, sender="server", request_method="ping")
    validate_message(result(3, {"_meta": {"a": 1}}), rev, sender="client", request_method="ping")
    validate_message({"jsonrpc": "2.0", "id": 7, "method": "ping"}, rev, sender="server")
    err = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}}
    assert validate_message(err, rev, sender="server", request_method="tools/call") == "error"
    parse_error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse"}}
    validate_message(parse_error, rev, sender="server")
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "t", "progress": 0.5, "total": 1},
    }
    validate_message(progress, rev, sender="server")
    validate_message(progress, rev, sender="client")
    cancelled = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "x"},
    }
    validate_message(cancelled, rev, sender="client")
    sampling = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": TEXT}],
            "maxTokens": 10,
        },
    }
    validate_message(sampling, rev, sender="server")
    validate_message(
        result(9, {"role": "assistant", "content": TEXT, "model": "m"}),
        rev,
        sender="client",
        request=sampling,
    )


def test_batches_are_valid_only_in_2025_03_26() -> None:
    batch = [call_tool(1), INITIALIZED]
    assert validate_message(batch, "2025-03-26", sender="client") == "batch"
    validate_message([result(1, {"content": [TEXT]}), result(2, {})], "2025-03-26", sender="server")
    for rev in ("2024-11-05", "2025-06-18", "2025-11-25"):
        with pytest.raises(AssertionError, match="batches are not allowed"):
            validate_message(batch, rev, sender="client")
    assert "must not be empty" in errors_of([], "2025-03-26", sender="client")
    assert "not both" in errors_of([call_tool(1), result(1, {})], "2025-03-26", sender="client")
    assert "[1]" in errors_of([call_tool(1), call_tool(None)], "2025-03-26", sender="client")


def test_task_augmented_call_is_answered_with_create_task_result() -> None:
    rev = "2025-11-25"
    request = {**call_tool(5), "params": {"name": "slow", "task": {"ttl": 1000}}}
    validate_message(request, rev, sender="client")
    now = "2025-11-25T00:00:00Z"
    task = {
        "taskId": "t1",
        "status": "working",
        "createdAt": now,
        "lastUpdatedAt": now,
        "ttl": 1000,
    }
    validate_message(result(5, {"task": task}), rev, sender="server", request=request)
    with pytest.raises(AssertionError, match="CreateTaskResult"):
        validate_message(result(5, {"content": [TEXT]}), rev, sender="server", request=request)


# --------------------------------------------------------------------------- bad messages


@pytest.mark.parametrize("rev", REVS)
def test_rejects_bad_request_ids(rev: str) -> None:
    for bad_id, needle in [(None, "must have no `id`"), (True, "True"), (1.5, "1.5"), ([1], "[1]")]:
        msg = {"jsonrpc": "2.0", "id": bad_id, "method": "ping"}
        with pytest.raises(AssertionError, match="request id must be a string or integer") as exc:
            validate_message(msg, rev, sender="client")
        assert needle in str(exc.value)


@pytest.mark.parametrize("rev", REVS)
def test_rejects_broken_envelopes(rev: str) -> None:
    both = {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}
    assert "not both" in errors_of(both, rev, sender="server")
    assert "not a JSON-RPC message" in errors_of({"jsonrpc": "2.0", "id": 1}, rev, sender="server")
    assert "not a JSON-RPC message" in errors_of("ping", rev, sender="server")
    assert '"2.0"' in errors_of({**INITIALIZED, "jsonrpc": "1.0"}, rev, sender="client")
    no_id = {"jsonrpc": "2.0", "result": {}}
    assert "must carry the id" in errors_of(no_id, rev, sender="server")
    string_code = {"jsonrpc": "2.0", "id": 1, "error": {"code": "-1", "message": "x"}}
    assert "$.error.code" in errors_of(string_code, rev, sender="server")
    no_message = {"jsonrpc": "2.0", "id": 1, "error": {"code": -1}}
    assert "'message' is a required property" in errors_of(no_message, rev, sender="server")
    mixed = {**call_tool(1), "result": {}}
    assert "must not carry `result`" in errors_of(mixed, rev, sender="client")


@pytest.mark.parametrize("rev", REVS)
def test_rejects_methods_the_sender_may_not_send(rev: str) -> None:
    with pytest.raises(AssertionError, match="a server may not send the request 'tools/call'"):
        validate_message(call_tool(), rev, sender="server")
    roots = {"jsonrpc": "2.0", "id": 1, "method": "roots/list"}
    with pytest.raises(AssertionError, match="a client may not send the request 'roots/list'"):
        validate_message(roots, rev, sender="client")
    log = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "x"},
    }
    validate_message(log, rev, sender="server")
    with pytest.raises(AssertionError, match="a client may not send the notification"):
        validate_message(log, rev, sender="client")
    assert "sent as a notification" in errors_of(
        {"jsonrpc": "2.0", "method": "ping"}, rev, sender="client"
    )
    assert "sent as a request" in errors_of({**INITIALIZED, "id": 4}, rev, sender="client")
    custom = {"jsonrpc": "2.0", "id": 1, "method": "x/custom"}
    assert "unknown method 'x/custom'" in errors_of(custom, rev, sender="client")
    assert errors_of(custom, rev, sender="client", allow_unknown_methods=True) == ""
    # a result for a request the other side cannot send
    assert "not a request a server may send" in errors_of(
        result(1, {"content": [TEXT]}), rev, sender="client", request_method="tools/call"
    )


def test_elicitation_exists_only_from_2025_06_18() -> None:
    elicit = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}},
    }
    validate_message(elicit, "2025-06-18", sender="server")
    assert "unknown method 'elicitation/create'" in errors_of(elicit, "2025-03-26", sender="server")


@pytest.mark.parametrize("rev", REVS)
def test_rejects_bad_results(rev: str) -> None:
    with pytest.raises(AssertionError) as exc:
        validate_message(result(1, {}), rev, sender="server", request_method="tools/call")
    assert "CallToolResult" in str(exc.value)
    assert "'content' is a required property" in str(exc.value)
    assert "must be empty" in errors_of(
        result(1, {"pong": True}), rev, sender="client", request_method="ping"
    )
    bad_init = initialize_result(rev)
    del bad_init["result"]["serverInfo"]
    assert "'serverInfo' is a required property" in errors_of(
        bad_init, rev, sender="server", request_method="initialize"
    )
    not_object = {"jsonrpc": "2.0", "id": 1, "result": []}
    assert "JSONRPC" in errors_of(not_object, rev, sender="server")


@pytest.mark.parametrize("rev", REVS)
def test_rejects_bad_params_and_lists_every_error(rev: str) -> None:
    msg = initialize(rev)
    del msg["params"]["capabilities"]
    del msg["params"]["clientInfo"]
    msg["id"] = None
    with pytest.raises(AssertionError) as exc:
        validate_message(msg, rev, sender="client")
    text = str(exc.value)
    assert "'capabilities' is a required property" in text
    assert "'clientInfo' is a required property" in text
    assert "request id must be a string or integer" in text
    assert f"invalid client message for {rev}" in text


def test_format_checking_is_on() -> None:
    # `uri` formats are enforced (jsonschema[format-nongpl])
    listing = result(1, {"resources": [{"uri": "not a uri", "name": "r"}]})
    assert "is not a 'uri'" in errors_of(
        listing, "2025-06-18", sender="server", request_method="resources/list"
    )


# --------------------------------------------------------------------------- the recorder


class FakeEnd:
    """One end of an in-test transport pair (bytes over anyio memory streams)."""

    def __init__(self, send: Any, receive: Any) -> None:
        self._send, self._receive = send, receive

    async def send(self, message: Any, /, *, related_request_id: Any = None) -> None:
        await self._send.send(orjson.dumps(message))

    async def send_raw(self, data: bytes) -> None:
        await self._send.send(data)

    async def receive(self) -> Any:
        return await self._receive.receive()

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()


def fake_pair() -> tuple[FakeEnd, FakeEnd]:
    a_send, b_receive = anyio.create_memory_object_stream[bytes](100)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](100)
    return FakeEnd(a_send, a_receive), FakeEnd(b_send, b_receive)


async def fake_server(end: Any, answers: dict[str, Any]) -> None:
    """Answer each request with ``answers[method]`` (a result payload), until EOF."""
    try:
        while True:
            try:
                msg = orjson.loads(await end.receive())
            except orjson.JSONDecodeError:
                continue
            if "id" in msg and "method" in msg:
                await end.send(result(msg["id"], answers[msg["method"]]))
    except anyio.EndOfStream:
        pass
    finally:
        await end.aclose()


def exchange(
    answers: dict[str, Any],
    client_messages: list[Any],
    *,
    wrap: str = "client",
    version: str = "2025-06-18",
) -> WireRecorder:
    """Run a scripted client against ``fake_server`` with a recorder on one end."""

    async def main() -> WireRecorder:
        client_end, server_end = fake_pair()
        recorder = WireRecorder(client_end if wrap == "client" else server_end, side=wrap)
        client = recorder if wrap == "client" else client_end
        server = recorder if wrap == "server" else server_end
        async with anyio.create_task_group() as tg:
            tg.start_soon(fake_server, server, answers)
            with anyio.fail_after(5):  # the fake server closes its end when the client does
                await client.send(initialize(version))
                await client.receive()
                for msg in client_messages:
                    if isinstance(msg, bytes):
                        await client.send_raw(msg)
                        continue
                    await client.send(msg)
                    if isinstance(msg, dict) and "id" in msg and "method" in msg:
                        await client.receive()
            await client.aclose()
        return recorder

    return anyio.run(main)


GOOD = {
    "initialize": initialize_result("2025-06-18")["result"],
    "tools/call": {"content": [TEXT]},
    "ping": {},
}


@pytest.mark.parametrize("wrap", ["client", "server"])
def test_recorder_passes_a_good_exchange_and_learns_the_revision(wrap: str) -> None:
    recorder = exchange(
        GOOD, [INITIALIZED, call_tool(2), {"jsonrpc": "2.0", "id": 3, "method": "ping"}], wrap=wrap
    )
    assert recorder.check() == "2025-06-18"
    assert recorder.revision == "2025-06-18"
    assert [r.direction for r in recorder.messages] == (
        ["sent", "received"] * 1 + ["sent"] + ["sent", "received"] * 2
        if wrap == "client"
        else ["received", "sent", "received"] + ["received", "sent"] * 2
    )
    side_msgs = recorder.sent if wrap == "client" else recorder.received
    assert side_msgs[0]["method"] == "initialize"
    # bytes arrive from the wire; sends are dicts
    assert all((r.raw is not None) == (r.direction == "received") for r in recorder.messages)


@pytest.mark.parametrize("wrap", ["client", "server"])
def test_recorder_catches_a_bad_response(wrap: str) -> None:
    recorder = exchange(
        {**GOOD, "tools/call": {"isError": False}}, [INITIALIZED, call_tool(2)], wrap=wrap
    )
    with pytest.raises(AssertionError) as exc:
        recorder.check()
    text = str(exc.value)
    assert "1 wire violation(s)" in text
    assert "(server -> client)" in text
    assert "result of 'tools/call': CallToolResult (2025-06-18)" in text
    assert "'content' is a required property" in text


def test_recorder_validates_against_the_negotiated_revision() -> None:
    # A `resource_link` content block exists from 2025-06-18 on: the same tools/call result
    # passes or fails depending on the revision the initialize exchange settled on.
    link = {"type": "resource_link", "uri": "file:///x", "name": "x"}
    answers = {**GOOD, "tools/call": {"content": [link]}}
    assert exchange(answers, [INITIALIZED, call_tool(2)]).check() == "2025-06-18"
    old = {**answers, "initialize": initialize_result("2025-03-26")["result"]}
    recorder = exchange(old, [INITIALIZED, call_tool(2)], version="2025-03-26")
    with pytest.raises(AssertionError, match=r"CallToolResult \(2025-03-26\)"):
        recorder.check()
    assert recorder.revision == "2025-03-26"


def test_recorder_reports_id_problems_and_undecodable_bytes() -> None:
    answers = {**GOOD, "initialize": initialize_result("2025-11-25")["result"]}
    recorder = exchange(
        answers,
        [call_tool(2), call_tool(2)],  # id reused
        version="2025-11-25",
    )

    async def inject() -> None:
        # a stray response, and garbage, arriving at the client
        recorder._record("received", orjson.dumps(result(99, {})))
        recorder._record("received", b"{not json")

    anyio.run(inject)
    with pytest.raises(AssertionError) as exc:
        recorder.check()
    text = str(exc.value)
    assert "request id 2 was already used by the client" in text
    assert "response to unknown request id 99" in text
    assert "undecodable bytes" in text
    assert "3 wire violation(s)" in text
    # a test that produced the garbage on purpose can say so
    problems = recorder.violations(ignore=lambda r: r.raw == b"{not json")
    assert not any("undecodable" in p for p in problems)


def test_recorder_send_raw_is_expected_invalid() -> None:
    recorder = exchange(GOOD, [b"\xff\xfe not utf-8\n", INITIALIZED])
    assert recorder.messages[2].expected_invalid
    assert recorder.messages[2].decode_error
    recorder.check()


def test_recorder_needs_to_know_its_side() -> None:
    recorder = WireRecorder(object())
    with pytest.raises(ValueError, match="which end"):
        recorder.check()
    assert recorder.check(sender_of_sent="server") == _schema.LATEST
    with pytest.raises(ValueError, match="wraps the client end"):
        WireRecorder(object(), side="client").check(sender_of_sent="server")


def test_recorder_flags_unserializable_sends() -> None:
    recorder = WireRecorder(object(), side="client")
    recorder._record("sent", {"jsonrpc": "2.0", "method": "x", "params": {1: object()}})
    recorder._record("received", ("not", "a", "message"))
    problems = "\n".join(recorder.violations())
    assert "not JSON-serializable" in problems
    assert "not a JSON message" in problems
