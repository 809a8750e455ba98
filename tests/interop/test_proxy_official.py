"""The official SDK on both ends of ``mcpkit proxy``: its client, over stdio, uses every
feature of a server written with it, through the proxy (requests, progress, logging,
sampling, elicitation, roots, resources, templates, prompts, completion, errors)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[2]
OFFICIAL = ROOT / "tests" / "client" / "servers" / "official_sdk.py"
MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
TIMEOUT = 60.0

pytestmark = pytest.mark.anyio


def _ok(result: Any) -> Any:
    assert not getattr(result, "is_error", False), result
    return result


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_official_client_through_the_proxy_to_an_official_server(tmp_path: Path) -> None:
    from mcp import types
    from mcp.client.session import ClientSession as OfficialClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    logs: list[Any] = []
    progress: list[float] = []

    async def sampling_cb(context: Any, params: types.CreateMessageRequestParams) -> Any:
        text = params.messages[0].content.text  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=text[::-1]), model="m"
        )

    async def elicitation_cb(context: Any, params: Any) -> Any:
        return types.ElicitResult(action="accept", content={"name": "Ada", "age": 36})

    async def roots_cb(context: Any) -> Any:
        return types.ListRootsResult(roots=[types.Root(uri="file:///srv", name="srv")])

    async def logging_cb(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def progress_cb(p: float, total: float | None, message: str | None) -> None:
        progress.append(p)

    upstream = f"{sys.executable} {OFFICIAL}"
    proxy = StdioServerParameters(command=MCPKIT, args=["proxy", upstream], cwd=str(ROOT))
    with (tmp_path / "stderr.txt").open("w") as errlog, anyio.fail_after(TIMEOUT):
        async with (
            stdio_client(proxy, errlog=errlog) as (read, write),
            OfficialClientSession(
                read,
                write,
                sampling_callback=sampling_cb,
                elicitation_callback=elicitation_cb,
                list_roots_callback=roots_cb,
                logging_callback=logging_cb,
                client_info=types.Implementation(name="official", version="2"),
            ) as s,
        ):
            init = await s.initialize()
            # The proxy is the server behind it, as far as the client can tell.
            assert init.server_info.name == "official-fixture"
            assert init.instructions == "Use add to add."
            await s.send_ping()
            # No `logging` capability upstream, so none through the proxy (setLevel would be
            # -32601 from the official server itself); its log messages come anyway.
            assert init.capabilities.logging is None
            names = {t.name for t in (await s.list_tools()).tools}
            assert {"add", "countdown", "ask_model", "ask_user", "show_roots", "fail"} <= names
            r = _ok(await s.call_tool("add", {"a": 2, "b": 3}))
            assert r.structured_content == {"total": 5}
            r = _ok(await s.call_tool("countdown", {"n": 3}, progress_callback=progress_cb))
            assert progress == [1, 2, 3] and len(logs) >= 3
            r = _ok(await s.call_tool("ask_model", {"prompt": "abc"}))
            assert r.content[0].text == "model said: cba"
            r = _ok(await s.call_tool("ask_user", {}))
            assert r.content[0].text == "Ada (36)"
            r = _ok(await s.call_tool("show_roots", {}))
            assert r.content[0].text == "file:///srv"
            r = await s.call_tool("fail", {})
            assert r.is_error
            text = (await s.read_resource("memo://readme")).contents[0]
            assert text.text == "hello from the official SDK"  # type: ignore[union-attr]
            item = (await s.read_resource("memo://items/7")).contents[0]
            assert item.text == "item 7"  # type: ignore[union-attr]
            templates = (await s.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["memo://items/{item}"]
            prompt = await s.get_prompt("greet", {"name": "Bo"})
            assert "Hello, Bo!" in prompt.messages[0].content.text  # type: ignore[union-attr]
            done = await s.complete(
                types.PromptReference(type="ref/prompt", name="greet"),
                {"name": "name", "value": "a"},
            )
            assert done.completion.values == ["alice"]
