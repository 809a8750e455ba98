"""Every Python example of docs/server.md runs, and its server serves what it registers."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from tests.server._harness import connect

from mcpkit import Server

pytestmark = pytest.mark.anyio

DOC = Path(__file__).resolve().parents[2] / "docs" / "server.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_guide_has_examples() -> None:
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("index", range(len(BLOCKS)))
async def test_example_runs(index: int) -> None:
    # A real module: dataclasses and pydantic look their module up in sys.modules.
    module = types.ModuleType(f"docs_example_{index}")
    sys.modules[module.__name__] = module
    try:
        exec(compile(BLOCKS[index], f"docs/server.md#example{index}", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    found = [v for v in module.__dict__.values() if isinstance(v, Server)]
    assert found, "the example defines no Server"
    # The one it serves is `server`, else the last defined. A hub mounting a server of
    # another process is not served here (its mounts are tested in tests/server/test_mount.py):
    # what it composed in place is checked.
    server = module.__dict__.get("server", found[-1])
    assert isinstance(server, Server)
    if server._mounts:
        assert server.tools and server.registry.templates
        return

    async def sampling(ctx: Any, params: Any) -> Any:
        return {"role": "assistant", "content": {"type": "text", "text": "a summary"}, "model": "m"}

    async def elicit(ctx: Any, params: Any) -> Any:
        return {"action": "accept", "content": {"date": "2026-01-01"}}

    async def roots(ctx: Any, params: Any) -> Any:
        return {"roots": [{"uri": "file:///ws"}]}

    async with connect(
        server,
        capabilities={"sampling": {}, "elicitation": {}, "roots": {}},
        handlers={
            "sampling/createMessage": sampling,
            "elicitation/create": elicit,
            "roots/list": roots,
        },
    ) as c:
        caps = c.client.server_capabilities
        if "tools" in caps:
            for tool in (await c.call("tools/list"))["tools"]:
                assert tool.get("description"), tool["name"]
                if not tool["inputSchema"].get("required"):
                    result = await c.tool(tool["name"], {})
                    assert not result.get("isError"), (tool["name"], result)
        if "resources" in caps:
            for resource in (await c.call("resources/list"))["resources"]:
                assert (await c.call("resources/read", {"uri": resource["uri"]}))["contents"]
            await c.call("resources/templates/list")
        if "prompts" in caps:
            for prompt in (await c.call("prompts/list"))["prompts"]:
                args = {a["name"]: "x" for a in prompt.get("arguments", [])}
                assert (await c.call("prompts/get", {"name": prompt["name"], "arguments": args}))[
                    "messages"
                ]
