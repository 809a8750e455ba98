"""Property-based fuzzing: whatever a peer sends, the other side neither crashes nor loses or
doubles an answer.

The budget is small and the seed fixed in CI (``derandomize``), so a run is repeatable and
quick; ``MCPKIT_FUZZ=long scripts/test tests/hostile`` explores far more (a random seed, many
more examples). A failure prints the smallest input that shows it.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import BACKEND

from mcpkit import Context, Server
from mcpkit._session import ClientSession
from mcpkit._transports import memory_pair
from mcpkit._transports._memory import MemoryTransport
from mcpkit._transports._stream import LineTransport

LONG = os.environ.get("MCPKIT_FUZZ") == "long"
FUZZ = settings(
    max_examples=2000 if LONG else 60,
    derandomize=not LONG,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
WAIT = 20.0

# ------------------------------------------------------------------------------ values

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
METHODS = st.sampled_from(
    [
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "tasks/list",
        "tasks/get",
        "tasks/cancel",
        "initialize",
        "no/such/method",
        "notifications/cancelled",
        "notifications/progress",
    ]
)
PARAMS = st.none() | st.dictionaries(st.text(max_size=10), JSON, max_size=4) | JSON
TOOL_PARAMS = st.fixed_dictionaries(
    {"name": st.sampled_from(["add", "echo", "nope", ""]) | st.text(max_size=5)},
    optional={"arguments": st.dictionaries(st.sampled_from(["a", "b", "text", "x"]), JSON)},
)


@st.composite
def messages(draw: st.DrawFn) -> tuple[bytes, Any]:
    """One incoming item: raw bytes, and the id we may expect an answer to (or None)."""
    kind = draw(st.sampled_from(["request", "request", "tool", "notification", "junk", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=40)), None
    if kind == "junk":
        return orjson.dumps(draw(JSON)), None
    method = "tools/call" if kind == "tool" else draw(METHODS)
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    params = draw(TOOL_PARAMS if kind == "tool" else PARAMS)
    if params is not None:
        msg["params"] = params
    if kind == "notification":
        return orjson.dumps(msg), None
    return orjson.dumps(msg), msg


def fuzz_server() -> Server:
    server = Server("fuzz")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @server.tool()
    async def echo(text: str, ctx: Context) -> str:
        """Echo, with a log line."""
        await ctx.info(text)
        return text

    @server.resource("fuzz://{name}")
    def named(name: str) -> str:
        """A templated resource."""
        return name

    @server.prompt()
    def greet(who: str) -> str:
        """A prompt."""
        return f"hello {who}"

    return server


# ------------------------------------------------------------------------------ helpers


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario, backend=BACKEND)


async def collect_answers(end: MemoryTransport, ids: set[Any], into: dict[Any, int]) -> None:
    """Read answers until every id in ``ids`` was answered (bounded by the caller)."""
    while not ids <= into.keys():
        item = await end.receive()
        assert isinstance(item, bytes)
        for msg in _messages(orjson.loads(item)):
            if isinstance(msg, dict) and "method" not in msg and "id" in msg:
                into[msg["id"]] = into.get(msg["id"], 0) + 1


def _messages(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


# ------------------------------------------------------------------------------ properties


@FUZZ
@pytest.mark.loop_dependent  # the scenario runs on the suite's backend
@given(st.lists(messages(), max_size=25), st.booleans())
def test_server_answers_every_request_exactly_once(
    items: list[tuple[bytes, Any]], initialized: bool
) -> None:
    """Before or after the handshake, any sequence: one answer per request id, and alive."""

    async def scenario() -> None:
        client_end, server_end = memory_pair()
        server = fuzz_server()
        answers: dict[Any, int] = {}
        expected: set[Any] = set()
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, server_end)
            if initialized:
                for m in HANDSHAKE:
                    await client_end.send(m)
                expected.add("init")
            for n, (raw, request) in enumerate(items):
                if request is not None:
                    request["id"] = n  # unique, so each answer is attributable
                    raw = orjson.dumps(request)
                    expected.add(n)
                await client_end.send_raw(raw + b"\n")
            await client_end.send({"jsonrpc": "2.0", "id": "alive", "method": "ping"})
            expected.add("alive")
            with anyio.fail_after(WAIT):
                await collect_answers(client_end, expected, answers)
                # A second ping, after every answer: anything doubled would be here by now.
                await client_end.send({"jsonrpc": "2.0", "id": "again", "method": "ping"})
                expected.add("again")
                await collect_answers(client_end, expected, answers)
            client_end.close()
            server_end.close()
            tg.cancel_scope.cancel()
        doubled = {k: v for k, v in answers.items() if v > 1 and k is not None}
        assert not doubled, f"answered more than once: {doubled}"
        strangers = set(answers) - expected - {None}
        assert not strangers, f"answers to ids never sent: {strangers}"

    run(scenario)


@FUZZ
@pytest.mark.loop_dependent  # the scenario runs on the suite's backend
@given(st.lists(st.binary(max_size=30) | JSON.map(orjson.dumps), max_size=12))
def test_client_survives_whatever_the_server_sends(junk: list[bytes]) -> None:
    """A client whose server answers its handshake and then sends anything at all."""

    async def scenario() -> None:
        client_end, server_end = memory_pair()
        session = ClientSession(client_end, client_info={"name": "fuzz", "version": "1"})
        async with anyio.create_task_group() as tg, session:

            async def play_server() -> None:
                init = orjson.loads(await _receive_bytes(server_end))
                await server_end.send(
                    {
                        "jsonrpc": "2.0",
                        "id": init["id"],
                        "result": {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "hostile", "version": "1"},
                        },
                    }
                )
                await _receive_bytes(server_end)  # notifications/initialized
                for raw in junk:
                    await server_end.send_raw(raw + b"\n")
                ping = orjson.loads(await _receive_bytes(server_end))
                await server_end.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})

            tg.start_soon(play_server)
            with anyio.fail_after(WAIT):
                await session.initialize()
                assert await session.send_request("ping") == {}
            server_end.close()
            tg.cancel_scope.cancel()

    run(scenario)


async def _receive_bytes(end: MemoryTransport) -> bytes:
    item = await end.receive()
    assert isinstance(item, bytes)
    return item


class _Chunks:
    """A byte reader that hands out the given chunks, then the end of the stream."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(reversed(chunks))

    async def read(self) -> bytes:
        return self._chunks.pop() if self._chunks else b""


class _Discard:
    async def write(self, data: bytes) -> None:
        pass

    async def aclose(self) -> None:
        pass


@FUZZ
@pytest.mark.loop_dependent  # the scenario runs on the suite's backend
@given(st.lists(JSON.map(orjson.dumps), max_size=10), st.data())
def test_stdio_framing_is_independent_of_how_bytes_are_split(
    lines: list[bytes], data: st.DataObject
) -> None:
    """Newline-delimited JSON cut at arbitrary points reads back as the same messages."""
    wire = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.sets(st.integers(0, max(len(wire) - 1, 0)), max_size=8)))
    chunks = [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)], strict=True) if b > a]

    async def scenario() -> None:
        transport = LineTransport(_Chunks(chunks), _Discard(), max_message_size=1 << 20)
        got: list[bytes] = []
        while True:
            try:
                item = await transport.receive()
            except anyio.EndOfStream:
                break
            assert isinstance(item, bytes)
            got.append(item)
        assert [orjson.loads(g) for g in got] == [orjson.loads(x) for x in lines]

    run(scenario)


SSE_FIELDS = st.lists(
    st.tuples(
        st.sampled_from(["data", "id", "event", "retry", ": comment", "", "data"]),
        st.text(alphabet=st.characters(exclude_characters="\r\n"), max_size=12),
    ),
    max_size=12,
)


@FUZZ
@given(SSE_FIELDS, st.sampled_from(["\n", "\r\n", "\r"]), st.data())
def test_sse_parsing_is_independent_of_how_bytes_are_split(
    fields: list[tuple[str, str]], eol: str, data: st.DataObject
) -> None:
    """An event stream cut at arbitrary points (even inside a CRLF) parses to the same events."""
    from mcpkit._http._sse import SSEParser

    wire = "".join(f"{name}: {value}{eol}" if name else eol for name, value in fields)
    wire_b = (wire + eol + eol).encode()
    whole = [(e.event, e.data, e.id, e.retry) for e in SSEParser().feed(wire_b)]
    cuts = sorted(data.draw(st.sets(st.integers(0, max(len(wire_b) - 1, 0)), max_size=10)))
    parser = SSEParser()
    split = [
        (e.event, e.data, e.id, e.retry)
        for a, b in zip([0, *cuts], [*cuts, len(wire_b)], strict=True)
        for e in parser.feed(wire_b[a:b])
    ]
    assert split == whole


HTTP_HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "content-type": st.sampled_from(
            ["application/json", "text/plain", "", "application/json; charset=latin-1"]
        ),
        "accept": st.sampled_from(
            ["application/json, text/event-stream", "application/json", "*/*", ""]
        ),
        "mcp-session-id": st.text(max_size=12),
        "mcp-protocol-version": st.sampled_from(["2025-11-25", "2024-11-05", "1999-01-01", ""]),
    },
)


@FUZZ
@pytest.mark.loop_dependent  # the scenario runs on the suite's backend
@given(
    st.sampled_from(["POST", "GET", "DELETE", "PUT"]),
    HTTP_HEADERS,
    st.binary(max_size=60) | messages().map(lambda m: m[0]) | JSON.map(orjson.dumps),
)
def test_http_app_answers_any_request_without_failing(
    method: str, headers: dict[str, str], body: bytes
) -> None:
    """Any method, headers and body: a 2xx or 4xx answer, never a 500, and still serving."""
    from tests.http._http_helpers import HEADERS, INIT_PARAMS, asgi_call

    headers = {k: v for k, v in headers.items() if v.isascii() and v.isprintable()}
    init = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})

    async def scenario() -> None:
        app = fuzz_server().http_app(json_response=True)
        async with app:
            with anyio.fail_after(WAIT):
                if method == "GET" and "mcp-session-id" not in headers:
                    # A valid GET opens a stream that never ends on its own: not this test's.
                    headers["mcp-session-id"] = "unknown"
                status, _, _ = await asgi_call(app, method, headers, body)
                assert status < 500, (status, method, headers, body)
                status, answer_headers, _ = await asgi_call(app, "POST", HEADERS, init)
                assert status == 200 and "mcp-session-id" in answer_headers

    run(scenario)
