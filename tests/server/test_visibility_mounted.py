"""``ctx.enable``/``ctx.disable`` in a tool of a server mounted in process: the names it
gives are its own (``status``, ``config://app``), mapped to what the hub serves them as
(``c_status``, ``config://c/app``), through nested mounts too; the hub's own component of
the same name is untouched, other sessions see nothing of it, and the session is told."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.server._harness import Connected, connect

from mcpkit import Context, ProtocolError, Server

pytestmark = pytest.mark.anyio


def child_server() -> Server:
    child = Server("child")

    @child.tool()
    def status() -> str:
        """Say how the child is."""
        return "child fine"

    @child.tool()
    async def hide_status(ctx: Context) -> str:
        """Hide this server's status tool from the session."""
        await ctx.disable(names={"status"})
        return "hidden"

    @child.tool()
    async def unlock(ctx: Context) -> str:
        """Show the session this server's config, user template and audit prompt."""
        await ctx.enable(names={"config://app", "users://{uid}", "audit"})
        return "unlocked"

    @child.resource("config://app", tags={"admin"})
    def config() -> str:
        """The child's configuration."""
        return "debug=false"

    @child.resource("users://{uid}", tags={"admin"})
    def user(uid: str) -> str:
        """A user."""
        return f"user {uid}"

    @child.prompt(tags={"admin"})
    def audit() -> str:
        """Audit the child."""
        return "audit"

    return child


def hub_server() -> Server:
    hub = Server("hub")

    @hub.tool()
    def status() -> str:
        """The hub's own status tool, named as the child's is inside it."""
        return "hub fine"

    hub.mount(child_server(), prefix="c")
    hub.disable(tags={"admin"})
    return hub


async def names(c: Connected, kind: str) -> list[str]:
    key = {"resources/templates": "resourceTemplates"}.get(kind, kind)
    field = {"resources": "uri", "resources/templates": "uriTemplate"}.get(kind, "name")
    return [item[field] for item in (await c.call(f"{kind}/list"))[key]]


async def unknown(c: Connected, name: str) -> str:
    with pytest.raises(ProtocolError) as caught:
        await c.tool(name, {})
    return caught.value.message


async def test_a_mounted_servers_tool_names_its_own_components() -> None:
    async with connect(hub_server()) as mine, connect(hub_server()) as other:
        assert await names(mine, "tools") == ["status", "c_status", "c_hide_status", "c_unlock"]
        assert (await mine.tool("c_hide_status"))["content"][0]["text"] == "hidden"
        await mine.wait_for("notifications/tools/list_changed")
        # The child's status tool, as the hub names it: not the hub's own "status".
        assert await names(mine, "tools") == ["status", "c_hide_status", "c_unlock"]
        assert await unknown(mine, "c_status") == "Unknown tool: c_status"
        assert (await mine.tool("status"))["content"][0]["text"] == "hub fine"
        assert "c_status" in await names(other, "tools")

        assert await names(mine, "resources") == []
        await mine.tool("c_unlock")
        await mine.wait_for("notifications/resources/list_changed")
        await mine.wait_for("notifications/prompts/list_changed")
        assert await names(mine, "resources") == ["config://c/app"]
        assert await names(mine, "resources/templates") == ["users://c/{uid}"]
        assert await names(mine, "prompts") == ["c_audit"]
        read = await mine.call("resources/read", {"uri": "users://c/7"})
        assert read["contents"][0]["text"] == "user 7"
        assert await names(other, "prompts") == []


async def test_names_are_mapped_through_nested_mounts() -> None:
    mid = Server("mid")
    mid.mount(child_server(), prefix="c")
    top = Server("top")
    top.mount(mid, prefix="m")
    async with connect(top) as c:
        assert "m_c_status" in await names(c, "tools")
        await c.tool("m_c_hide_status")
        with anyio.fail_after(5):
            await c.wait_for("notifications/tools/list_changed")
        assert await names(c, "tools") == ["m_c_hide_status", "m_c_unlock"]
        await c.tool("m_c_unlock")
        assert await names(c, "resources") == ["config://m/c/app"]


async def test_without_a_mount_the_names_are_the_servers_own() -> None:
    child = child_server()
    async with connect(child) as c:
        await c.tool("hide_status")
        tools: Any = await names(c, "tools")
        assert tools == ["hide_status", "unlock"]
