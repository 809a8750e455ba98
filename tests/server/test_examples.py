"""The focused examples load and serve what they register."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.server._harness import connect

from mcpkit._server._cli import load_server

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "servers"


async def test_quickstart() -> None:
    server = load_server(str(EXAMPLES / "quickstart.py"))
    async with connect(server) as c:
        assert (await c.tool("add", {"a": 2, "b": 40}))["structuredContent"] == {"result": 42}
        r = await c.call("resources/read", {"uri": "greeting://Ada"})
        assert r["contents"][0]["text"] == "Hello, Ada!"
        p = await c.call("prompts/get", {"name": "haiku", "arguments": {"topic": "tea"}})
        assert "tea" in p["messages"][0]["content"]["text"]


async def test_structured_output() -> None:
    server = load_server(str(EXAMPLES / "structured_output.py"))
    async with connect(server) as c:
        tools = {t["name"]: t for t in (await c.call("tools/list"))["tools"]}
        assert tools["find_flights"]["outputSchema"]["properties"]["flights"]["type"] == "array"
        assert tools["find_flights"]["inputSchema"]["properties"]["departs"]["format"] == "date"
        r = await c.tool(
            "find_flights", {"origin": "CDG", "destination": "OSL", "departs": "2026-12-24"}
        )
        assert r["structuredContent"]["flights"][0]["departs"] == "2026-12-24"
        bad = await c.tool(
            "find_flights", {"origin": "CDG", "destination": "CDG", "departs": "2026-12-24"}
        )
        assert bad["isError"] and bad["content"][0]["text"] == "origin and destination must differ"
        bad = await c.tool(
            "find_flights", {"origin": "PARIS", "destination": "OSL", "departs": "soon"}
        )
        assert (
            bad["isError"]
            and "`origin`" in bad["content"][0]["text"]
            and "`departs`" in bad["content"][0]["text"]
        )


async def test_interactive() -> None:
    server = load_server(str(EXAMPLES / "interactive.py"))

    async def elicit(ctx: Any, params: Any) -> Any:
        return {"action": "accept", "content": {"language": "French", "formal": True}}

    async def sampling(ctx: Any, params: Any) -> Any:
        assert "formal" in params["messages"][0]["content"]["text"]
        return {"role": "assistant", "content": {"type": "text", "text": "Bonjour"}, "model": "m"}

    async def roots(ctx: Any, params: Any) -> Any:
        return {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}

    async with connect(
        server,
        capabilities={"elicitation": {}, "sampling": {}, "roots": {}},
        handlers={
            "elicitation/create": elicit,
            "sampling/createMessage": sampling,
            "roots/list": roots,
        },
    ) as c:
        assert (await c.tool("translate", {"text": "hello"}))["content"][0]["text"] == "Bonjour"
        assert (await c.tool("index_workspace"))["content"][0]["text"] == "indexed 2 root(s)"


async def test_bench_server() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_example", EXAMPLES / "bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server = module.setup(tools=2)
    async with connect(server) as c:
        names = [t["name"] for t in (await c.call("tools/list"))["tools"]]
        assert names == ["echo", "big_out", "big_in", "tool_0", "tool_1"]
        assert (await c.tool("echo", {"text": "x"})) == {"content": [{"type": "text", "text": "x"}]}
        assert (await c.tool("big_in", {"data": "abc"}))["content"][0]["text"] == "3"
        assert len((await c.tool("big_out"))["content"][0]["text"]) == 1 << 20
        assert (await c.tool("tool_1", {"x": 4, "y": "z"}))["content"][0]["text"] == "4z"
