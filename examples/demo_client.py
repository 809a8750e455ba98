"""The main job: a real mcpkit client driving a real mcpkit server over stdio.

    python examples/demo_client.py

It starts ``examples/everything.py`` as a subprocess, then lists and calls tools (progress,
logging, sampling and elicitation included: this client answers the server's requests),
reads resources and gets prompts, printing what it sees. Exits non-zero if anything fails.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from mcpkit import Client
from mcpkit.types import CreateMessageResult, ElicitResult, TextContent

SERVER = Path(__file__).with_name("everything.py")


async def answer_sampling(params: Any, ctx: Any) -> CreateMessageResult:
    # A host would ask its model here; the demo answers in the model's place.
    asked = params.messages[-1].content
    text = getattr(asked, "text", "?")
    return CreateMessageResult(
        role="assistant",
        content=TextContent(text=f"(model) you asked: {text}"),
        model="demo-model",
    )


async def answer_elicitation(params: Any, ctx: Any) -> ElicitResult:
    # A host would show a form to its user; the demo fills in whatever the schema asks.
    content: dict[str, Any] = {}
    for name, field in params.requested_schema.properties.items():
        prop = field.to_wire()
        kind = prop.get("type")
        content[name] = {"string": "demo", "integer": 42, "number": 4.5, "boolean": True}.get(
            kind, "demo"
        )
        if "enum" in prop:
            content[name] = prop["enum"][0]
    return ElicitResult(action="accept", content=content)


def show(title: str, value: Any) -> None:
    print(f"{title:<28} {value}")


async def main() -> int:
    logs: list[str] = []
    progress: list[float] = []
    async with Client(
        [sys.executable, str(SERVER)],
        sampling_handler=answer_sampling,
        elicitation_handler=answer_elicitation,
        logging_handler=lambda p: logs.append(str(p.data)),
        progress_handler=lambda p: progress.append(p.progress),
    ) as client:
        info = client.server_info
        show("server", f"{info.name} {info.version}")
        tools = await client.list_tools()
        show("tools", len(tools))
        result = await client.call_tool("test_simple_text")
        show("test_simple_text", result.content[0].text)  # type: ignore[union-attr]
        await client.call_tool("test_tool_with_progress")
        show("progress notifications", progress)
        await client.set_logging_level("debug")
        await client.call_tool("test_tool_with_logging")
        show("log messages", len(logs))
        sampled = await client.call_tool("test_sampling", {"prompt": "What is MCP?"})
        show("test_sampling", sampled.content[0].text)  # type: ignore[union-attr]
        elicited = await client.call_tool(
            "test_elicitation", {"message": "Please provide your information"}
        )
        show("test_elicitation", elicited.content[0].text)  # type: ignore[union-attr]
        resources = await client.list_resources()
        show("resources", [r.uri for r in resources])
        contents = await client.read_resource("test://static-text")
        show("test://static-text", contents.contents[0].text)  # type: ignore[union-attr]
        prompts = await client.list_prompts()
        show("prompts", [p.name for p in prompts])
        prompt = await client.get_prompt(
            "test_prompt_with_arguments", {"arg1": "alpha", "arg2": "beta"}
        )
        show("test_prompt_with_arguments", prompt.messages[0].content.text)  # type: ignore[union-attr]
        await client.ping()
    print("ok: server and client talked over stdio")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
