"""Lifecycle on the session roles: initialize, version negotiation, capabilities, ping,
what may be sent before initialization. In memory, with every message schema-checked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import orjson
import pytest
from tests._schema import WireRecorder

from mcpkit._exceptions import CapabilityError, MethodNotFound, VersionError
from mcpkit._session import ClientSession, RequestContext, ServerSession
from mcpkit._transports import MemoryTransport, memory_pair
from mcpkit.types._revisions import HANDSHAKE_PROTOCOL_VERSIONS as SUPPORTED_PROTOCOL_VERSIONS
from mcpkit.types._revisions import LATEST_HANDSHAKE_VERSION as LATEST_PROTOCOL_VERSION

pytestmark = pytest.mark.anyio

CLIENT_INFO = {"name": "test-client", "version": "1.0"}
SERVER_INFO = {"name": "test-server", "version": "2.0"}
ICON = {"src": "https://example.com/i.png", "mimeType": "image/png"}


async def _tools_list(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
    return {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}


def _server(t: Any, **kw: Any) -> ServerSession:
    kw.setdefault("capabilities", {"tools": {}})
    kw.setdefault("handlers", {"tools/list": _tools_list})
    return ServerSession(t, server_info=SERVER_INFO, **kw)


@asynccontextmanager
async def connected(
    server_kw: dict[str, Any] | None = None, **client_kw: Any
) -> AsyncIterator[tuple[ClientSession, ServerSession, WireRecorder]]:
    a, b = memory_pair()
    rec = WireRecorder(a, side="client")
    server = _server(b, **(server_kw or {}))
    client = ClientSession(rec, client_info=CLIENT_INFO, **client_kw)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run)
            async with client:
                yield client, server, rec
            tg.cancel_scope.cancel()
    finally:
        a.close()
        b.close()


class RawPeer:
    """A hand-driven peer: sends exact bytes, reads decoded messages."""

    def __init__(self, t: MemoryTransport) -> None:
        self.t = t

    async def send(self, msg: Any) -> None:
        await self.t.send_raw(orjson.dumps(msg))

    async def recv(self) -> Any:
        with anyio.fail_after(5):
            data = await self.t.receive()
        assert isinstance(data, bytes)
        return orjson.loads(data)

    async def request(self, id: int, method: str, params: Any = None) -> Any:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        await self.send(msg)
        return await self.recv()


def _init_params(version: str = LATEST_PROTOCOL_VERSION) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}


@asynccontextmanager
async def raw_to_server(**kw: Any) -> AsyncIterator[tuple[RawPeer, ServerSession]]:
    a, b = memory_pair()
    server = _server(b, **kw)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run)
            yield RawPeer(a), server
            tg.cancel_scope.cancel()
    finally:
        a.close()
        b.close()


@pytest.mark.req(
    "LIFECYCLE-INIT-FIRST",
    "LIFECYCLE-CLIENT-SENDS-INITIALIZE",
    "LIFECYCLE-SERVER-RESPONDS-CAPABILITIES",
    "LIFECYCLE-CLIENT-SENDS-INITIALIZED",
    "LIFECYCLE-VERSION-CLIENT-SENDS-LATEST",
    "BASE-SUPPORT-BASE-AND-LIFECYCLE",
)
async def test_handshake_exchanges_info_and_capabilities() -> None:
    async with connected(server_kw={"instructions": "be nice"}) as (client, server, rec):
        result = await client.initialize()
        assert result["protocolVersion"] == LATEST_PROTOCOL_VERSION
        assert client.server_info == SERVER_INFO
        assert client.server_capabilities == {"tools": {}}
        assert client.negotiated is not None and client.negotiated.instructions == "be nice"
        with anyio.fail_after(5):
            await server.wait_initialized()
        assert server.client_info == CLIENT_INFO
        assert server.protocol_version == LATEST_PROTOCOL_VERSION
        sent = rec.sent
        assert sent[0]["method"] == "initialize"
        assert sent[0]["params"]["protocolVersion"] == LATEST_PROTOCOL_VERSION
        assert sent[1] == {"jsonrpc": "2.0", "method": "notifications/initialized"}
        rec.check()


@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
@pytest.mark.req(
    "LIFECYCLE-VERSION-CLIENT-SENDS-SUPPORTED",
    "LIFECYCLE-VERSION-SERVER-SAME-IF-SUPPORTED",
    "LIFECYCLE-RESPECT-NEGOTIATED-VERSION",
)
async def test_each_supported_revision_is_negotiated_and_respected(version: str) -> None:
    async with connected(protocol_version=version) as (client, _server, rec):
        result = await client.initialize()
        assert result["protocolVersion"] == version
        assert client.protocol_version == version
        assert (await client.send_request("tools/list"))["tools"][0]["name"] == "t"
        await client.ping()
        rec.check()  # every message valid under `version`'s schema


@pytest.mark.req(
    "LIFECYCLE-VERSION-SERVER-OTHER-SUPPORTED", "LIFECYCLE-VERSION-SERVER-OTHER-LATEST"
)
async def test_server_offers_its_latest_for_an_unknown_version() -> None:
    async with raw_to_server(supported_versions=("2025-06-18", "2025-03-26")) as (raw, _):
        reply = await raw.request(1, "initialize", _init_params("1999-01-01"))
        assert reply["result"]["protocolVersion"] == "2025-06-18"


@pytest.mark.req("LIFECYCLE-VERSION-CLIENT-DISCONNECT-UNSUPPORTED")
async def test_client_refuses_a_version_it_does_not_speak() -> None:
    a, b = memory_pair()
    raw = RawPeer(b)
    client = ClientSession(a, client_info=CLIENT_INFO)
    try:
        async with client, anyio.create_task_group() as tg:

            async def fake_server() -> None:
                req = await raw.recv()
                await raw.send(
                    {
                        "jsonrpc": "2.0",
                        "id": req["id"],
                        "result": {
                            "protocolVersion": "2099-01-01",
                            "capabilities": {},
                            "serverInfo": SERVER_INFO,
                        },
                    }
                )

            tg.start_soon(fake_server)
            with pytest.raises(VersionError, match="2099-01-01"):
                await client.initialize()
        # and it did not say `initialized`: the next thing on the wire is its end
        with anyio.fail_after(2), pytest.raises(anyio.EndOfStream):
            await b.receive()
    finally:
        a.close()
        b.close()
    with pytest.raises(VersionError):
        ClientSession(a, client_info=CLIENT_INFO, protocol_version="2099-01-01")


@pytest.mark.req("LIFECYCLE-CLIENT-NO-REQUESTS-BEFORE-INIT-RESPONSE", "PING-RESPOND-EMPTY")
async def test_only_ping_before_initialize() -> None:
    async with raw_to_server() as (raw, _):
        assert (await raw.request(1, "ping")) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        early = await raw.request(2, "tools/list")
        assert early["error"]["code"] == -32600 and "initialize" in early["error"]["message"]
        ok = await raw.request(3, "initialize", _init_params())
        assert ok["result"]["serverInfo"] == SERVER_INFO
        again = await raw.request(4, "initialize", _init_params())
        assert again["error"]["code"] == -32600
    # client side: our session refuses to send before initialize
    async with connected() as (client, _, _rec):
        with pytest.raises(CapabilityError, match="before initialize"):
            await client.send_request("tools/list")


@pytest.mark.req("LIFECYCLE-HANDLE-ERROR-CASES")
async def test_malformed_initialize_params_are_invalid_params() -> None:
    async with raw_to_server() as (raw, _):
        for params in (
            None,
            {"capabilities": {}, "clientInfo": CLIENT_INFO},
            {"protocolVersion": 5, "capabilities": {}, "clientInfo": CLIENT_INFO},
            {"protocolVersion": "2025-11-25", "clientInfo": CLIENT_INFO},
            {"protocolVersion": "2025-11-25", "capabilities": {}},
        ):
            reply = await raw.request(1, "initialize", params)
            assert reply["error"]["code"] == -32602, params
        # still able to initialize properly afterwards
        assert "result" in await raw.request(2, "initialize", _init_params())


@pytest.mark.req("LIFECYCLE-ONLY-NEGOTIATED-CAPABILITIES")
async def test_capabilities_are_enforced_both_ways() -> None:
    # server side: a method whose capability was not declared is -32601, on the wire
    async with raw_to_server() as (raw, _):
        await raw.request(1, "initialize", _init_params())
        await raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i, method in enumerate(
            ("resources/list", "prompts/get", "completion/complete", "logging/setLevel", "no/such"),
            2,
        ):
            reply = await raw.request(i, method, {})
            assert reply["error"]["code"] == -32601, method
            assert method in reply["error"]["message"]
    # client side: calling what the server did not declare fails before the wire
    async with connected() as (client, server, rec):
        await client.initialize()
        with pytest.raises(CapabilityError, match="resources"):
            await client.send_request("resources/list")
        # the server asking for what the client did not declare fails on the server's side
        with anyio.fail_after(5):
            await server.wait_initialized()
        for method in ("sampling/createMessage", "roots/list", "elicitation/create"):
            with pytest.raises(CapabilityError, match=method.split("/")[0]):
                await server.send_request(method, {})
        assert not any(m.get("method") == "sampling/createMessage" for m in rec.received)


async def test_client_answers_minus_32601_for_undeclared_server_requests() -> None:
    a, b = memory_pair()
    raw = RawPeer(b)

    async def roots(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        return {"roots": []}

    # A handler alone is not enough: what the client did not declare is refused.
    client = ClientSession(a, client_info=CLIENT_INFO, handlers={"roots/list": roots})
    try:
        async with client:
            await raw.send({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"})
            assert (await raw.recv())["error"]["code"] == -32601
            await raw.send(
                {"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage", "params": {}}
            )
            assert (await raw.recv())["error"]["code"] == -32601
            await raw.send({"jsonrpc": "2.0", "id": "s3", "method": "ping"})
            assert await raw.recv() == {"jsonrpc": "2.0", "id": "s3", "result": {}}
    finally:
        a.close()
        b.close()


@pytest.mark.req("LIFECYCLE-SERVER-NO-REQUESTS-BEFORE-INITIALIZED", "PING-RESPOND-EMPTY")
async def test_ping_both_ways_and_server_waits_for_initialized() -> None:
    async def roots(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        return {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}

    async with connected(capabilities={"roots": {}}, handlers={"roots/list": roots}) as (
        client,
        server,
        rec,
    ):
        # before initialize: the server may only ping
        with pytest.raises(CapabilityError, match="initialized"):
            await server.send_request("roots/list")
        await client.initialize()
        await client.ping()
        with anyio.fail_after(5):
            await server.wait_initialized()
        await server.ping()
        result = await server.send_request("roots/list", timeout=5)
        assert result == {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}
        rec.check()


async def test_batches_follow_the_negotiated_revision() -> None:
    for version, allowed in (("2025-03-26", True), ("2025-06-18", False), ("2025-11-25", False)):
        async with raw_to_server() as (raw, _):
            await raw.request(1, "initialize", _init_params(version))
            await raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await raw.send(
                [
                    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                    {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                ]
            )
            reply = await raw.recv()
            if allowed:
                assert isinstance(reply, list) and sorted(r["id"] for r in reply) == [2, 3]
            else:
                assert reply["error"]["code"] == -32600, version


async def test_handler_results_are_adapted_to_older_revisions() -> None:
    async def tools(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        return {
            "tools": [
                {
                    "name": "t",
                    "title": "Title (2025-06-18+)",
                    "inputSchema": {"type": "object"},
                    "outputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True},
                    "icons": [{"src": "https://example.com/i.png"}],
                }
            ]
        }

    seen = {}
    for version in SUPPORTED_PROTOCOL_VERSIONS:
        async with connected(
            server_kw={"handlers": {"tools/list": tools}}, protocol_version=version
        ) as (c, _, rec):
            await c.initialize()
            seen[version] = (await c.send_request("tools/list"))["tools"][0]
            rec.check()
    assert "icons" in seen["2025-11-25"]
    assert "icons" not in seen["2025-06-18"] and "title" in seen["2025-06-18"]
    assert "title" not in seen["2025-03-26"] and "annotations" in seen["2025-03-26"]
    assert "annotations" not in seen["2024-11-05"] and "outputSchema" not in seen["2024-11-05"]


async def test_handler_errors_reach_the_client_as_protocol_errors() -> None:
    async with connected() as (client, _, _rec):
        await client.initialize()
        with pytest.raises(MethodNotFound):
            await client.engine.request("tools/call", {"name": "x"})


@pytest.mark.req("LIFECYCLE-INIT-FIRST")
async def test_meta_of_a_handshake_revision_does_not_bypass_initialize() -> None:
    # Issue 13: every revision spoken today requires initialization first (lifecycle.mdx);
    # a request naming one of them in _meta, with no initialize, is refused.
    async with raw_to_server(handlers={"tools/list": _no_tools}) as (raw, server):
        for rid, version in enumerate(("2024-11-05", "2025-06-18", LATEST_PROTOCOL_VERSION), 1):
            reply = await raw.request(
                rid,
                "tools/list",
                {"_meta": {"io.modelcontextprotocol/protocolVersion": version}},
            )
            assert reply["error"]["code"] == -32600 and "initializ" in reply["error"]["message"]
        assert server.negotiated is None


async def _no_tools(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
    return {"tools": []}


async def test_negotiated_context_is_resolved_per_request_from_meta() -> None:
    # Issue 2, design: the engine resolves "the negotiated context" per request as well as per
    # session (the 2026-07-28 shape: version, capabilities and client info in each request's
    # _meta, no initialize), for the revisions a session serves that way (none by default:
    # here the hook is opened for two of today's revisions). Only those are admitted.
    seen: list[Any] = []

    async def tools_list(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        seen.append(ctx.negotiated)
        return {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "icons": [ICON]}]}

    def meta(version: str, caps: Any, info: Any) -> dict[str, Any]:
        return {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": caps,
                "io.modelcontextprotocol/clientInfo": info,
            }
        }

    async with raw_to_server(handlers={"tools/list": tools_list}) as (raw, server):
        server.stateless_versions = frozenset({"2025-06-18", LATEST_PROTOCOL_VERSION})
        old = await raw.request(1, "tools/list", meta("2025-06-18", {"roots": {}}, CLIENT_INFO))
        new = await raw.request(2, "tools/list", meta(LATEST_PROTOCOL_VERSION, {}, {"name": "b"}))
        # Each request was served under its own revision and peer declarations...
        assert [(n.protocol_version, n.peer_capabilities, n.peer_info) for n in seen] == [
            ("2025-06-18", {"roots": {}}, CLIENT_INFO),
            (LATEST_PROTOCOL_VERSION, {}, {"name": "b"}),
        ]
        # ...and its result fits that revision (icons exist only since 2025-11-25).
        assert old["result"]["tools"] == [{"name": "t", "inputSchema": {"type": "object"}}]
        assert new["result"]["tools"][0]["icons"] == [ICON]
        # Nothing was fixed for the connection: no session context appeared.
        assert server.negotiated is None
        # A version the server does not speak is UnsupportedProtocolVersion, naming what it
        # speaks; malformed or no _meta: as before initialization, an invalid request; the
        # connection keeps serving.
        reply = await raw.request(3, "tools/list", meta("2099-01-01", {}, CLIENT_INFO))
        assert reply["error"]["code"] == -32022
        assert reply["error"]["data"]["requested"] == "2099-01-01"
        assert "2026-07-28" in reply["error"]["data"]["supported"]
        for i, params in enumerate(({"_meta": {"x": 1}}, {}, None), 4):
            reply = await raw.request(i, "tools/list", params)
            assert reply["error"]["code"] == -32600, params
            assert "initializ" in reply["error"]["message"]
        assert len(seen) == 2
        assert await raw.request(9, "ping") == {"jsonrpc": "2.0", "id": 9, "result": {}}
