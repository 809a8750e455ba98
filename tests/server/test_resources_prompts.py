"""Resources, templates, subscriptions, prompts, completion, logging and pagination, end to end."""

from __future__ import annotations

import base64
import logging
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from tests.server._harness import connect

from mcpkit import Context, Server
from mcpkit._exceptions import InvalidParams, MethodNotFound, ProtocolError
from mcpkit.types import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

pytestmark = pytest.mark.anyio


def resource_server(**kw: Any) -> Server:
    server = Server("res", **kw)

    @server.resource(
        "test://text", mime_type="text/plain", title="Text", annotations={"priority": 0.8}
    )
    def text() -> str:
        """Some text."""
        return "hello"

    @server.resource("test://bin")
    def binary() -> bytes:
        """Bytes."""
        return b"\x00\x01\xff"

    @server.resource("test://json")
    def data() -> dict[str, Any]:
        """JSON."""
        return {"a": 1}

    @server.resource("test://many")
    def many() -> list[TextResourceContents]:
        """Several contents."""
        return [
            TextResourceContents(uri="test://many#1", text="one", mime_type="text/plain"),
            TextResourceContents(uri="test://many#2", text="two", mime_type="text/plain"),
        ]

    @server.resource("test://broken")
    def broken() -> str:
        """Fails."""
        raise RuntimeError("disk on fire at /var/secret")

    @server.resource("items://{item_id}", mime_type="application/json")
    def item(item_id: int) -> dict[str, Any]:
        """An item by number."""
        return {"id": item_id}

    @server.resource("files://{+path}")
    def file(path: str) -> str:
        """A path (reserved expansion)."""
        return f"file {path}"

    @server.resource("search://q{?term,limit}")
    def search(term: str, limit: int = 5, ctx: Context | None = None) -> str:
        """Query parameters."""
        return f"{term}:{limit}"

    server.add_resource("test://static", "fixed", mime_type="text/markdown")
    return server


@pytest.mark.req("RESOURCES-DECLARE-CAPABILITY", "RESOURCES-BINARY-ENCODED")
async def test_list_and_read_every_kind() -> None:
    server = resource_server()
    async with connect(server) as c:
        listed = (await c.call("resources/list"))["resources"]
        by_uri = {r["uri"]: r for r in listed}
        assert by_uri["test://text"] == {
            "uri": "test://text",
            "name": "text",
            "title": "Text",
            "description": "Some text.",
            "mimeType": "text/plain",
            "annotations": {"priority": 0.8},
        }
        assert by_uri["test://static"]["size"] == 5
        templates = (await c.call("resources/templates/list"))["resourceTemplates"]
        assert {t["uriTemplate"] for t in templates} == {
            "items://{item_id}",
            "files://{+path}",
            "search://q{?term,limit}",
        }

        async def read(uri: str) -> list[dict[str, Any]]:
            result: list[dict[str, Any]] = (await c.call("resources/read", {"uri": uri}))[
                "contents"
            ]
            return result

        assert await read("test://text") == [
            {"uri": "test://text", "text": "hello", "mimeType": "text/plain"}
        ]
        b = (await read("test://bin"))[0]
        assert (
            base64.b64decode(b["blob"]) == b"\x00\x01\xff"
            and b["mimeType"] == "application/octet-stream"
        )
        assert await read("test://json") == [
            {"uri": "test://json", "text": '{"a":1}', "mimeType": "application/json"}
        ]
        assert [x["text"] for x in await read("test://many")] == ["one", "two"]
        assert await read("test://static") == [
            {"uri": "test://static", "text": "fixed", "mimeType": "text/markdown"}
        ]
        assert (await read("items://42"))[0]["text"] == '{"id":42}'
        assert (await read("files://a/b/c.txt"))[0]["text"] == "file a/b/c.txt"
        assert (await read("search://q?term=cats"))[0]["text"] == "cats:5"
        assert (await read("search://q?limit=2&term=dogs"))[0]["text"] == "dogs:2"


@pytest.mark.req("RESOURCES-ERRORS", "RESOURCES-VALIDATE-URIS")
async def test_read_errors_are_clear_and_the_server_keeps_serving() -> None:
    server = resource_server()
    async with connect(server) as c:
        with pytest.raises(ProtocolError) as e:
            await c.call("resources/read", {"uri": "test://nope"})
        assert e.value.code == -32002 and e.value.data == {"uri": "test://nope"}
        # A template variable that does not validate: invalid params, naming the problem.
        with pytest.raises(InvalidParams) as e2:
            await c.call("resources/read", {"uri": "items://abc"})
        assert "item_id" in e2.value.message
        # Path traversal never matches.
        for uri in ("files://a/../../etc/passwd", "items://..", "items://%2E%2E"):
            with pytest.raises(ProtocolError) as e3:
                await c.call("resources/read", {"uri": uri})
            assert e3.value.code in (-32002, -32602)
        with pytest.raises(ProtocolError) as e4:
            await c.call("resources/read", {"uri": "test://broken"})
        assert e4.value.code == -32603 and "secret" not in e4.value.message
        with pytest.raises(InvalidParams):
            await c.bad_call("resources/read", {})
        with pytest.raises(InvalidParams):
            await c.bad_call("resources/read", {"uri": 5})
        assert (await c.call("resources/read", {"uri": "test://text"}))["contents"][0][
            "text"
        ] == "hello"


async def test_subscriptions_reach_only_subscribed_sessions() -> None:
    server = resource_server()
    async with connect(server) as a, connect(server) as b:
        assert server.capabilities["resources"] == {"subscribe": True, "listChanged": True}
        assert await a.call("resources/subscribe", {"uri": "test://text"}) == {}
        assert await b.call("resources/subscribe", {"uri": "items://7"}) == {}
        with pytest.raises(ProtocolError) as e:
            await b.call("resources/subscribe", {"uri": "test://unknown"})
        assert e.value.code == -32002
        await server.notify_resource_updated("test://text")
        assert await a.wait_for("notifications/resources/updated") == [{"uri": "test://text"}]
        await server.notify_resource_updated("items://7")
        assert await b.wait_for("notifications/resources/updated") == [{"uri": "items://7"}]
        assert a.of("notifications/resources/updated") == [{"uri": "test://text"}]
        assert await a.call("resources/unsubscribe", {"uri": "test://text"}) == {}
        await server.notify_resource_updated("test://text")
        await server.notify_resource_updated("items://7")
        await b.wait_for("notifications/resources/updated", 2)
        assert len(a.of("notifications/resources/updated")) == 1


@pytest.mark.req("RESOURCES-LIST-CHANGED-NOTIFY", "PROMPTS-LIST-CHANGED-NOTIFY")
async def test_runtime_resource_changes_notify() -> None:
    server = resource_server()
    async with connect(server) as c:
        server.add_resource("test://new", "new")
        server.remove_resource("items://{item_id}")
        await c.wait_for("notifications/resources/list_changed")
        assert "test://new" in [r["uri"] for r in (await c.call("resources/list"))["resources"]]
        with pytest.raises(ProtocolError):
            await c.call("resources/read", {"uri": "items://1"})
        # The server declared no prompts: listing them is refused, and adding one later does
        # not notify a client that was never told prompts exist.
        assert "prompts" not in c.client.server_capabilities

    prompts = Server("p", capabilities={"prompts": {"listChanged": True}})
    async with connect(prompts) as c:
        assert (await c.call("prompts/list"))["prompts"] == []
        prompts.add_prompt(lambda: "hi", name="later")
        await c.wait_for("notifications/prompts/list_changed")
        assert [p["name"] for p in (await c.call("prompts/list"))["prompts"]] == ["later"]
        prompts.remove_prompt("later")
        await c.wait_for("notifications/prompts/list_changed", 2)


def test_resource_registration_errors() -> None:
    server = Server("s")

    def wrong(b: str) -> str:
        return b

    with pytest.raises(TypeError, match="not variables of the template"):
        server.add_resource("x://{a}", wrong)
    with pytest.raises(TypeError, match="takes no arguments"):

        def needs(x: str) -> str:
            return x

        server.add_resource("x://static", needs)
    with pytest.raises(ValueError, match="invalid URI template"):

        def f(a: str) -> str:
            return a

        server.add_resource("x://{a", f)


# ---------------------------------------------------------------------------- prompts


def prompt_server() -> Server:
    server = Server("prompts")

    @server.prompt()
    def simple() -> str:
        """A simple prompt."""
        return "Say hi."

    @server.prompt(title="Review")
    def review(code: str, language: str = "python") -> list[Any]:
        """Review code.

        Args:
            code: the code.
            language: the language.
        """
        return [f"Review this {language}: {code}", {"role": "assistant", "content": "OK."}]

    @server.prompt()
    def rich(uri: str) -> list[PromptMessage]:
        """Embedded resource and image."""
        return [
            PromptMessage(
                role="user",
                content=EmbeddedResource(
                    resource=TextResourceContents(uri=uri, text="body", mime_type="text/plain")
                ),
            ),
            PromptMessage(role="user", content=ImageContent(data="aGk=", mime_type="image/png")),
            PromptMessage(role="assistant", content=TextContent(text="done")),
        ]

    @server.prompt()
    def count(n: int) -> str:
        """Typed argument."""
        return "x" * n

    @server.prompt()
    def explode() -> str:
        """Fails."""
        raise ValueError("internal detail")

    return server


@pytest.mark.req(
    "PROMPTS-DECLARE-CAPABILITY", "PROMPTS-IMAGE-BASE64", "PROMPTS-EMBEDDED-RESOURCE-FIELDS"
)
async def test_prompts_list_and_get() -> None:
    server = prompt_server()
    async with connect(server) as c:
        prompts = {p["name"]: p for p in (await c.call("prompts/list"))["prompts"]}
        assert prompts["simple"] == {"name": "simple", "description": "A simple prompt."}
        assert prompts["review"]["title"] == "Review"
        assert prompts["review"]["arguments"] == [
            {"name": "code", "description": "the code.", "required": True},
            {"name": "language", "description": "the language.", "required": False},
        ]
        r = await c.call("prompts/get", {"name": "simple"})
        assert r["messages"] == [{"role": "user", "content": {"type": "text", "text": "Say hi."}}]
        r = await c.call(
            "prompts/get", {"name": "review", "arguments": {"code": "x=1", "language": "go"}}
        )
        assert r["messages"][0]["content"]["text"] == "Review this go: x=1"
        assert r["messages"][1] == {"role": "assistant", "content": {"type": "text", "text": "OK."}}
        r = await c.call("prompts/get", {"name": "rich", "arguments": {"uri": "test://doc"}})
        assert [m["content"]["type"] for m in r["messages"]] == ["resource", "image", "text"]
        assert r["messages"][0]["content"]["resource"]["uri"] == "test://doc"
        r = await c.call("prompts/get", {"name": "count", "arguments": {"n": "3"}})
        assert r["messages"][0]["content"]["text"] == "xxx"


@pytest.mark.req("PROMPTS-ERRORS", "PROMPTS-VALIDATE-ARGUMENTS", "PROMPTS-VALIDATE-IO")
async def test_prompt_errors() -> None:
    server = prompt_server()
    async with connect(server) as c:
        with pytest.raises(InvalidParams) as e:
            await c.call("prompts/get", {"name": "nope"})
        assert "nope" in e.value.message
        with pytest.raises(InvalidParams) as e:
            await c.call("prompts/get", {"name": "review", "arguments": {}})
        assert "code" in e.value.message
        with pytest.raises(InvalidParams) as e:
            await c.call(
                "prompts/get", {"name": "review", "arguments": {"code": "x", "colour": "red"}}
            )
        assert "colour" in e.value.message
        with pytest.raises(InvalidParams) as e:
            await c.call("prompts/get", {"name": "count", "arguments": {"n": "many"}})
        assert "`n`" in e.value.message
        with pytest.raises(InvalidParams):
            await c.bad_call("prompts/get", {"name": "count", "arguments": {"n": 3}})
        with pytest.raises(ProtocolError) as e2:
            await c.call("prompts/get", {"name": "explode"})
        assert e2.value.code == -32603 and "internal detail" not in e2.value.message
        assert (await c.call("prompts/get", {"name": "simple"}))["messages"]


# ---------------------------------------------------------------------------- completion


@pytest.mark.req(
    "COMPLETION-DECLARE-CAPABILITY",
    "COMPLETION-ERRORS",
    "COMPLETION-VALIDATE-INPUTS",
    "COMPLETION-MUST-VALIDATE",
)
async def test_completion_of_prompt_arguments_and_template_variables() -> None:
    server = prompt_server()

    @server.resource("items://{item_id}")
    def item(item_id: str) -> str:
        return item_id

    seen: list[Any] = []

    @server.completion()
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        seen.append(
            (ref.type, argument.name, argument.value, context.arguments if context else None)
        )
        if argument.name == "language":
            return [x for x in ("python", "pyret", "rust") if x.startswith(argument.value)]
        return [str(i) for i in range(250)]

    async with connect(server) as c:
        assert "completions" in server.capabilities
        r = await c.call(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "review"},
                "argument": {"name": "language", "value": "py"},
                "context": {"arguments": {"code": "x"}},
            },
        )
        assert r == {"completion": {"values": ["python", "pyret"], "total": 2, "hasMore": False}}
        r = await c.call(
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "items://{item_id}"},
                "argument": {"name": "item_id", "value": ""},
            },
        )
        assert len(r["completion"]["values"]) == 100
        assert r["completion"]["total"] == 250 and r["completion"]["hasMore"] is True
        assert seen[0] == ("ref/prompt", "language", "py", {"code": "x"})
        with pytest.raises(InvalidParams):
            await c.call(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "nope"},
                    "argument": {"name": "a", "value": ""},
                },
            )
        with pytest.raises(InvalidParams):
            await c.call(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "review"},
                    "argument": {"name": "nope", "value": ""},
                },
            )
        with pytest.raises(InvalidParams):
            await c.call(
                "completion/complete",
                {
                    "ref": {"type": "ref/resource", "uri": "other://{x}"},
                    "argument": {"name": "x", "value": ""},
                },
            )
        with pytest.raises(InvalidParams):
            await c.bad_call("completion/complete", {"ref": {"type": "ref/unknown"}})


async def test_completion_not_declared_without_a_handler() -> None:
    server = prompt_server()
    async with connect(server) as c:
        assert "completions" not in c.client.server_capabilities
        with pytest.raises(MethodNotFound):
            await c.client.engine.request(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "review"},
                    "argument": {"name": "code", "value": ""},
                },
            )


# ---------------------------------------------------------------------------- logging


@pytest.mark.req("LOGGING-DECLARE-CAPABILITY", "LOGGING-ERRORS")
async def test_set_level_filters_context_logging() -> None:
    server = Server("log")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Logs at every level."""
        await ctx.debug("d")
        await ctx.info("i")
        await ctx.warning("w")
        await ctx.error({"code": 1}, logger="db")
        return "ok"

    async with connect(server) as c:
        assert "logging" in c.client.server_capabilities
        await c.tool("chatty")
        await c.wait_for("notifications/message", 4)
        assert await c.call("logging/setLevel", {"level": "warning"}) == {}
        await c.tool("chatty")
        msgs = await c.wait_for("notifications/message", 6)
        assert [m["level"] for m in msgs if m] == [
            "debug",
            "info",
            "warning",
            "error",
            "warning",
            "error",
        ]
        assert msgs[-1] == {"level": "error", "data": {"code": 1}, "logger": "db"}
        with pytest.raises(InvalidParams):
            await c.bad_call("logging/setLevel", {"level": "loud"})


async def test_python_logging_bridge_from_sync_and_async_tools() -> None:
    server = Server("bridge")
    handler = server.bridge_logging("bridge-test")
    log = logging.getLogger("bridge-test")
    log.setLevel(logging.DEBUG)

    @server.tool()
    def sync_tool() -> str:
        """Logs from a worker thread."""
        log.warning("from a thread")
        return "ok"

    @server.tool()
    async def async_tool() -> str:
        """Logs from the loop."""
        log.error("from the loop")
        return "ok"

    try:
        async with connect(server) as c:
            await c.tool("sync_tool")
            await c.tool("async_tool")
            msgs = await c.wait_for("notifications/message", 2)
            assert {(m["level"], m["data"], m["logger"]) for m in msgs if m} == {
                ("warning", "from a thread", "bridge-test"),
                ("error", "from the loop", "bridge-test"),
            }
            log.error("outside any request: not sent")
            await c.tool("async_tool")
            await c.wait_for("notifications/message", 3)
            assert len(c.of("notifications/message")) == 3
    finally:
        log.removeHandler(handler)


# ---------------------------------------------------------------------------- pagination


@pytest.mark.req(
    "PAGINATION-STABLE-CURSORS",
    "PAGINATION-INVALID-CURSOR-GRACEFUL",
    "PAGINATION-INVALID-CURSOR-32602",
)
async def test_pagination_on_every_list() -> None:
    server = Server("pages", page_size=3)
    for i in range(7):
        server.add_tool(lambda: "x", name=f"t{i}")
        server.add_resource(f"r://{i}", f"r{i}")
        server.add_prompt(lambda: "x", name=f"p{i}")

        def tmpl(v: str) -> str:
            return v

        server.add_resource(f"t{i}://{{v}}", tmpl, name=f"tmpl{i}")

    async with connect(server) as c:
        for method, key in (
            ("tools/list", "tools"),
            ("resources/list", "resources"),
            ("resources/templates/list", "resourceTemplates"),
            ("prompts/list", "prompts"),
        ):
            seen: list[Any] = []
            cursor = None
            pages = 0
            while True:
                page = await c.call(method, {"cursor": cursor} if cursor else {})
                pages += 1
                assert len(page[key]) <= 3
                seen += page[key]
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
            assert pages == 3 and len(seen) == 7, method
            with pytest.raises(InvalidParams):
                await c.call(method, {"cursor": "not-a-cursor"})
            # A cursor from another list is not valid here either.
            other = "prompts/list" if method != "prompts/list" else "tools/list"
            foreign = (await c.call(other))["nextCursor"]
            with pytest.raises(InvalidParams):
                await c.call(method, {"cursor": foreign})


async def test_without_page_size_everything_comes_in_one_page() -> None:
    server = Server("one")
    for i in range(150):
        server.add_tool(lambda: "x", name=f"t{i}")
    async with connect(server) as c:
        page = await c.call("tools/list")
        assert len(page["tools"]) == 150 and "nextCursor" not in page
        with pytest.raises(InvalidParams):
            await c.call("tools/list", {"cursor": "bogus"})


@pytest.mark.req("PROMPTS-RESPECT-CAPABILITIES")
async def test_capabilities_derived_from_registrations() -> None:
    server = Server("empty")
    async with connect(server) as c:
        assert c.client.server_capabilities == {"logging": {}}
        with pytest.raises(MethodNotFound):
            await c.client.engine.request("tools/list", {})
    info_server = Server(
        "info",
        "2.0",
        title="Info",
        description="d",
        icons=[{"src": "https://x/i.png"}],
        website_url="https://x",
        instructions="use me",
    )
    async with connect(info_server) as c:
        assert c.client.server_info == {
            "name": "info",
            "version": "2.0",
            "title": "Info",
            "description": "d",
            "icons": [{"src": "https://x/i.png"}],
            "websiteUrl": "https://x",
        }
        assert c.client.initialize_result is not None
        assert c.client.initialize_result["instructions"] == "use me"
    await anyio.lowlevel.checkpoint()


async def test_failures_in_resources_prompts_and_completion_never_stop_the_server() -> None:
    server = Server("fragile")

    @server.resource("x://exit")
    def exits() -> str:
        raise SystemExit(1)

    @server.prompt()
    def exits_prompt() -> str:
        """Exits."""
        raise SystemExit(2)

    @server.resource("x://{a}")
    def templ(a: str) -> str:
        return a

    @server.completion()
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        raise RuntimeError("completion bug")

    async with connect(server) as c:
        for method, params in (
            ("resources/read", {"uri": "x://exit"}),
            ("prompts/get", {"name": "exits_prompt"}),
            (
                "completion/complete",
                {
                    "ref": {"type": "ref/resource", "uri": "x://{a}"},
                    "argument": {"name": "a", "value": ""},
                },
            ),
        ):
            with pytest.raises(ProtocolError):
                await c.call(method, params)
        with pytest.raises(ProtocolError) as e:
            await c.call("resources/read", {"uri": "x://exit"})
        assert e.value.code == -32603


async def test_metadata_of_resources_templates_and_prompts_and_every_prompt_block() -> None:
    # Issue 3: resources carry mimeType, size, annotations, icons (and _meta); prompts carry
    # title, icons, _meta and messages with any content block.
    icon = {"src": "https://example.com/r.png", "mimeType": "image/png", "sizes": ["16x16"]}
    server = Server("meta")

    def eight() -> str:
        return "12345678"

    server.add_resource(
        "test://sized",
        eight,
        name="sized",
        title="Sized",
        description="Declared size.",
        mime_type="text/plain",
        size=8,
        annotations={"audience": ["user"], "priority": 0.5},
        icons=[icon],
        meta={"example.com/kind": "doc"},
    )

    @server.resource(
        "rows://{table}/{id}",
        title="Row",
        mime_type="application/json",
        annotations={"audience": ["assistant"]},
        icons=[icon],
        meta={"example.com/kind": "row"},
    )
    def row(table: str, id: int) -> dict[str, Any]:
        """A row."""
        return {"table": table, "id": id}

    @server.prompt(title="Every block", icons=[icon], meta={"example.com/p": True})
    def blocks(uri: str) -> list[PromptMessage]:
        """One message per content block type."""
        return [
            PromptMessage(role="user", content=TextContent(text="t")),
            PromptMessage(role="user", content=ImageContent(data="aGk=", mime_type="image/png")),
            PromptMessage(role="user", content=AudioContent(data="aGk=", mime_type="audio/wav")),
            PromptMessage(role="user", content=ResourceLink(uri=uri, name="linked")),
            PromptMessage(
                role="assistant",
                content=EmbeddedResource(
                    resource=BlobResourceContents(uri=uri, blob="aGk=", mime_type="image/png")
                ),
            ),
        ]

    async with connect(server) as c:
        (res,) = (await c.call("resources/list"))["resources"]
        assert res == {
            "uri": "test://sized",
            "name": "sized",
            "title": "Sized",
            "description": "Declared size.",
            "mimeType": "text/plain",
            "size": 8,
            "annotations": {"audience": ["user"], "priority": 0.5},
            "icons": [icon],
            "_meta": {"example.com/kind": "doc"},
        }
        (tmpl,) = (await c.call("resources/templates/list"))["resourceTemplates"]
        assert tmpl == {
            "uriTemplate": "rows://{table}/{id}",
            "name": "row",
            "title": "Row",
            "description": "A row.",
            "mimeType": "application/json",
            "annotations": {"audience": ["assistant"]},
            "icons": [icon],
            "_meta": {"example.com/kind": "row"},
        }
        read = await c.call("resources/read", {"uri": "rows://users/7"})
        assert read["contents"] == [
            {
                "uri": "rows://users/7",
                "mimeType": "application/json",
                "text": '{"table":"users","id":7}',
            }
        ]
        (prompt,) = (await c.call("prompts/list"))["prompts"]
        assert prompt["title"] == "Every block"
        assert prompt["icons"] == [icon]
        assert prompt["_meta"] == {"example.com/p": True}
        got = await c.call("prompts/get", {"name": "blocks", "arguments": {"uri": "test://sized"}})
        assert [m["content"]["type"] for m in got["messages"]] == [
            "text",
            "image",
            "audio",
            "resource_link",
            "resource",
        ]
        assert got["messages"][2]["content"]["mimeType"] == "audio/wav"
        assert got["messages"][3]["content"] == {
            "type": "resource_link",
            "uri": "test://sized",
            "name": "linked",
        }
        assert got["messages"][4]["content"]["resource"]["blob"] == "aGk="


async def test_registrations_without_decorators_accept_lambdas_with_names() -> None:
    server = Server("plain")
    server.add_resource("test://lambda", lambda: "from a lambda", name="from-lambda")
    server.add_tool(lambda: "tool", name="lambda_tool")
    server.add_prompt(lambda: "prompt", name="lambda_prompt")
    with pytest.raises(ValueError, match="give a name"):
        server.add_resource("test://nameless", lambda: "x")
    async with connect(server) as c:
        listed = (await c.call("resources/list"))["resources"]
        assert [r["name"] for r in listed] == ["from-lambda"]
        read = await c.call("resources/read", {"uri": "test://lambda"})
        assert read["contents"][0]["text"] == "from a lambda"
        called = await c.tool("lambda_tool")
        assert called["content"] == [{"type": "text", "text": "tool"}]
        got = await c.call("prompts/get", {"name": "lambda_prompt"})
        assert got["messages"][0]["content"]["text"] == "prompt"
