"""The server answers clients of every revision we speak, adapting what it sends."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from tests._schema import REVISIONS
from tests.server._harness import connect

pytestmark = pytest.mark.anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))


@pytest.mark.parametrize("rev", REVISIONS)
async def test_everything_on_every_revision(rev: str) -> None:
    from everything import server

    async def sampling(ctx: Any, params: Any) -> Any:
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}

    async with connect(
        server,
        protocol_version=rev,
        capabilities={"sampling": {}},
        handlers={"sampling/createMessage": sampling},
    ) as c:
        assert c.client.protocol_version == rev
        tools = (await c.call("tools/list"))["tools"]
        assert len(tools) > 20
        for name, args in (
            ("get_weather", {"city": "Oslo"}),
            ("test_multiple_content_types", {}),
            ("get_resource_link", {}),
            ("test_audio_content", {}),
            ("test_sampling", {"prompt": "p"}),
            ("test_error_handling", {}),
        ):
            await c.tool(name, args)
        await c.call("resources/list")
        await c.call("resources/templates/list")
        await c.call("resources/read", {"uri": "test://static-binary"})
        await c.call("prompts/list")
        await c.call("prompts/get", {"name": "test_prompt_with_image"})
        if rev != "2024-11-05":  # no `completions` capability to declare before 2025-03-26
            await c.call(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "code_review"},
                    "argument": {"name": "language", "value": "r"},
                },
            )
        await c.call("logging/setLevel", {"level": "info"})
        await c.tool("test_tool_with_logging")
