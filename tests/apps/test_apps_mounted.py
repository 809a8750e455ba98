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
from tests.conftest import BACKEND
from tests.inspect._browser_harness import browser_page, inspected, mcpkit_command, tab

from mcpkit import Client, InvalidParams, MCPError, Server
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
        # The view's own name for it: the hub serves it twice, and the call cannot say
        # which view sent it (a host that knows, as mcpkit inspect, sends the listed name).
        with pytest.raises(InvalidParams, match="p_increment and r_increment") as refused:
            await host.call_tool("increment")
        assert refused.value.data == {
            "name": "increment",
            "candidates": ["p_increment", "r_increment"],
        }
        with pytest.raises(MCPError, match="ui://p/counter/view and ui://r/counter/view"):
            await host.read_resource("ui://counter/view")


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


@pytest.mark.parametrize("era", ERAS)
async def test_a_views_own_tool_names_reach_its_tools_behind_the_hub(era: str) -> None:
    # A view calls its server's tools as that server named them ('bump'); the extension
    # has the host forward the call as written, to the hub, which serves 'm_bump'.
    child = Server("child")
    child.app_resource("ui://v/x", "<!doctype html><p>x</p>")
    count = {"n": 0}

    @child.tool(app=AppToolMeta(resource_uri="ui://v/x", visibility=["app"]))
    def bump() -> int:
        count["n"] += 1
        return count["n"]

    @child.tool(app=AppToolMeta(resource_uri="ui://v/x", visibility=["model"]))
    def secret() -> str:
        return "for the model only"

    hub, outer = Server("hub"), Server("outer")
    hub.mount(child, prefix="m")
    outer.mount(hub, prefix="a")  # nested: 'a_m_bump'

    @outer.tool()
    def own() -> str:
        return "own"

    async with (
        Client(hub, protocol_version=era, apps=True) as host,
        Client(outer, protocol_version=era, apps=True) as top,
    ):
        assert (await host.call_tool("bump")).structured_content == {"result": 1}
        assert (await top.call_tool("bump")).structured_content == {"result": 2}
        assert (await top.call_tool("own")).content[0].text == "own"  # type: ignore[union-attr]
        for client, served in ((host, "ui://m/v/x"), (top, "ui://a/m/v/x")):
            # Its view's own URI for a resource of its server: read where the hub serves it.
            (read,) = (await client.read_resource("ui://v/x")).contents
            assert read.text == "<!doctype html><p>x</p>"  # type: ignore[union-attr]
            assert str(read.uri) == served
        for client in (host, top):
            # Views may not call a tool for the model only, by any name it is not listed as.
            with pytest.raises(InvalidParams, match="Unknown tool: secret"):
                await client.call_tool("secret")
    async with Client(hub, protocol_version=era) as plain:  # not a host: no such name
        with pytest.raises(InvalidParams, match="Unknown tool: bump"):
            await plain.call_tool("bump")
        with pytest.raises(MCPError):
            await plain.read_resource("ui://v/x")
    assert count == {"n": 2}


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


@pytest.mark.skipif(
    BACKEND != "asyncio",
    reason="the inspector and the browser are processes: one pass (asyncio) is enough",
)
@pytest.mark.parametrize("era", ERAS)
def test_the_inspector_renders_each_mounted_view_and_its_button_reaches_its_own_tool(
    era: str,
) -> None:
    # The view's button calls 'increment'; the hub serves it as p_increment (in place) and
    # r_increment (a subprocess): the inspector sends the name its view's tool is listed
    # under the prefix of, so each view counts on its own server.
    from playwright.sync_api import expect

    hub = f"{' '.join(mcpkit_command())} run {HUB}:hub"
    with (
        inspected(["inspect", "--protocol-version", era, hub]) as running,
        browser_page(running.url()) as (page, _),
    ):
        page.wait_for_selector('[data-testid="server-name"]')
        for prefix, clicks in (("p", 2), ("r", 1)):
            tab(page, "tools")
            page.click(f'#tool-list .item[data-name="{prefix}_counter"]')
            page.locator('#tool-detail [data-testid="submit"]').click()
            frame = page.locator(
                f'[data-testid="app-frame"][data-uri="ui://{prefix}/counter/view"]'
            )
            expect(frame).to_have_count(1)
            view = page.frame_locator(
                f'[data-testid="app-frame"][data-uri="ui://{prefix}/counter/view"]'
            ).frame_locator("iframe")
            expect(view.locator("#count")).to_have_text("count: 0")
            for n in range(1, clicks + 1):
                view.get_by_role("button", name="increment").click()
                expect(view.locator("#count")).to_have_text(f"count: {n}")
