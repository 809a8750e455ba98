"""MCP Apps on the wire, in both eras: the extension declared, ``_meta.ui`` of tools and
views valid against the vendored ext-apps schema, app-only tools hidden from clients that
are not hosts, views read with their metadata, bundles inlined."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from tests.apps._schema import check, errors

from mcpkit import Client, InvalidParams, InvalidResponse, Server
from mcpkit.types import (
    APP_MIME_TYPE,
    APPS_EXTENSION,
    AppCsp,
    AppToolMeta,
    TextResourceContents,
    app_csp_header,
)

ERAS = ["2025-11-25", "2026-07-28"]
pytestmark = pytest.mark.anyio


def make_server() -> Server:
    server = Server("apps")
    server.app_resource(
        "ui://board/view",
        "<!doctype html><p>board</p>",
        title="Board",
        csp=AppCsp(connect_domains=["https://api.example.com"]),
        permissions={"clipboardWrite": {}},
        domain="board.example.com",
        prefers_border=False,
    )

    @server.tool(app="ui://board/view")
    def board() -> str:
        """Show the board."""
        return "a board"

    @server.tool(app=AppToolMeta(resource_uri="ui://board/view", visibility=["app"]))
    def move() -> str:
        return "moved"

    @server.tool(app={"resourceUri": "ui://board/view", "visibility": ["model"]})
    def resign() -> str:
        return "resigned"

    @server.tool()
    def plain() -> str:
        return "plain"

    return server


@pytest.mark.parametrize("era", ERAS)
async def test_a_host_sees_every_tool_with_valid_ui_meta(era: str) -> None:
    async with Client(make_server(), protocol_version=era, apps=True) as client:
        declared = client.server_capabilities.model_dump(by_alias=True)["extensions"]
        assert declared[APPS_EXTENSION] == {"mimeTypes": [APP_MIME_TYPE]}
        tools = {t.name: t for t in await client.list_tools()}
        assert set(tools) == {"board", "move", "resign", "plain"}
        for name in ("board", "move", "resign"):
            meta = tools[name].meta
            assert meta is not None
            check("McpUiToolMeta", meta["ui"])
        assert tools["move"].meta == {
            "ui": {"resourceUri": "ui://board/view", "visibility": ["app"]}
        }
        model = [t.name for t in await client.list_model_tools()]
        assert model == ["board", "resign", "plain"]
        assert (await client.call_tool("move")).content[0].text == "moved"  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ERAS)
async def test_app_only_tools_are_hidden_from_clients_that_are_not_hosts(era: str) -> None:
    async with Client(make_server(), protocol_version=era) as client:
        assert [t.name for t in await client.list_tools()] == ["board", "resign", "plain"]
        with pytest.raises(InvalidParams, match="Unknown tool: move"):
            await client.call_tool("move")
        assert (await client.call_tool("board")).content[0].text == "a board"  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ERAS)
async def test_a_view_is_read_with_its_metadata(era: str) -> None:
    async with Client(make_server(), protocol_version=era, apps=True) as client:
        listed = {str(r.uri): r for r in await client.list_resources()}
        view = listed["ui://board/view"]
        assert view.mime_type == APP_MIME_TYPE
        assert view.meta is not None
        check("McpUiResourceMeta", view.meta["ui"])
        raw = await client.read_resource("ui://board/view")
        item = raw.contents[0]
        assert isinstance(item, TextResourceContents) and item.meta is not None
        check("McpUiResourceMeta", item.meta["ui"])
        board = next(t for t in await client.list_tools() if t.name == "board")
        app = await client.read_app(board)
        assert app.html == "<!doctype html><p>board</p>"
        assert app.meta is not None and app.meta.domain == "board.example.com"
        assert app.meta.prefers_border is False
        assert "connect-src https://api.example.com;" in app.csp
        with pytest.raises(InvalidParams, match="Unknown tool: resign"):
            await client.call_tool_from_app("resign")  # visibility ["model"]: not for views
        assert (await client.call_tool_from_app("move")).content[0].text == "moved"  # type: ignore[union-attr]


def test_the_schema_catches_a_wrong_visibility() -> None:
    # The check itself can fail: a visibility the extension does not define is reported.
    assert errors("McpUiToolMeta", {"resourceUri": "ui://x", "visibility": ["user"]})


def test_the_csp_allows_nothing_undeclared() -> None:
    default = app_csp_header(None)
    assert "connect-src 'none'" in default and "frame-src 'none'" in default
    assert "object-src 'none'" in default and "default-src 'none'" in default
    # A declared "origin" cannot smuggle in a directive of its own.
    sneaky = app_csp_header(
        AppCsp(connect_domains=["https://a.example; script-src *", "https://b.example"])
    )
    assert "script-src *" not in sneaky
    assert "connect-src https://b.example;" in sneaky


def test_registration_refuses_what_a_host_could_not_render(tmp_path: Path) -> None:
    server = Server("bad")
    with pytest.raises(ValueError, match="ui://"):
        server.app_resource("https://example.com/app", "<p>")
    with pytest.raises(ValueError, match="ui://"):
        server.add_tool(lambda: "x", name="t", app="https://example.com/app")
    with pytest.raises(ValueError, match=r"index\.html"):
        server.app_resource("ui://empty", tmp_path)


async def test_a_directory_bundle_is_inlined(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(
        '<!doctype html><link rel="stylesheet" href="style.css">'
        '<script src="app.js"></script><img src="dot.png" alt="dot">'
        '<script src="https://cdn.example.com/lib.js"></script>'
        '<script src="../outside.js"></script>'
    )
    (tmp_path / "style.css").write_text("p { color: red }")
    (tmp_path / "app.js").write_text("document.title = '</script>';")
    (tmp_path / "dot.png").write_bytes(b"\x89PNG....")
    (tmp_path.parent / "outside.js").write_text("secret()")
    server = Server("bundle")
    server.app_resource("ui://bundle", tmp_path)
    async with Client(server, apps=True) as client:
        html = (await client.read_app("ui://bundle")).html
        assert "<style>p { color: red }</style>" in html
        assert "<script>document.title = '<\\/script>';</script>" in html
        assert 'src="data:image/png;base64,' + base64.b64encode(b"\x89PNG....").decode() in html
        # Remote scripts stay as written (the CSP decides); files outside are never read.
        assert '<script src="https://cdn.example.com/lib.js"></script>' in html
        assert "secret()" not in html
        # Edited on disk: the next read serves the new file.
        (tmp_path / "style.css").write_text("p { color: blue }")
        assert "color: blue" in (await client.read_app("ui://bundle")).html


async def test_a_view_served_as_another_type_is_refused() -> None:
    server = Server("liar")
    server.add_resource("ui://liar", "<p>", mime_type="text/html")
    async with Client(server, apps=True) as client:
        with pytest.raises(InvalidResponse, match="profile=mcp-app"):
            await client.read_app("ui://liar")
