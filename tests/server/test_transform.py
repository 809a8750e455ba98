"""Tool transformation (issue 46): tools derived from registered, mounted and remote ones
(renamed, described anew, arguments renamed, hidden, given defaults, wrapped by a function
that forwards), and prompts and resources served as tools; in both eras, through real
clients (every message of the harness's exchanges checked against the official schema),
one of them over a stdio subprocess mounted as a remote server.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests._schema import schema_errors
from tests.server._harness import connect

from mcpkit import ArgTransform, Client, Context, Server, ToolError, forward, forward_raw
from mcpkit.types import CallToolResult, TextContent

pytestmark = pytest.mark.anyio
REVISIONS = ["2025-11-25", "2026-07-28"]
TIMEOUT = 30


def _server() -> Server:
    server = Server("library")

    @server.tool()
    def search(q: str, index: str, limit: int = 10) -> list[str]:
        """Search an index."""
        return [f"{index}:{q}:{limit}"]

    @server.tool()
    async def whoami(ctx: Context, greeting: str = "hi") -> str:
        """Which server serves the call."""
        return f"{greeting} from {ctx.server.name}"

    server.transform_tool(
        "search",
        name="find_books",
        title="Find books",
        description="Find books by title.",
        arguments={
            "q": ArgTransform(name="query", description="A title"),
            "index": ArgTransform(hide=True, default="books"),
            "limit": ArgTransform(default=3),
        },
    )
    server.transform_tool(
        "whoami",
        name="hello",
        keep_original=True,
        arguments={"greeting": ArgTransform(hide=True, default="hello")},
    )

    async def careful(query: str, loud: bool = False) -> CallToolResult:
        if not query.strip():
            raise ToolError("say what to look for")
        result = await forward(query=query)
        if loud:
            data: Any = result.structured_content
            shouted = [s.upper() for s in data["result"]]
            return CallToolResult(
                content=[TextContent(type="text", text=str(shouted))],
                structured_content={"result": shouted},
            )
        return result

    server.transform_tool("find_books", name="careful_find", fn=careful, keep_original=True)

    async def raw(query: str) -> CallToolResult:
        return await forward_raw(query=query.upper(), limit=1)  # find_books' own names

    server.transform_tool("find_books", name="raw_find", fn=raw, keep_original=True)

    def shout(greeting: str = "hey") -> str:  # a sync wrapper: it replaces the source
        return greeting.upper()

    server.transform_tool("whoami", name="shout", fn=shout, keep_original=True)
    # From the source find_books took out of the list: a second tool derived from it.
    server.transform_tool(
        "search",
        name="find_films",
        arguments={
            "index": ArgTransform(hide=True, default_factory=lambda: "films"),
            "limit": ArgTransform(required=True, description="How many"),
        },
    )

    async def quick(query: str) -> CallToolResult:  # limit left out: forward gives 1
        return await forward(query=query)

    server.transform_tool(
        "search",
        name="quick_find",
        fn=quick,
        arguments={
            "q": ArgTransform(name="query"),
            "index": ArgTransform(hide=True, default="quick"),
            "limit": ArgTransform(default=1),
        },
    )
    return server


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_derived_tool_is_listed_and_served_in_both_eras(revision: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(_server(), protocol_version=revision) as client:
            listed = await client.send_request("tools/list", None)
            found = await client.call_tool("find_books", {"query": "dune"})
            more = await client.call_tool("find_books", {"query": "dune", "limit": 5})
            old_name = await client.call_tool("find_books", {"q": "dune"})
            hidden = await client.call_tool("find_books", {"query": "x", "index": "films"})
            hello = await client.call_tool("hello", {})
            film = await client.call_tool("find_films", {"q": "alien", "limit": 2})
            whoami = await client.call_tool("whoami", {"greeting": "yo"})
    tools = {t["name"]: t for t in listed["tools"]}
    assert list(tools) == [
        "find_books",
        "whoami",
        "hello",
        "careful_find",
        "raw_find",
        "shout",
        "find_films",
        "quick_find",
    ]
    book = tools["find_books"]
    assert book["title"] == "Find books" and book["description"] == "Find books by title."
    assert book["inputSchema"] == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "A title"},
            "limit": {"type": "integer", "default": 3},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert book["outputSchema"]["properties"]["result"]["type"] == "array"  # the source's
    assert tools["hello"]["inputSchema"]["properties"] == {}
    films = tools["find_films"]["inputSchema"]
    assert films["required"] == ["q", "limit"]
    assert films["properties"]["limit"] == {"type": "integer", "description": "How many"}
    for tool in listed["tools"]:
        assert schema_errors(revision, "Tool", tool) == [], tool["name"]
    assert found.structured_content == {"result": ["books:dune:3"]}
    assert more.structured_content == {"result": ["books:dune:5"]}
    assert old_name.is_error
    assert _text(old_name).startswith(
        "Invalid arguments for tool 'find_books':\n"
        "- unknown argument `q` (accepted: `query`, `limit`)\n"
    )
    assert hidden.is_error and "unknown argument `index`" in _text(hidden)
    assert _text(hello) == "hello from library"  # the source's Context reaches it
    assert film.structured_content == {"result": ["films:alien:2"]}
    assert _text(whoami) == "yo from library"  # kept beside it


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_wrapping_function_forwards_to_the_source(revision: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(_server(), protocol_version=revision) as client:
            tools = {t.name: t for t in await client.list_tools()}
            plain = await client.call_tool("careful_find", {"query": "dune"})
            loud = await client.call_tool("careful_find", {"query": "dune", "loud": True})
            refused = await client.call_tool("careful_find", {"query": "  "})
            raw = await client.call_tool("raw_find", {"query": "raw"})
            sync = await client.call_tool("shout", {"greeting": "oi"})
            quick = await client.call_tool("quick_find", {"query": "q"})
    schema = tools["careful_find"].input_schema.model_dump(by_alias=True, exclude_none=True)
    # fn's signature decides: ``limit`` left out (the source's default), ``loud`` its own.
    assert set(schema["properties"]) == {"query", "loud"} and schema["required"] == ["query"]
    assert plain.structured_content == {"result": ["books:dune:3"]}
    assert loud.structured_content == {"result": ["BOOKS:DUNE:3"]}
    assert refused.is_error and _text(refused) == "say what to look for"
    assert raw.structured_content == {"result": ["books:RAW:1"]}
    assert _text(sync) == "OI"
    assert quick.structured_content == {"result": ["quick:q:1"]}


def test_hostile_transforms_are_refused_at_transform_time() -> None:
    server = _server()
    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"source": "nope"}, ValueError, r"no tool named 'nope' to transform \(tools: "),
        (
            {"source": "search", "name": "s2", "arguments": {"index": ArgTransform(hide=True)}},
            ValueError,
            "argument 'index' is required: hiding it needs a value",
        ),
        (
            {"source": "search", "name": "s2", "arguments": {"q": ArgTransform(name="index")}},
            ValueError,
            "arguments 'q' and 'index' would both be named 'index'",
        ),
        (
            {"source": "search", "name": "s2", "arguments": {"z": ArgTransform(name="y")}},
            ValueError,
            r"tool 'search' has no argument 'z' \(its arguments: q, index, limit\)",
        ),
        (
            {"source": "search", "name": "s2", "arguments": {"limit": ArgTransform(default="x")}},
            ValueError,
            "the default 'x' of argument 'limit' does not fit its schema",
        ),
        ({"source": "search", "name": "whoami"}, ValueError, "'whoami' is already registered"),
        ({"source": "search", "keep_original": True}, ValueError, "needs a new name"),
        ({"source": "search", "name": "bad name"}, ValueError, "invalid tool name"),
        ({"source": "search", "name": "s2", "fn": lambda: 1}, TypeError, "source requires"),
    ]
    for kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            server.transform_tool(**kwargs)
    with pytest.raises(ValueError, match="default or default_factory, not both"):
        ArgTransform(default=1, default_factory=lambda: 2)
    assert "s2" not in server.registry.tools and "search" not in server.registry.tools
    with pytest.raises(RuntimeError, match="await it in the async function"):
        anyio.run(forward)


async def test_run_time_transforms_announce_the_change_and_end_with_removal() -> None:
    server = _server()
    async with connect(server) as c:
        server.transform_tool("whoami", name="who", description="Who serves you.")
        await c.wait_for("notifications/tools/list_changed")
        names = [t["name"] for t in (await c.call("tools/list"))["tools"]]
        assert "who" in names and "whoami" not in names
        assert names.index("who") == 1  # in its source's place
        assert (await c.tool("who", {"greeting": "hey"}))["content"][0]["text"] == (
            "hey from library"
        )
        server.remove_tool("who")  # the rule ends; the original is served again
        await c.wait_for("notifications/tools/list_changed", 2)
        names = [t["name"] for t in (await c.call("tools/list"))["tools"]]
        assert "whoami" in names and "who" not in names


async def test_a_run_time_transform_is_told_to_a_client_of_2026_07_28() -> None:
    server = _server()
    changed = anyio.Event()

    async def on_change(kind: str) -> None:
        changed.set()

    with anyio.fail_after(TIMEOUT):
        async with Client(
            server, protocol_version="2026-07-28", list_changed_handler=on_change
        ) as client:
            before = {t.name for t in await client.list_tools()}
            server.transform_tool("whoami", name="who")
            await changed.wait()
            after = {t.name for t in await client.list_tools(use_cache=False)}
    assert after ^ before == {"who", "whoami"} and "who" in after


def _child() -> Server:
    child = Server("child")

    @child.tool()
    async def forecast(ctx: Context, city: str, days: int = 3) -> str:
        """The weather."""
        return f"{ctx.server.name}: sunny in {city} for {days} days"

    return child


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_mounted_servers_tool_transformed_follows_its_changes(revision: str) -> None:
    child = _child()
    hub = Server("hub")
    hub.mount(child, prefix="kid")
    hub.transform_tool(
        "kid_forecast", name="weather", arguments={"city": ArgTransform(name="town")}
    )
    hub.transform_tool("weather", arguments={"days": ArgTransform(hide=True, default=1)})
    with anyio.fail_after(TIMEOUT):
        async with Client(hub, protocol_version=revision) as client:
            first = await client.call_tool("weather", {"town": "Oslo"})
            child.add_tool(lambda: "new", name="later")  # the child's change re-lists
            names = {t.name for t in await client.list_tools(use_cache=False)}
            again = await client.call_tool("weather", {"town": "Rome"})
            child.remove_tool("forecast")
            gone = {t.name for t in await client.list_tools(use_cache=False)}
    assert _text(first) == "child: sunny in Oslo for 1 days"  # the child's own Context
    assert names == {"weather", "kid_later"}
    assert _text(again) == "child: sunny in Rome for 1 days"
    assert gone == {"kid_later"}  # its source gone, the derived tool is too


def _prompts_and_resources() -> Server:
    server = Server("docs", exclude_tags={"secret"})

    @server.prompt()
    def review(code: str) -> str:
        """Ask for a review."""
        return f"Please review: {code}"

    @server.prompt(tags={"secret"})
    def hidden() -> str:
        return "not for you"

    server.add_resource("docs://hidden", "not for you", tags={"secret"})

    server.add_resource("docs://readme", "# Read me", mime_type="text/markdown")
    server.add_resource("img://dot", b"\x89PNG", mime_type="image/png")

    @server.resource("notes://{id}")
    def note(id: str) -> str:
        return f"note {id}"

    server.add_prompts_as_tools()
    server.add_resources_as_tools()
    return server


@pytest.mark.parametrize("revision", REVISIONS)
async def test_prompts_and_resources_served_as_tools(revision: str) -> None:
    async def call(name: str, arguments: dict[str, Any]) -> Any:
        result = await client.send_request("tools/call", {"name": name, "arguments": arguments})
        for block in result["content"]:  # (the client keeps resultType to itself)
            assert schema_errors(revision, "ContentBlock", block) == [], block
        return result

    with anyio.fail_after(TIMEOUT):
        async with Client(_prompts_and_resources(), protocol_version=revision) as client:
            tools = (await client.send_request("tools/list", None))["tools"]
            prompts = await call("list_prompts", {})
            got = await call("get_prompt", {"name": "review", "arguments": {"code": "x = 1"}})
            missing = await call("get_prompt", {"name": "review"})
            unknown = await call("get_prompt", {"name": "nope"})
            listed = await call("list_resources", {})
            readme = await call("read_resource", {"uri": "docs://readme"})
            image = await call("read_resource", {"uri": "img://dot"})
            templated = await call("read_resource", {"uri": "notes://7"})
            absent = await call("read_resource", {"uri": "docs://absent"})
            secret = await call("read_resource", {"uri": "docs://hidden"})
            hidden = await call("get_prompt", {"name": "hidden"})
    for tool in tools:
        assert schema_errors(revision, "Tool", tool) == [], tool["name"]
    assert [t["name"] for t in tools] == [
        "list_prompts",
        "get_prompt",
        "list_resources",
        "read_resource",
    ]
    assert all(t["annotations"]["readOnlyHint"] for t in tools)
    assert [p["name"] for p in prompts["structuredContent"]["prompts"]] == ["review"]
    message = got["structuredContent"]["messages"][0]
    assert message["content"]["text"] == "Please review: x = 1"
    assert missing["isError"] and "needs argument(s) code" in missing["content"][0]["text"]
    assert unknown["isError"] and unknown["content"][0]["text"] == (
        "Unknown prompt 'nope' (prompts: review)"
    )
    structured = listed["structuredContent"]
    assert [r["uri"] for r in structured["resources"]] == ["docs://readme", "img://dot"]
    assert [t["uriTemplate"] for t in structured["resourceTemplates"]] == ["notes://{id}"]
    assert readme["content"] == [{"type": "text", "text": "# Read me"}]
    assert image["content"][0]["type"] == "image"
    assert image["content"][0]["mimeType"] == "image/png"
    assert templated["content"] == [{"type": "text", "text": "note 7"}]
    assert absent["isError"] and "Unknown resource 'docs://absent'" in absent["content"][0]["text"]
    # What the server hides from a request is hidden through the tools too.
    assert secret["isError"] and "Unknown resource 'docs://hidden'" in secret["content"][0]["text"]
    assert hidden["isError"] and hidden["content"][0]["text"].startswith("Unknown prompt 'hidden'")


REMOTE = textwrap.dedent(
    '''
    from mcpkit import Server

    server = Server("remote")


    @server.tool()
    def lookup(key: str, table: str = "main") -> str:
        """Look a key up."""
        return f"{table}[{key}]"


    if __name__ == "__main__":
        server.run()
    '''
)


async def test_a_proxied_servers_tool_over_stdio_is_transformed_once_listed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "remote.py"
    script.write_text(REMOTE)
    hub = Server("hub")
    hub.mount(Client([sys.executable, str(script)]))  # no prefix: the hub proxies it
    # Not listed yet (the mount connects when the hub starts): the rules wait for it.
    hub.transform_tool(
        "lookup",
        name="find",
        description="Find a key.",
        arguments={"key": ArgTransform(name="id"), "table": ArgTransform(hide=True, default="t")},
    )
    hub.transform_tool("elsewhere", name="x")  # never listed: logged once listed without it
    with anyio.fail_after(TIMEOUT):
        async with Client(hub) as client:
            listed = await client.send_request("tools/list", None)
            found = await client.call_tool("find", {"id": "k"})
            refused = await client.call_tool("find", {"key": "k"})
    assert [t["name"] for t in listed["tools"]] == ["find"]
    assert listed["tools"][0]["description"] == "Find a key."
    assert schema_errors("2026-07-28", "Tool", listed["tools"][0]) == []
    assert _text(found) == "t[k]"
    assert refused.is_error and "unknown argument `key` (accepted: `id`)" in _text(refused)
    told = [r.getMessage() for r in caplog.records if "to transform" in r.getMessage()]
    assert told == ["tool transform 'x': no tool 'elsewhere' to transform"]


def test_a_name_no_remote_mount_can_list_is_refused_at_once() -> None:
    hub = Server("hub")
    hub.mount(Client([sys.executable, "-c", "pass"]), prefix="r")  # never started here
    hub.transform_tool("r_anything", name="later")  # r_ names: listed once it connects
    with pytest.raises(ValueError, match="no tool named 'elsewhere' to transform"):
        hub.transform_tool("elsewhere", name="x")
