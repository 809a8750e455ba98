"""MCP Apps through ``Server.mount``, over stdio: a hub (tests/apps/apps_hub.py) mounting
``examples/apps_server.py`` in place (prefix ``p``) and as a subprocess (prefix ``r``)
declares the extension, points each tool at its view where the hub serves it, and keeps
the app-only ``increment`` from clients that are not hosts, in both eras."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from tests._rawserver import PRELUDE

from mcpkit import Client, InvalidParams, Server
from mcpkit.types import APP_MIME_TYPE, APPS_EXTENSION, AppToolMeta

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]
HUB = str(Path(__file__).resolve().parent / "apps_hub.py")


@pytest.mark.parametrize("era", ERAS)
async def test_the_hub_declares_the_extension_to_hosts_and_to_other_clients(era: str) -> None:
    for apps in (True, False):
        async with Client(HUB, protocol_version=era, apps=apps) as client:
            declared = client.server_capabilities.model_dump(by_alias=True).get("extensions")
            assert declared is not None
            assert declared.get(APPS_EXTENSION) == {"mimeTypes": [APP_MIME_TYPE]}


@pytest.mark.parametrize("era", ERAS)
async def test_a_host_reads_each_view_where_the_hub_serves_it(era: str) -> None:
    async with Client(HUB, protocol_version=era, apps=True) as host:
        tools = {t.name: t for t in await host.list_tools()}
        assert set(tools) == {"p_counter", "p_increment", "r_counter", "r_increment", "hello"}
        model = {t.name for t in await host.list_model_tools()}
        assert model == {"p_counter", "r_counter", "hello"}
        listed = {str(r.uri) for r in await host.list_resources()}
        assert {"ui://p/counter/view", "ui://r/counter/view"} <= listed
        for prefix in ("p", "r"):
            for name in ("counter", "increment"):
                ui = AppToolMeta.of(tools[f"{prefix}_{name}"].meta)
                assert ui is not None and ui.resource_uri == f"ui://{prefix}/counter/view"
            app = await host.read_app(tools[f"{prefix}_counter"])
            assert app.uri == f"ui://{prefix}/counter/view"
            assert 'id="increment"' in app.html and app.html.startswith("<!doctype html>")
            assert app.meta is not None and app.meta.prefers_border is True
            # What the view's button asks for: allowed to a host.
            result = await host.call_tool_from_app(f"{prefix}_increment")
            assert result.structured_content == {"count": 1}


@pytest.mark.parametrize("era", ERAS)
async def test_a_client_that_is_not_a_host_never_sees_nor_calls_app_only_tools(
    era: str,
) -> None:
    async with Client(HUB, protocol_version=era) as plain:
        assert {t.name for t in await plain.list_tools()} == {"p_counter", "r_counter", "hello"}
        for name in ("p_increment", "r_increment"):
            with pytest.raises(InvalidParams, match=f"Unknown tool: {name}"):
                await plain.call_tool(name)
        for name in ("p_counter", "r_counter"):
            counted = await plain.call_tool(name)
            assert counted.structured_content == {"count": 0}  # no increment went through


async def test_the_flat_resource_uri_moves_too_and_a_hub_without_prefix_changes_nothing() -> None:
    child = Server("child")
    child.app_resource("ui://v/x", "<!doctype html><p>x</p>")

    @child.tool(meta={"ui/resourceUri": "ui://v/x"})
    def flat() -> str:
        return "flat"

    hub, bare = Server("hub"), Server("bare")
    hub.mount(child, prefix="m")
    bare.mount(child)
    async with Client(hub, apps=True) as host, Client(bare, apps=True) as other:
        (tool,) = await host.list_tools()
        assert tool.meta == {"ui/resourceUri": "ui://m/v/x"}
        assert (await host.read_app(tool)).html == "<!doctype html><p>x</p>"
        (same,) = await other.list_tools()
        assert same.meta == {"ui/resourceUri": "ui://v/x"}


# A server no SDK would let one write: its tools' visibility is malformed ("user"), and
# "inside" is for views only. It answers initialize, tools/list and tools/call (the text:
# the tool's name); anything else is -32601.
MALFORMED = (
    PRELUDE
    + """
UI = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
TOOLS = [
    {"name": "odd", "inputSchema": {"type": "object"},
     "_meta": {"ui": {"resourceUri": "ui://v/odd", "visibility": ["user"]}}},
    {"name": "inside", "inputSchema": {"type": "object"},
     "_meta": {"ui": {"resourceUri": "ui://v/odd", "visibility": ["app"]}}},
    {"name": "shown", "inputSchema": {"type": "object"}},
]
for msg in messages():
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}, "extensions": UI},
            "serverInfo": {"name": "malformed", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        text = msg["params"]["name"]
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        not_found(msg)
"""
)


async def test_a_mounted_servers_malformed_visibility_neither_breaks_the_list_nor_leaks(
    tmp_path: Path,
) -> None:
    script = tmp_path / "malformed.py"
    script.write_text(MALFORMED)
    hub = Server("hub")
    hub.mount(Client([sys.executable, str(script)], protocol_version="2025-11-25"), prefix="m")
    with anyio.fail_after(30):
        async with Client(hub) as plain, Client(hub, apps=True) as host:
            assert {t.name for t in await plain.list_tools()} == {"m_shown"}
            for name in ("m_odd", "m_inside"):
                with pytest.raises(InvalidParams, match=f"Unknown tool: {name}"):
                    await plain.call_tool(name)
            assert {t.name for t in await host.list_tools()} == {"m_odd", "m_inside", "m_shown"}
            inside = await host.call_tool_from_app("m_inside")
            assert inside.content[0].text == "inside"  # type: ignore[union-attr]
