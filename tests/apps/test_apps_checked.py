"""What no host could render is refused with one error, ``InvalidApp`` (a ``ValueError``):
a tool naming a view its server does not serve (when the server starts serving: a view may
be registered after its tool), and a view's CSP listing something that is not an origin
(at ``app_resource``; the ext-apps server validator's rule APP-009)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from mcpkit import Client, InvalidApp, Server
from mcpkit.types import AppCsp, AppToolMeta

pytestmark = pytest.mark.anyio

HTML = "<!doctype html><p>view</p>"


async def test_a_server_naming_a_view_it_lacks_does_not_start(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text(
        textwrap.dedent(
            """
            from mcpkit import Server

            server = Server("broken")
            server.app_resource("ui://board/view", "<!doctype html>")

            @server.tool(app="ui://bord/view")
            def board() -> str:
                return "a board"

            server.run()
            """
        )
    )
    with anyio.fail_after(60):
        done = await anyio.run_process([sys.executable, str(script)], input=b"", check=False)
    assert done.returncode != 0
    last = done.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("mcpkit._exceptions.InvalidApp: the tool 'board' names the view")
    assert "ui://bord/view" in last and "does not serve" in last


async def test_the_check_waits_for_the_server_to_start_and_counts_templates() -> None:
    server = Server("late")

    @server.tool(app=AppToolMeta(resource_uri="ui://late/view", visibility=["app"]))
    def early() -> str:
        return "early"

    @server.tool(app="ui://items/7")
    def item() -> str:
        return "item 7"

    with pytest.raises(InvalidApp, match=r"'early' names the view ui://late/view"):
        async with server.running():
            pass
    server.app_resource("ui://late/view", HTML)  # registered after its tool

    @server.resource("ui://items/{id}", mime_type="text/html;profile=mcp-app")
    def items(id: str) -> str:
        return HTML

    async with Client(server, apps=True) as host:  # now it starts
        assert {t.name for t in await host.list_tools()} == {"early", "item"}


async def test_a_mounted_server_with_a_broken_app_stops_its_hub_starting() -> None:
    child, hub = Server("child"), Server("hub")
    child.add_tool(lambda: "x", name="show", app="ui://gone/view")
    hub.mount(child, prefix="c")
    with pytest.raises(InvalidApp, match="'show' names the view ui://gone/view"):
        async with hub.running():
            pass


BAD_ORIGINS = [
    "api.example.com",  # no scheme
    "https://api.example.com/v1",  # a path
    "https://api.example.com/",
    "ftp://files.example.com",  # another scheme
    "https://*",  # a wildcard that is not "*." before a host
    "https://api.*.example.com",
    "*",
    "https://a.example; script-src *",  # a directive smuggled in
    "https://a.example 'unsafe-eval'",
    "https://a.example\n",
    "",
]


@pytest.mark.parametrize("origin", BAD_ORIGINS)
def test_a_csp_entry_that_is_not_an_origin_is_refused(origin: str) -> None:
    server = Server("csp")
    for key in ("connect_domains", "resource_domains", "frame_domains", "base_uri_domains"):
        with pytest.raises(InvalidApp, match=r"the app ui://map/view: csp\.\w+Domains entry"):
            server.app_resource("ui://map/view", HTML, csp=AppCsp(**{key: [origin]}))
    with pytest.raises(ValueError, match="is not an origin"):  # InvalidApp is a ValueError
        server.app_resource("ui://map/view", HTML, csp={"connectDomains": [origin]})
    assert not server.registry.resources  # nothing was registered


def test_origins_are_accepted_as_the_validator_takes_them() -> None:
    server = Server("csp")
    good = [
        "https://api.example.com",
        "https://*.example.com",
        "http://localhost:8080",
        "wss://live.example.com:8443",
        "ws://127.0.0.1:*",  # a port wildcard: valid CSP, for a loopback port not known yet
    ]
    server.app_resource("ui://map/view", HTML, csp=AppCsp(connect_domains=good))
    assert list(server.registry.resources) == ["ui://map/view"]


async def test_a_view_registered_with_its_meta_by_hand_is_checked_when_served() -> None:
    server = Server("by-hand")
    server.add_resource(
        "ui://map/view",
        lambda: HTML,
        name="map",
        mime_type="text/html;profile=mcp-app",
        meta={"ui": {"csp": {"resourceDomains": ["cdn.example.com"]}}},
    )
    server.add_tool(lambda: "map", name="map", app="ui://map/view")
    with pytest.raises(InvalidApp, match=r"csp\.resourceDomains entry 'cdn\.example\.com'"):
        async with server.running():
            pass


@pytest.mark.parametrize(
    ("ui", "refused"),
    [
        ({"resourceUri": "ui://v/x", "visibility": ["user"]}, "visibility is a non-empty list"),
        ({"resourceUri": "ui://v/x", "visibility": []}, "visibility is a non-empty list"),
        ({"resourceUri": "ui://v/x", "visibility": "app"}, "visibility is a non-empty list"),
        ({"resourceUri": "https://example.com/x"}, "its view.s URI uses the ui:// scheme"),
        ("ui://v/x", "_meta.ui is an object"),
    ],
)
async def test_a_tools_ui_meta_written_by_hand_is_checked_when_served(
    ui: object, refused: str
) -> None:
    server = Server("by-hand")
    server.app_resource("ui://v/x", HTML)
    server.add_tool(lambda: "x", name="show", meta={"ui": ui})
    with pytest.raises(InvalidApp, match=f"the tool 'show': {refused}"):
        async with server.running():
            pass
