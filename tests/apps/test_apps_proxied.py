"""MCP Apps through ``mcpkit proxy``: the proxy declares ``io.modelcontextprotocol/ui`` to
the upstream ``examples/apps_server.py``, so its app-only ``increment`` and its view reach
a host through the proxy, while a client that is not a host sees and calls neither, as
the apps server itself would have it. A real ``mcpkit proxy`` process (stdio both ways, a
child per client; it speaks the handshake era downstream), and a proxy served over HTTP in
process, with a child per client and with one child shared (``share_child``)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from mcpkit import Client, InvalidParams, Proxy, http
from mcpkit.lowlevel import ASGIClient
from mcpkit.types import APP_MIME_TYPE, APPS_EXTENSION

pytestmark = pytest.mark.anyio

APPS = Path(__file__).resolve().parents[2] / "examples" / "apps_server.py"
PROXY = [str(Path(sys.executable).with_name("mcpkit")), "proxy", f"{sys.executable} {APPS}"]
TIMEOUT = 60


async def _host_uses_the_app(host: Client) -> None:
    declared = host.server_capabilities.model_dump(by_alias=True).get("extensions") or {}
    assert declared.get(APPS_EXTENSION) == {"mimeTypes": [APP_MIME_TYPE]}
    tools = {t.name: t for t in await host.list_tools()}
    assert set(tools) == {"counter", "increment"}
    assert {t.name for t in await host.list_model_tools()} == {"counter"}
    app = await host.read_app(tools["counter"])  # the ui:// resource, forwarded
    assert app.uri == "ui://counter/view" and 'id="increment"' in app.html
    assert app.meta is not None and app.meta.prefers_border is True
    assert "ui://counter/view" in {str(r.uri) for r in await host.list_resources()}
    bumped = await host.call_tool_from_app("increment")
    assert bumped.structured_content == {"count": 1}


async def _plain_never_gets_it(plain: Client) -> None:
    assert [t.name for t in await plain.list_tools()] == ["counter"]
    with pytest.raises(InvalidParams, match="Unknown tool: increment"):
        await plain.call_tool("increment")
    # Its own view is still a resource it may read (the apps server lists it to anyone).
    assert (await plain.call_tool("counter")).structured_content is not None


async def test_a_host_through_mcpkit_proxy_gets_the_app() -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(PROXY, apps=True) as host:
            await _host_uses_the_app(host)


@pytest.mark.parametrize("share_child", [False, True])
async def test_a_host_and_a_plain_client_of_one_proxy_each_get_their_own(share_child: bool) -> None:
    app = Proxy(f"{sys.executable} {APPS}", share_child=share_child).http_app()
    url = "http://127.0.0.1/mcp"
    with anyio.fail_after(TIMEOUT):
        async with (
            ASGIClient(app) as asgi,
            Client(http(url, http_client=asgi), apps=True) as host,
            Client(http(url, http_client=asgi)) as plain,
        ):
            await _host_uses_the_app(host)
            await _plain_never_gets_it(plain)
            # One child for both, or one each: the host's increment counted in its child only.
            counted = await plain.call_tool("counter")
            assert counted.structured_content == {"count": 1 if share_child else 0}
