"""Tags, versions and visibility through a real client: tags and versions listed in
``_meta``, components enabled and disabled by name, tag, kind and version (server-wide, and
per session from a tool), hidden ones answered as unknown ones, list changes told, under
both eras (2025-11-25 in memory; 2026-07-28 over the in-process HTTP app), every message
checked against the schema."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import pytest
from pydantic import Field
from tests._schema import WireRecorder
from tests.server._harness import Connected, connect

from mcpkit import Client, Context, ProtocolError, Server, http
from mcpkit._server._rules import Rule
from mcpkit._transports import memory_pair
from mcpkit.lowlevel import ASGIClient
from mcpkit.middleware import ListCacheMiddleware

pytestmark = pytest.mark.anyio

TAGS = "io.github.mcpkit/tags"
VERSION = "io.github.mcpkit/version"
MODERN = "2026-07-28"


def build(**options: Any) -> Server:
    server = Server("visible", **options)

    @server.tool(tags={"public"}, version="2.1")
    def status() -> str:
        """Say how things are."""
        return "fine"

    @server.tool(tags={"admin"})
    def wipe() -> str:
        """Wipe everything."""
        return "wiped"

    @server.tool()
    async def login(ctx: Context) -> str:
        """Unlock the admin tools for this session."""
        try:
            await ctx.enable(tags={"admin"})
        except RuntimeError as e:
            return f"refused: {e}"
        return "welcome"

    @server.tool()
    async def logout(ctx: Context) -> str:
        """Lock them again."""
        await ctx.reset_visibility()
        return "bye"

    @server.tool()
    async def hide_status(ctx: Context) -> str:
        """Hide the status tool from this session."""
        await ctx.disable(names={"status"})
        return "hidden"

    @server.resource("config://app", tags={"admin"})
    def config() -> str:
        """The configuration."""
        return "debug=false"

    @server.resource("users://{uid}", tags={"admin"}, version="1")
    def user(uid: str) -> str:
        """A user."""
        return uid

    @server.prompt(tags={"admin"})
    def audit(scope: str) -> str:
        """Audit something."""
        return f"audit {scope}"

    @server.completion()
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        return ["all"]

    return server


@contextlib.asynccontextmanager
async def modern(server: Server) -> AsyncIterator[Client]:
    """A 2026-07-28 client of ``server`` (no handshake), every message schema-checked."""
    client_end, server_end = memory_pair()
    wire = WireRecorder(client_end, side="client")
    async with anyio.create_task_group() as tg, server.running():
        tg.start_soon(server.create_session(server_end).run)
        async with Client(wire, protocol_version=MODERN) as client:
            assert client.protocol_version == MODERN
            yield client
        tg.cancel_scope.cancel()
    await server_end.aclose()
    await client_end.aclose()
    assert wire.check() == MODERN


async def ask(client: Connected | Client, method: str, params: Any = None) -> Any:
    with anyio.fail_after(10):
        if isinstance(client, Connected):
            return await client.client.send_request(method, params)
        return await client.send_request(method, params)


async def names(client: Connected | Client, kind: str = "tools") -> list[str]:
    key = "resourceTemplates" if kind == "resources/templates" else kind.split("/")[0]
    field = "uriTemplate" if key == "resourceTemplates" else "uri" if key == "resources" else "name"
    result = await ask(client, f"{kind}/list")
    return [item[field] for item in result[key]]


async def refused(client: Connected | Client, method: str, params: Any) -> tuple[int, str]:
    with pytest.raises(ProtocolError) as caught:
        await ask(client, method, params)
    return caught.value.code, caught.value.message


async def answers_as_unknown(client: Connected | Client) -> None:
    """Each hidden component is refused exactly as one that does not exist."""
    assert await refused(client, "tools/call", {"name": "wipe"}) == (-32602, "Unknown tool: wipe")
    assert await refused(client, "prompts/get", {"name": "audit", "arguments": {"scope": "x"}}) == (
        -32602,
        "Unknown prompt: audit",
    )
    for uri in ("config://app", "users://7"):
        hidden = await refused(client, "resources/read", {"uri": uri})
        unknown = await refused(client, "resources/read", {"uri": uri.replace("//", "//no")})
        assert hidden[0] == unknown[0]
        assert hidden[1] == unknown[1].replace("//no", "//")
    ref = {"type": "ref/prompt", "name": "audit"}
    argument = {"name": "scope", "value": ""}
    code, message = await refused(client, "completion/complete", {"ref": ref, "argument": argument})
    assert (code, message) == (-32602, "Unknown prompt: audit")


@pytest.mark.parametrize("era", ["2025-11-25", MODERN])
async def test_tags_and_versions_listed_and_server_rules_hide(era: str) -> None:
    server = build(exclude_tags={"admin"})

    @contextlib.asynccontextmanager
    async def client() -> AsyncIterator[Connected | Client]:
        if era == MODERN:
            async with modern(server) as modern_client:
                yield modern_client
        else:
            async with connect(server) as c:
                yield c

    async with client() as c:
        tools = (await ask(c, "tools/list"))["tools"]
        assert [t["name"] for t in tools] == ["status", "login", "logout", "hide_status"]
        assert tools[0]["_meta"] == {TAGS: ["public"], VERSION: "2.1"}
        assert "_meta" not in tools[1]
        assert await names(c, "resources") == []
        assert await names(c, "resources/templates") == []
        assert await names(c, "prompts") == []
        await answers_as_unknown(c)
        # Shown again server-wide: listed with their tags, served.
        server.enable(tags={"admin"})
        templates = (await ask(c, "resources/templates/list"))["resourceTemplates"]
        assert templates[0]["_meta"] == {TAGS: ["admin"], VERSION: "1"}
        assert (await ask(c, "prompts/list"))["prompts"][0]["_meta"] == {TAGS: ["admin"]}
        assert (await ask(c, "resources/list"))["resources"][0]["_meta"] == {TAGS: ["admin"]}
        assert (await ask(c, "resources/read", {"uri": "users://7"}))["contents"][0]["text"] == "7"
        assert (await ask(c, "tools/call", {"name": "wipe"}))["content"][0]["text"] == "wiped"
        # Every criterion must match: a kind and a version narrow a tag.
        server.disable(tags={"admin"}, kinds={"resource"}, versions={"1"})
        assert await names(c, "resources") == ["config://app"]
        assert await names(c, "resources/templates") == []
        server.enable(tags={"public"}, only=True)
        assert await names(c) == ["status"]
        assert await names(c, "prompts") == []
        server.enable()  # everything
        assert len(await names(c)) == 5
        if era == MODERN:  # no session: a tool cannot change what "it" sees
            result = await ask(c, "tools/call", {"name": "login"})
            assert "no session" in result["content"][0]["text"]
            assert "revision 2026-07-28 is sessionless" in result["content"][0]["text"]


async def test_a_session_unlocks_for_itself_and_is_told() -> None:
    # Lists cached by the middleware: per what a session sees, never one session's for another.
    server = build(middleware=[ListCacheMiddleware()])
    server.disable(tags={"admin"})
    async with connect(server) as mine, connect(server) as other:
        assert "wipe" not in await names(mine)
        assert (await mine.tool("login"))["content"][0]["text"] == "welcome"
        # Told which lists changed (tools, resources, prompts), this session only.
        await mine.wait_for("notifications/prompts/list_changed")
        await mine.wait_for("notifications/resources/list_changed")
        await mine.wait_for("notifications/tools/list_changed")
        assert "wipe" in await names(mine)
        assert await names(mine, "prompts") == ["audit"]
        assert (await mine.tool("wipe"))["content"][0]["text"] == "wiped"
        assert "wipe" not in await names(other)
        await answers_as_unknown(other)
        # The session's rules come after the server's: it may also hide what the server shows.
        await mine.tool("hide_status")
        assert await names(mine) == ["wipe", "login", "logout", "hide_status"]
        assert "status" in await names(other)
        await mine.tool("logout")
        await mine.wait_for("notifications/tools/list_changed", 3)
        assert await names(mine) == ["status", "login", "logout", "hide_status"]
        await answers_as_unknown(mine)
        # A server-wide change made since is told to every session.
        server.enable(tags={"admin"})
        await other.wait_for("notifications/tools/list_changed")
        assert "wipe" in await names(other)
        # A change that changes nothing is not told.
        count = len(mine.of("notifications/prompts/list_changed"))
        server.enable(tags={"admin"})
        await mine.tool("status")  # a round trip: anything told before it has arrived
        assert len(mine.of("notifications/prompts/list_changed")) == count
    assert not other.of("notifications/prompts/list_changed")[1:]


async def test_pages_count_only_what_is_shown() -> None:
    server = build(include_tags={"admin", "public"}, page_size=1)
    async with connect(server) as c:
        seen: list[str] = []
        params: dict[str, Any] = {}
        while True:
            page = await ask(c, "tools/list", params)
            seen += [t["name"] for t in page["tools"]]
            if "nextCursor" not in page:
                break
            params = {"cursor": page["nextCursor"]}
        assert seen == ["status", "wipe"]


async def test_a_mounted_server_keeps_its_tags() -> None:
    child = build()
    hub = Server("hub")
    hub.mount(child, prefix="c")
    hub.disable(tags={"admin"})
    async with connect(hub) as c:
        tools = (await ask(c, "tools/list"))["tools"]
        assert [t["name"] for t in tools] == ["c_status", "c_login", "c_logout", "c_hide_status"]
        assert tools[0]["_meta"][TAGS] == ["public"]
        assert await refused(c, "tools/call", {"name": "c_wipe"}) == (
            -32602,
            "Unknown tool: c_wipe",
        )
        # What the mounted server hides itself is hidden here too, and the change told.
        child.disable(names={"status"})
        await c.wait_for("notifications/tools/list_changed")
        assert await names(c) == ["c_login", "c_logout", "c_hide_status"]
        assert await refused(c, "tools/call", {"name": "c_status"}) == (
            -32602,
            "Unknown tool: c_status",
        )


def test_rules_are_checked() -> None:
    server = Server("checks")
    with pytest.raises(TypeError, match="not one string"):
        server.disable(tags="admin")
    with pytest.raises(ValueError, match="unknown kinds"):
        server.disable(kinds={"tools"})
    with pytest.raises(ValueError, match="only=True is for enabling"):
        server.visibility.change(Rule.of(False, tags={"a"}, only=True))
    with pytest.raises(ValueError, match="include_tags is empty"):
        Server("none", include_tags=set())
    with pytest.raises(TypeError, match="not one string"):
        server.add_tool(lambda: 1, name="x", tags="admin")
    with pytest.raises(TypeError, match="version must be a string"):
        server.add_tool(lambda: 1, name="y", version=2)  # type: ignore[arg-type]
    # Repeated changes replace one another: the rules stay as short as what they say.
    for _ in range(3):
        server.disable(tags={"a"})
        server.enable(tags={"a"})
    server.disable(names={"x"})
    assert len(server.visibility.rules) == 2
    server.enable()
    assert len(server.visibility.rules) == 1


async def test_a_hidden_tool_with_header_arguments_is_unknown_over_http() -> None:
    server = Server("routed")

    @server.tool(tags={"internal"})
    def route(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        """A tool whose argument is mirrored into a header."""
        return region

    server.disable(tags={"internal"})
    async with (
        server.running(),
        ASGIClient(server.http_app()) as asgi,
        Client(http("http://127.0.0.1/mcp", http_client=asgi), protocol_version=MODERN) as client,
    ):
        # No Mcp-Param-Region header (the client never saw the tool): not refused for it,
        # but as a tool that does not exist would be.
        with pytest.raises(ProtocolError) as caught:
            await client.send_request(
                "tools/call", {"name": "route", "arguments": {"region": "eu"}}
            )
        assert caught.value.message == "Unknown tool: route"
        server.enable(tags={"internal"})
        assert (await client.call_tool("route", {"region": "eu"})).content[0].text == "eu"
