"""The lists of a stateless (2026-07-28) :class:`mcpkit.Client`: cached for the ``ttlMs`` the
server gives, and over Streamable HTTP the tools' ``x-mcp-header`` marks learned from them
(tools with invalid marks left out, the others' arguments mirrored into ``Mcp-Param-*``).

Real servers throughout: an :class:`mcpkit.Server` in memory and over its HTTP app (in
process, through :class:`~mcpkit.lowlevel.ASGIClient`), the app wrapped to record the
headers of every POST it receives. Time is the client's injectable clock, moved by hand.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import pytest
from pydantic import Field

from mcpkit import Client, Server, StatelessSettings, http
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

REV = "2026-07-28"
URL = "http://127.0.0.1/mcp"
#: Bound on every wait of these tests.
TIMEOUT = 20.0
TTL_MS = 60_000


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Recorder:
    """An ASGI app around another: the headers and the body of each POST it received."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.posts: list[dict[str, str]] = []
        self.bodies: list[Any] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        self.posts.append(
            {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        )
        body = bytearray()

        async def recording_receive() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body"):
                    self.bodies.append(json.loads(body))
            return message

        await self.app(scope, recording_receive, send)

    def body_methods(self) -> list[str]:
        """The JSON-RPC method of each POST's body (None for answers)."""
        return [b.get("method") for b in self.bodies if isinstance(b, dict)]

    def methods(self) -> list[str]:
        """The ``Mcp-Method`` of each POST."""
        return [h.get("mcp-method", "") for h in self.posts]

    def calls(self, tool: str) -> list[dict[str, str]]:
        """The headers of each ``tools/call`` of ``tool``."""
        return [
            h
            for h in self.posts
            if h.get("mcp-method") == "tools/call" and h.get("mcp-name") == tool
        ]


def _server(ttl_ms: int = 0) -> Server:
    server = Server("lists", stateless=StatelessSettings(cache_ttl_ms=ttl_ms))

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    def route(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        shard: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Shard"})] = 0,
        dry: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Dry-Run"})] = False,
        note: str = "",
    ) -> str:
        """Arguments mirrored into Mcp-Param-* headers."""
        return f"{region}/{shard}/{dry}/{note}"

    @server.prompt()
    def hello() -> str:
        """Say hello."""
        return "hello"

    return server


def _add_tool(server: Server, name: str) -> None:
    server.add_tool(lambda: name, name=name, description=f"Tool {name}.")


def _break_marks(server: Server) -> None:
    """Give the server a tool whose ``x-mcp-header`` marks break the rules, as a server that
    does not check its own marks would list it (mcpkit's refuses them at registration, so
    the mark is added to the listed definition afterwards)."""
    server.add_tool(
        lambda data=None: "bad",
        name="bad_marks",
        description="Marks an object property.",
        input_schema={"type": "object", "properties": {"data": {"type": "object"}}},
    )
    definition = server.registry.tools["bad_marks"].definition
    definition["inputSchema"]["properties"]["data"]["x-mcp-header"] = "Data"


@asynccontextmanager
async def _http_client(server: Server, **kw: Any) -> AsyncIterator[tuple[Client, Recorder]]:
    recorder = Recorder(server.http_app())
    async with (
        ASGIClient(recorder) as asgi,
        Client(http(URL, http_client=asgi), protocol_version=REV, **kw) as client,
    ):
        yield client, recorder


@asynccontextmanager
async def _memory_client(server: Server, **kw: Any) -> AsyncIterator[tuple[Client, None]]:
    async with Client(server, protocol_version=REV, **kw) as client:
        yield client, None


Connect = Callable[..., Any]
TRANSPORTS = [pytest.param(_http_client, id="http"), pytest.param(_memory_client, id="memory")]


def _names(tools: list[Any]) -> list[str]:
    return sorted(t.name for t in tools)


def _lists_sent(recorder: Recorder | None) -> int | None:
    if recorder is None:
        return None
    # Every stateless POST names its method in Mcp-Method, as its body does.
    assert recorder.methods() == recorder.body_methods()
    return recorder.methods().count("tools/list")


# ---------------------------------------------------------------- caching


@pytest.mark.parametrize("connect", TRANSPORTS)
async def test_a_list_is_cached_for_the_ttl_the_server_gives(connect: Connect) -> None:
    server = _server(ttl_ms=TTL_MS)
    clock = Clock()
    with anyio.fail_after(TIMEOUT):
        async with connect(server) as (client, recorder):
            assert client.session.stateless
            client._lists.clock = clock
            assert _names(await client.list_tools()) == ["echo", "route"]
            # The server changes its list, but says nothing (nobody listens): the cached
            # list is served until its ttlMs runs out, without asking.
            _add_tool(server, "late")
            clock.advance(TTL_MS / 1000 - 1)
            assert _names(await client.list_tools()) == ["echo", "route"]
            assert _lists_sent(recorder) in (1, None)
            clock.advance(1)
            assert _names(await client.list_tools()) == ["echo", "late", "route"]
            assert _lists_sent(recorder) in (2, None)
            # And that answer is cached again, for its own ttlMs.
            _add_tool(server, "later")
            assert _names(await client.list_tools()) == ["echo", "late", "route"]


@pytest.mark.parametrize("connect", TRANSPORTS)
async def test_a_list_without_a_ttl_is_not_cached(connect: Connect) -> None:
    server = _server(ttl_ms=0)
    with anyio.fail_after(TIMEOUT):
        async with connect(server) as (client, recorder):
            client._lists.clock = Clock()  # frozen: only the ttl decides
            assert _names(await client.list_tools()) == ["echo", "route"]
            _add_tool(server, "late")
            assert _names(await client.list_tools()) == ["echo", "late", "route"]
            assert _names(await client.list_prompts()) == ["hello"]
            assert _names(await client.list_prompts()) == ["hello"]
            assert _lists_sent(recorder) in (2, None)
            if recorder is not None:
                assert recorder.methods().count("prompts/list") == 2


@pytest.mark.parametrize("connect", TRANSPORTS)
async def test_use_cache_false_asks_even_while_the_list_is_fresh(connect: Connect) -> None:
    server = _server(ttl_ms=TTL_MS)
    with anyio.fail_after(TIMEOUT):
        async with connect(server) as (client, recorder):
            client._lists.clock = Clock()
            assert _names(await client.list_tools()) == ["echo", "route"]
            _add_tool(server, "late")
            assert _names(await client.list_tools()) == ["echo", "route"]
            assert _names(await client.list_tools(use_cache=False)) == ["echo", "late", "route"]
            # What it fetched is the cached list from then on.
            _add_tool(server, "later")
            assert _names(await client.list_tools()) == ["echo", "late", "route"]
            assert _lists_sent(recorder) in (2, None)


@pytest.mark.parametrize("connect", TRANSPORTS)
async def test_a_change_the_server_announces_drops_the_cached_list(connect: Connect) -> None:
    server = _server(ttl_ms=TTL_MS)
    changed = anyio.Event()

    async def on_change(kind: str) -> None:  # async: plain callbacks run in a worker thread
        if kind == "tools":
            changed.set()

    with anyio.fail_after(TIMEOUT):
        async with connect(server, list_changed_handler=on_change) as (client, recorder):
            client._lists.clock = Clock()
            assert _names(await client.list_tools()) == ["echo", "route"]
            _add_tool(server, "late")  # announced on the client's subscriptions/listen stream
            await changed.wait()
            assert _names(await client.list_tools()) == ["echo", "late", "route"]
            assert _lists_sent(recorder) in (2, None)


async def test_a_handshake_client_keeps_the_list_changed_rule() -> None:
    # 2025-11-25: cached while the server promised to announce changes, whatever the clock.
    server = _server(ttl_ms=TTL_MS)
    recorder = Recorder(server.http_app())
    clock = Clock()
    with anyio.fail_after(TIMEOUT):
        async with (
            ASGIClient(recorder) as asgi,
            Client(http(URL, http_client=asgi), protocol_version="2025-11-25") as client,
        ):
            client._lists.clock = clock
            assert not client.session.stateless
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed
            await client.list_tools()
            clock.advance(10 * TTL_MS)
            await client.list_tools()
            assert recorder.body_methods().count("tools/list") == 1


# ---------------------------------------------------------------- x-mcp-header


async def test_a_tool_with_invalid_marks_is_left_out_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = _server()
    _break_marks(server)
    caplog.set_level(logging.WARNING, logger="mcpkit.client")
    with anyio.fail_after(TIMEOUT):
        async with _http_client(server) as (client, _):
            assert _names(await client.list_tools()) == ["echo", "route"]
            transport = client._transport
            assert set(transport.header_params) == {"echo", "route"}
            assert transport.header_params["route"] == [
                ("Region", ("region",)),
                ("Shard", ("shard",)),
                ("Dry-Run", ("dry",)),
            ]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'bad_marks'" in w and "x-mcp-header 'Data'" in w for w in warnings), warnings


async def test_other_transports_ignore_the_marks() -> None:
    # streamable-http.mdx: clients of other transports MAY ignore x-mcp-header; we do.
    server = _server()
    _break_marks(server)
    with anyio.fail_after(TIMEOUT):
        async with _memory_client(server) as (client, _):
            assert _names(await client.list_tools()) == ["bad_marks", "echo", "route"]


async def test_the_marked_arguments_arrive_as_headers() -> None:
    server = _server()
    with anyio.fail_after(TIMEOUT):
        async with _http_client(server) as (client, recorder):
            await client.list_tools()
            result = await client.call_tool(
                "route", {"region": "us-west1", "shard": 42, "dry": True, "note": "n"}
            )
            assert not result.is_error, result.content
            assert result.content[0].text == "us-west1/42/True/n"  # type: ignore[union-attr]
            # An argument left out has no header; an unmarked one never has one.
            result = await client.call_tool("route", {"region": "eu west 2"})
            assert not result.is_error, result.content
    first, second = recorder.calls("route")
    assert first["mcp-param-region"] == "us-west1"
    assert first["mcp-param-shard"] == "42"
    assert first["mcp-param-dry-run"] == "true"
    assert second["mcp-param-region"] == "eu west 2"  # inner spaces are plain header text
    for headers in (first, second):
        assert "mcp-param-note" not in headers
    assert "mcp-param-shard" not in second and "mcp-param-dry-run" not in second


def _b64(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


@pytest.mark.parametrize(
    "region",
    ["Hello, 世界", " padded ", "line1\nline2", "\tindented", "=?base64?literal?="],
    ids=["non-ascii", "padded", "newline", "tab", "sentinel"],
)
async def test_values_that_are_not_plain_header_text_travel_base64(region: str) -> None:
    server = _server()
    with anyio.fail_after(TIMEOUT):
        async with _http_client(server) as (client, recorder):
            await client.list_tools()
            result = await client.call_tool("route", {"region": region})
            # The server decoded the header and found it equal to the argument.
            assert not result.is_error, result.content
            assert result.content[0].text == f"{region}/0/False/"  # type: ignore[union-attr]
    (call,) = recorder.calls("route")
    assert call["mcp-param-region"] == _b64(region)


async def test_a_call_before_any_listing_learns_the_marks_first() -> None:
    server = _server()
    with anyio.fail_after(TIMEOUT):
        async with _http_client(server) as (client, recorder):
            # Nothing listed yet: call_tool lists the tools once, then calls with the headers.
            result = await client.call_tool("route", {"region": "ap-south1", "dry": False})
            assert not result.is_error, result.content
            # Known now (and so is every tool of that listing): no further listing.
            await client.call_tool("route", {"region": "ap-south2"})
            await client.call_tool("echo", {"text": "hi"})
    assert recorder.body_methods()[-4:] == ["tools/list", "tools/call", "tools/call", "tools/call"]
    assert recorder.methods().count("tools/list") == 1
    call = recorder.calls("route")[0]
    assert call["mcp-param-region"] == "ap-south1"
    assert call["mcp-param-dry-run"] == "false"


async def test_an_unknown_or_rejected_tool_is_looked_for_once() -> None:
    server = _server()
    _break_marks(server)
    with anyio.fail_after(TIMEOUT):
        async with _http_client(server) as (client, recorder):
            for _ in range(3):
                await client._lists.ensure_header_params("nowhere")
                await client._lists.ensure_header_params("bad_marks")
            assert recorder.methods().count("tools/list") == 1
            # A new listing forgets the misses: the tool may have appeared since.
            _add_tool(server, "nowhere")
            await client.list_tools()
            await client._lists.ensure_header_params("nowhere")
            assert recorder.methods().count("tools/list") == 2
            assert client._transport.header_params["nowhere"] == []


async def test_a_new_listing_replaces_the_marks() -> None:
    server = _server()
    with anyio.fail_after(TIMEOUT):
        async with _http_client(server) as (client, _):
            await client.list_tools()
            assert "route" in client._transport.header_params
            server.remove_tool("route")
            await client.list_tools()
            assert set(client._transport.header_params) == {"echo"}


async def test_nothing_is_listed_for_headers_outside_streamable_http() -> None:
    server = _server()
    with anyio.fail_after(TIMEOUT):
        async with _memory_client(server) as (client, _):
            await client._lists.ensure_header_params("route")
            assert client._lists._cache == {}
            assert client._lists._output_schemas is None
