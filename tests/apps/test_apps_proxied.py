"""MCP Apps through ``mcpkit proxy``: the proxy declares ``io.modelcontextprotocol/ui`` to
the upstream ``examples/apps_server.py``, so its app-only ``increment`` and its view reach
a host through the proxy, while a client that is not a host sees and calls neither, as
the apps server itself would have it. A real ``mcpkit proxy -t http`` process (a child
per client; it speaks the handshake era downstream), and a proxy sharing one child
(``share_child``) served over HTTP in process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from tests._served import Served

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


def _start_proxy() -> subprocess.Popen[bytes]:
    """``mcpkit proxy "python examples/apps_server.py" -t http --port 0``."""
    argv = [*PROXY, "-t", "http", "--port", "0"]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


async def test_through_a_mcpkit_proxy_process_a_host_gets_the_app_and_a_plain_client_not() -> None:
    with _start_proxy() as proc:
        served = Served(proc)
        try:
            with anyio.fail_after(TIMEOUT):
                url = await anyio.to_thread.run_sync(served.url, TIMEOUT)
                async with Client(url, apps=True) as host, Client(url) as plain:
                    await _host_uses_the_app(host)
                    await _plain_never_gets_it(plain)
                    # A child each: the host's increment was counted in its own.
                    counted = await plain.call_tool("counter")
                    assert counted.structured_content == {"count": 0}
        finally:
            proc.terminate()
            await anyio.to_thread.run_sync(proc.wait, 30)
            await anyio.to_thread.run_sync(served._thread.join, 30)


async def test_one_shared_child_serves_a_host_and_a_plain_client_each_their_own() -> None:
    app = Proxy(f"{sys.executable} {APPS}", share_child=True).http_app()
    url = "http://127.0.0.1/mcp"
    with anyio.fail_after(TIMEOUT):
        async with (
            ASGIClient(app) as asgi,
            Client(http(url, http_client=asgi), apps=True) as host,
            Client(http(url, http_client=asgi)) as plain,
        ):
            await _host_uses_the_app(host)
            await _plain_never_gets_it(plain)
            # One child for both: the host's increment is what the plain client sees.
            counted = await plain.call_tool("counter")
            assert counted.structured_content == {"count": 1}


@pytest.mark.parametrize("share_child", [False, True], ids=["child-per-client", "shared-child"])
async def test_a_tool_made_app_only_later_is_refused_after_upstream_says_its_tools_changed(
    share_child: bool,
) -> None:
    """The proxy keeps upstream's app-only names between calls; its list changed, they are
    asked again: the new app-only ``secret`` is refused to a client that is not a host."""
    server = Path(__file__).with_name("changing_apps_server.py")
    app = Proxy(f"{sys.executable} {server}", share_child=share_child).http_app()
    changed = anyio.Event()

    async def on_change(kind: str) -> None:
        if kind == "tools":
            changed.set()

    with anyio.fail_after(TIMEOUT):
        async with (
            ASGIClient(app) as asgi,
            Client(
                http("http://127.0.0.1/mcp", http_client=asgi), list_changed_handler=on_change
            ) as plain,
        ):
            assert (await plain.call_tool("vault")).content[0].text == "closed"  # type: ignore[union-attr]
            with pytest.raises(InvalidParams, match="Unknown tool: secret"):
                await plain.call_tool("secret")  # not there yet: upstream refuses it
            await plain.call_tool("unlock")
            await changed.wait()  # the proxy forgot the names it knew before telling us
            with pytest.raises(InvalidParams, match="Unknown tool: secret"):
                await plain.call_tool("secret")
            assert [t.name for t in await plain.list_tools(use_cache=False)] == ["vault", "unlock"]
