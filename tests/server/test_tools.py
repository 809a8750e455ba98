"""Tools end to end over a memory pair: listing, calling, results, errors, runtime changes."""

from __future__ import annotations

import dataclasses
import threading
from typing import Annotated, Any, Literal

import anyio
import jsonschema
import pytest
from pydantic import BaseModel, Field
from tests.server._harness import connect
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from mcpkit import Context, Server, ToolError
from mcpkit._exceptions import InvalidParams, ProtocolError, URLElicitationRequired
from mcpkit.types import ImageContent, ToolAnnotations

pytestmark = pytest.mark.anyio


class Point(BaseModel):
    x: int
    y: int = 0


@dataclasses.dataclass
class Box:
    w: float
    h: float


class Movie(TypedDict):
    title: str
    year: int


def make_server(**kw: Any) -> Server:
    server = Server("tools-test", "1.0", **kw)

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    async def add(a: int, b: int = 2) -> int:
        """Add."""
        return a + b

    @server.tool()
    def point(x: int) -> Point:
        """A model result."""
        return Point(x=x, y=x * 2)

    @server.tool()
    def box() -> Box:
        """A dataclass result."""
        return Box(1.5, 2.0)

    @server.tool()
    def movie() -> Movie:
        """A TypedDict result."""
        return {"title": "Alien", "year": 1979}

    @server.tool()
    def untyped(n: int):  # type: ignore[no-untyped-def]
        """No return annotation: a dict becomes structured content without schema."""
        return {"n": n}

    @server.tool()
    def image() -> ImageContent:
        """An image."""
        return ImageContent(data="aGk=", mime_type="image/png")

    @server.tool()
    def mixed() -> list[Any]:
        """Text and an image."""
        return ["hello", ImageContent(data="aGk=", mime_type="image/png")]

    @server.tool()
    def nothing() -> None:
        """Returns nothing."""

    @server.tool()
    def fails_tool_error() -> str:
        """Fails on purpose."""
        raise ToolError("the widget is broken")

    @server.tool()
    def fails_internal() -> str:
        """Fails by accident."""
        raise RuntimeError("secret path /etc/shadow")

    @server.tool()
    def fails_protocol() -> str:
        """Asks for a URL elicitation the JSON-RPC way."""
        raise URLElicitationRequired(message="visit the URL first", data={"elicitations": []})

    @server.tool()
    def thread_of() -> str:
        """The thread it runs in."""
        return threading.current_thread().name

    @server.tool()
    async def loop_thread() -> str:
        """The thread it runs in (async)."""
        return threading.current_thread().name

    @server.tool()
    def constrained(
        name: Annotated[str, Field(description="a name", min_length=2)],
        kind: Literal["a", "b"],
        count: Annotated[int, Field(ge=0, le=10)] = 1,
        where: Point | None = None,
    ) -> str:
        """Constrained arguments.

        Args:
            name: ignored (Field wins).
            kind: which kind.
        """
        return f"{name}:{kind}:{count}:{where}"

    @server.tool()
    async def with_ctx(n: int, ctx: Context) -> str:
        """Uses the context."""
        return f"{n}:{ctx.request_id}:{ctx.client_info['name']}"

    return server


@pytest.mark.req("TOOLS-DECLARE-CAPABILITY", "TOOLS-INPUT-SCHEMA-VALID")
async def test_list_tools_schema_and_descriptions() -> None:
    server = make_server()
    async with connect(server) as c:
        tools = {t["name"]: t for t in (await c.call("tools/list"))["tools"]}
    assert tools["echo"] == {
        "name": "echo",
        "description": "Echo the text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    }
    assert tools["add"]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    # The Context parameter is not part of the schema.
    assert tools["with_ctx"]["inputSchema"]["properties"] == {"n": {"type": "integer"}}
    c_schema = tools["constrained"]["inputSchema"]
    assert c_schema["properties"]["name"]["description"] == "a name"
    assert c_schema["properties"]["name"]["minLength"] == 2
    assert c_schema["properties"]["kind"]["enum"] == ["a", "b"]
    assert c_schema["properties"]["count"]["maximum"] == 10
    assert c_schema["required"] == ["name", "kind"]
    assert "$ref" not in str(c_schema) and "$defs" not in c_schema
    assert tools["point"]["outputSchema"]["properties"]["x"] == {"type": "integer"}
    assert "outputSchema" not in tools["echo"]
    assert "outputSchema" not in tools["image"]


@pytest.mark.req("TOOLS-STRUCTURED-CONFORMS")
async def test_call_results_of_every_kind() -> None:
    server = make_server()
    async with connect(server) as c:
        assert await c.tool("echo", {"text": "hi"}) == {"content": [{"type": "text", "text": "hi"}]}
        assert await c.tool("add", {"a": 1}) == {
            "content": [{"type": "text", "text": "3"}],
            "structuredContent": {"result": 3},
        }
        r = await c.tool("point", {"x": 2})
        assert r["structuredContent"] == {"x": 2, "y": 4}
        assert r["content"][0]["type"] == "text" and '"y":4' in r["content"][0]["text"]
        assert (await c.tool("box"))["structuredContent"] == {"w": 1.5, "h": 2.0}
        assert (await c.tool("movie"))["structuredContent"] == {"title": "Alien", "year": 1979}
        assert (await c.tool("untyped", {"n": 5}))["structuredContent"] == {"n": 5}
        assert (await c.tool("image"))["content"] == [
            {"type": "image", "data": "aGk=", "mimeType": "image/png"}
        ]
        mixed = (await c.tool("mixed"))["content"]
        assert [b["type"] for b in mixed] == ["text", "image"]
        assert await c.tool("nothing") == {"content": []}
        # Structured results conform to the advertised output schemas.
        schemas = {t["name"]: t.get("outputSchema") for t in (await c.call("tools/list"))["tools"]}
        for name, args in (("add", {"a": 1}), ("point", {"x": 3}), ("box", {}), ("movie", {})):
            result = await c.tool(name, args)
            jsonschema.validate(result["structuredContent"], schemas[name])
        # Lax coercion: "5" is an acceptable int.
        assert (await c.tool("add", {"a": "5", "b": 1}))["structuredContent"] == {"result": 6}


async def test_tool_called_without_arguments_member() -> None:
    server = make_server()
    async with connect(server) as c:
        r = await c.call("tools/call", {"name": "box"})
        assert r["structuredContent"] == {"w": 1.5, "h": 2.0}


async def test_sync_tools_run_in_a_worker_thread_async_on_the_loop() -> None:
    server = make_server()
    async with connect(server) as c:
        sync_thread = (await c.tool("thread_of"))["content"][0]["text"]
        loop_thread = (await c.tool("loop_thread"))["content"][0]["text"]
    assert loop_thread == threading.current_thread().name
    assert sync_thread != loop_thread


async def test_errors_are_results_tool_error_shown_internal_masked() -> None:
    server = make_server()
    async with connect(server) as c:
        r = await c.tool("fails_tool_error")
        assert r == {"content": [{"type": "text", "text": "the widget is broken"}], "isError": True}
        r = await c.tool("fails_internal")
        assert r["isError"] is True
        assert "secret" not in r["content"][0]["text"]
        assert "fails_internal" in r["content"][0]["text"]
        # A ProtocolError raised on purpose is a JSON-RPC error.
        with pytest.raises(ProtocolError) as e:
            await c.tool("fails_protocol")
        assert e.value.code == -32042
        # And the server keeps serving.
        assert (await c.tool("echo", {"text": "still here"}))["content"][0]["text"] == "still here"


async def test_unmasked_errors_show_details() -> None:
    server = make_server(mask_errors=False)
    async with connect(server) as c:
        r = await c.tool("fails_internal")
    assert "RuntimeError: secret path" in r["content"][0]["text"]


async def test_unknown_tool_is_invalid_params_naming_it() -> None:
    server = make_server()
    async with connect(server) as c:
        with pytest.raises(InvalidParams) as e:
            await c.tool("no_such_tool", {})
        assert "no_such_tool" in e.value.message
        with pytest.raises(InvalidParams):
            await c.bad_call("tools/call", {"name": 42})
        with pytest.raises(InvalidParams):
            await c.bad_call("tools/call", {"name": "echo", "arguments": [1, 2]})
        assert (await c.tool("echo", {"text": "ok"}))["content"][0]["text"] == "ok"


@pytest.mark.req("TOOLS-SERVER-VALIDATE-INPUTS")
async def test_bad_arguments_are_a_tool_error_naming_each_problem() -> None:
    server = make_server()
    async with connect(server) as c:
        r = await c.tool("constrained", {"name": "x", "kind": "c", "count": 11})
        assert r["isError"] is True
        text = r["content"][0]["text"]
        assert "`name`" in text and "`kind`" in text and "`count`" in text
        r = await c.tool("echo", {})
        assert (
            r["isError"] is True and "missing required argument `text`" in r["content"][0]["text"]
        )
        r = await c.tool("echo", {"text": 3})
        assert r["isError"] is True and "`text`" in r["content"][0]["text"]
        ok = await c.tool("constrained", {"name": "xy", "kind": "a", "where": {"x": 1}})
        assert ok["content"][0]["text"] == "xy:a:1:x=1 y=0"


async def test_context_injection() -> None:
    server = make_server()
    async with connect(server) as c:
        r = await c.tool("with_ctx", {"n": 7})
    n, rid, client = r["content"][0]["text"].split(":")
    assert n == "7" and rid.isdigit() and client == "test-client"


async def test_explicit_schema_kept_exactly_and_enforced() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"pos": {"type": "object", "properties": {"lat": {"type": "number"}}}},
        "properties": {"name": {"type": "string"}, "pos": {"$ref": "#/$defs/pos"}},
        "required": ["name"],
        "additionalProperties": False,
    }
    server = Server("s")

    @server.tool(input_schema=schema)
    def place(name: str, pos: dict[str, Any] | None = None) -> str:
        """Place."""
        return f"{name}@{pos}"

    async with connect(server) as c:
        listed = (await c.call("tools/list"))["tools"][0]["inputSchema"]
        assert listed == schema
        assert (await c.tool("place", {"name": "a", "pos": {"lat": 1}}))["content"][0][
            "text"
        ] == "a@{'lat': 1}"
        bad = await c.tool("place", {"name": "a", "other": 1})
        assert bad["isError"] is True and "other" in bad["content"][0]["text"]
        bad = await c.tool("place", {"pos": {"lat": "north"}})
        assert bad["isError"] is True
        assert "name" in bad["content"][0]["text"] and "north" in bad["content"][0]["text"]


async def test_metadata_annotations_icons_meta_execution() -> None:
    server = Server("s")

    @server.tool(
        name="get.data-v2",
        title="Get data",
        description="Explicit description",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False),
        icons=[{"src": "https://example.com/i.png", "mimeType": "image/png"}],
        meta={"example.com/x": 1},
        task_support="optional",
        output_schema=False,
    )
    def get_data() -> int:
        return 1

    async with connect(server) as c:
        tool = (await c.call("tools/list"))["tools"][0]
        assert tool["name"] == "get.data-v2"
        assert tool["title"] == "Get data"
        assert tool["description"] == "Explicit description"
        assert tool["annotations"] == {"readOnlyHint": True, "destructiveHint": False}
        assert tool["icons"] == [{"src": "https://example.com/i.png", "mimeType": "image/png"}]
        assert tool["_meta"] == {"example.com/x": 1}
        assert tool["execution"] == {"taskSupport": "optional"}
        assert "outputSchema" not in tool
        assert await c.tool("get.data-v2") == {"content": [{"type": "text", "text": "1"}]}


@pytest.mark.req("TOOLS-NAME-LENGTH", "TOOLS-NAME-CHARACTERS", "TOOLS-NAME-NO-SPECIAL")
@pytest.mark.parametrize("name", ["", "has space", "comma,", "x" * 129, "slash/x", "é"])
def test_tool_names_are_validated(name: str) -> None:
    server = Server("s")
    with pytest.raises(ValueError, match="invalid tool name"):
        server.add_tool(lambda: "x", name=name)


@pytest.mark.req("TOOLS-NAME-UNIQUE")
def test_registration_errors_are_clear() -> None:
    server = Server("s")

    def f(*args: Any) -> str:
        return ""

    with pytest.raises(TypeError, match="args"):
        server.add_tool(f)

    @server.tool()
    def dup() -> str:
        return ""

    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(dup)


@pytest.mark.req("TOOLS-LIST-CHANGED-NOTIFY")
async def test_runtime_add_and_remove_send_list_changed() -> None:
    server = make_server()
    async with connect(server) as c:
        assert server.capabilities["tools"] == {"listChanged": True}

        def late() -> str:
            """Late tool."""
            return "late"

        server.add_tool(late)
        await c.wait_for("notifications/tools/list_changed")
        names = [t["name"] for t in (await c.call("tools/list"))["tools"]]
        assert "late" in names
        assert (await c.tool("late"))["content"][0]["text"] == "late"
        server.remove_tool("late")
        await c.wait_for("notifications/tools/list_changed", 2)
        with pytest.raises(InvalidParams):
            await c.tool("late")


async def test_cancellation_stops_the_tool() -> None:
    server = Server("s")
    started = anyio.Event()
    finished = anyio.Event()
    cancelled = anyio.Event()

    @server.tool()
    async def forever() -> str:
        """Never ends."""
        started.set()
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        finished.set()
        return "x"

    async with connect(server) as c:
        with anyio.move_on_after(10) as scope:
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await c.client.send_request("tools/call", {"name": "forever", "arguments": {}})

                tg.start_soon(call)
                await started.wait()
                tg.cancel_scope.cancel()  # the client sends notifications/cancelled
        assert not scope.cancelled_caught
        with anyio.fail_after(5):
            await cancelled.wait()
        assert not finished.is_set()
        assert server.tools[0]["name"] == "forever"


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_works_on_trio(anyio_backend: str) -> None:
    server = make_server()

    @server.tool()
    def sync_logs(ctx: Context) -> str:
        """Logs from a worker thread."""
        anyio.from_thread.run(ctx.info, "hello from trio's worker")
        return threading.current_thread().name

    async with connect(server) as c:
        assert (await c.tool("echo", {"text": "t"}))["content"][0]["text"] == "t"
        assert (await c.tool("add", {"a": 1}))["structuredContent"] == {"result": 3}
        assert (await c.tool("sync_logs"))["content"][0]["text"] != threading.current_thread().name
        assert await c.wait_for("notifications/message") == [
            {"level": "info", "data": "hello from trio's worker"}
        ]
        assert (await c.tool("fails_tool_error"))["isError"] is True


@pytest.mark.req("TOOLS-STRUCTURED-CONFORMS")
async def test_a_result_breaking_the_output_schema_is_not_sent() -> None:
    server = Server("s")

    @server.tool()
    def count() -> int:
        """Claims an int, returns text."""
        return "many"  # type: ignore[return-value]

    @server.tool()
    def model() -> Point:
        """Returns a dict that fits the model."""
        return {"x": 1}  # type: ignore[return-value]

    async with connect(server) as c:
        r = await c.tool("count")
        assert r["isError"] is True and "output schema" in r["content"][0]["text"]
        assert "structuredContent" not in r
        assert (await c.tool("model"))["structuredContent"] == {"x": 1}


async def test_sys_exit_in_a_tool_does_not_stop_the_server() -> None:
    server = Server("s")

    @server.tool()
    def quits() -> str:
        """Calls sys.exit."""
        raise SystemExit(3)

    @server.tool()
    async def quits_async() -> str:
        """Calls sys.exit too."""
        raise SystemExit(4)

    async with connect(server) as c:
        assert (await c.tool("quits"))["isError"] is True
        assert (await c.tool("quits_async"))["isError"] is True
        assert (await c.tool("quits"))["isError"] is True


async def test_sync_tools_that_wait_on_each_other_each_get_a_thread() -> None:
    # Each call blocks until all have started: it only finishes if every call got its own
    # worker thread (the pool adds threads while jobs wait behind busy ones).
    n = 6
    barrier = threading.Barrier(n, timeout=10)
    server = Server("pool")

    @server.tool()
    def meet() -> str:
        """Wait for the others."""
        barrier.wait()
        return str(threading.get_ident())

    async with connect(server) as c:
        names: list[str] = []

        async def one() -> None:
            names.append((await c.tool("meet"))["content"][0]["text"])

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                for _ in range(n):
                    tg.start_soon(one)
    assert len(set(names)) == n


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the pool of our own is asyncio's
async def test_quick_sync_tools_share_workers_under_concurrency(anyio_backend: str) -> None:
    server = Server("pool")

    @server.tool()
    def quick(i: int) -> str:
        """Return at once."""
        return str(threading.get_ident())

    async with connect(server) as c:
        names: list[str] = []

        async def one(i: int) -> None:
            names.append((await c.tool("quick", {"i": i}))["content"][0]["text"])

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                for i in range(64):
                    tg.start_soon(one, i)
    assert len(names) == 64
    # Quick jobs do not start a thread per call in flight.
    assert len(set(names)) < 16


async def test_a_tool_meeting_the_shared_state_down_says_to_retry_not_where_it_lives() -> None:
    """What Redis raises when down names the instance: the client is told to retry, not
    where the server's shared state lives (the log keeps that)."""
    from mcpkit._exceptions import UNAVAILABLE, BackendUnavailable

    server = Server("down")

    @server.tool()
    async def needs_redis() -> str:
        """Reads the shared state (here: finds it down)."""
        raise BackendUnavailable("Redis unavailable (read task): cannot reach 10.0.0.5:6379")

    async with connect(server) as c:
        r = await c.tool("needs_redis")
    assert r["isError"] is True
    assert r["content"] == [
        {"type": "text", "text": f"Error executing tool needs_redis: {UNAVAILABLE}"}
    ]
    assert "10.0.0.5" not in str(r)
