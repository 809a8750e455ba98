"""What a Server serves with (its ServerSpec), shared by its sessions and replaced when
registrations change it: checked over a memory transport with raw JSON-RPC."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from tests.session._raw import Raw

from mcpkit import Server
from mcpkit.lowlevel import ServerSpec, memory_pair
from mcpkit.types._revisions import HANDSHAKE_PROTOCOL_VERSIONS

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


@asynccontextmanager
async def _serving(server: Server, **kw: Any) -> AsyncIterator[Raw]:
    a, b = memory_pair()
    async with server.running(), anyio.create_task_group() as tg:
        tg.start_soon(server.create_session(b, **kw).run)
        try:
            yield Raw(a)
        finally:
            tg.cancel_scope.cancel()
            a.close()
            b.close()


async def _ask(raw: Raw, rid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    await raw.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    return await raw.recv()


def _server() -> Server:
    server = Server("spec")

    @server.tool()
    def first() -> str:
        """The first tool."""
        return "1"

    return server


async def test_a_tool_added_while_serving_is_served_to_the_next_stateless_request() -> None:
    server = _server()
    async with _serving(server) as raw:
        before = await _ask(raw, 1, "tools/list", {"_meta": META})
        assert [t["name"] for t in before["result"]["tools"]] == ["first"]

        @server.tool()
        def second() -> str:
            """Added later."""
            return "2"

        after = await _ask(raw, 2, "tools/list", {"_meta": META})
        assert [t["name"] for t in after["result"]["tools"]] == ["first", "second"]


async def test_an_initialized_session_keeps_what_it_was_told() -> None:
    server = _server()
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    async with _serving(server) as raw:
        answer = await _ask(raw, 1, "initialize", init)
        assert "prompts" not in answer["result"]["capabilities"]
        await raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.add_prompt(lambda: "hi", name="hello", description="Says hi.")
        # Declared later: not to this session, which the handshake told otherwise.
        refused = await _ask(raw, 2, "prompts/list", {})
        assert refused["error"]["code"] == -32601
        assert "prompts" in server.capabilities


async def test_a_session_narrowed_to_handshake_revisions_serves_no_stateless_request() -> None:
    server = _server()
    async with _serving(server, supported_versions=HANDSHAKE_PROTOCOL_VERSIONS) as raw:
        answer = await _ask(raw, 1, "tools/list", {"_meta": META})
        assert answer["error"]["code"] == -32022  # UnsupportedProtocolVersion
        assert MODERN not in answer["error"]["data"]["supported"]


def test_replacing_capabilities_derives_the_stateless_ones_again() -> None:
    spec = ServerSpec(server_info={"name": "s", "version": "1"}, capabilities={}, handlers={})
    changed = spec.replace(capabilities={"tools": {}, "tasks": {"list": {}}})
    # Core tasks are the extension's at 2026-07-28: not in what that revision declares.
    assert changed.stateless_capabilities == {"tools": {}}
    assert spec.stateless_capabilities == {}  # the shared spec itself never changes


async def test_refresh_serves_attributes_changed_while_serving() -> None:
    server = _server()
    async with _serving(server) as raw:
        server.instructions = "use the first tool"
        stale = await _ask(raw, 1, "server/discover", {"_meta": META})
        assert "instructions" not in stale["result"]
        server.refresh()
        fresh = await _ask(raw, 2, "server/discover", {"_meta": META})
        assert fresh["result"]["instructions"] == "use the first tool"
