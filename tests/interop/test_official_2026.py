"""Interop with the official Python SDK at revision 2026-07-28 (stateless MCP), both ways.

* The official ``Client`` in its default mode (``mode="auto"``: probe ``server/discover``,
  fall back to ``initialize``) starts ``mcpkit run examples/everything.py`` over stdio, the way
  a host starts a server. It must settle on 2026-07-28 and every feature it uses must work:
  tools (text, structured, errors), resources and templates, prompts, completion, and the
  multi round-trip requests (elicitation, sampling, roots) answered by its callbacks, plus
  per-request logging. The traffic is tapped (``wire_tap.py``) and validated against the
  2026-07-28 schema from the server's end.
* Our :class:`mcpkit.Client` starts the official ``MCPServer`` (``official_server_2026.py``)
  over stdio, settles on 2026-07-28 through ``server/discover`` and uses tools (one of them
  a multi round-trip tool answered by our elicitation callback), resources, templates and
  prompts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from tests._schema import replay_tap_log

import mcpkit

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EVERYTHING = ROOT / "examples" / "everything.py"
OFFICIAL_SERVER_2026 = HERE / "official_server_2026.py"
TAP = HERE / "wire_tap.py"
MODERN = "2026-07-28"
#: Bound on each whole exchange (spawning Python processes included).
EXCHANGE_TIMEOUT = 40.0


def _texts(result: Any) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


async def _check_features(client: Any, logs: list[Any]) -> None:
    """Every feature of everything.py the official client reaches, result by result."""
    from mcp import types

    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"add", "echo", "get_weather", "test_input_required_result_multiple_inputs"} <= set(
        tools
    )
    assert tools["add"].input_schema["required"] == ["a", "b"]
    added = await client.call_tool("add", {"a": 2, "b": 40})
    assert not added.is_error
    assert _texts(added) == ["42"]
    assert added.structured_content == {"result": 42}
    failed = await client.call_tool("test_error_handling", {})
    assert failed.is_error
    assert "error" in _texts(failed)[0].lower()

    resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert {"test://static-text", "test://example-resource"} <= resources
    templates = (await client.list_resource_templates()).resource_templates
    assert "test://template/{id}/data" in {t.uri_template for t in templates}
    read = await client.read_resource("test://template/7/data")
    assert orjson.loads(read.contents[0].text) == {
        "id": "7",
        "templateTest": True,
        "data": "Data for ID: 7",
    }

    prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert {"test_simple_prompt", "code_review"} <= prompts
    prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "x", "arg2": "y"})
    assert prompt.messages[0].content.text == "Prompt with arguments: arg1='x', arg2='y'"
    completion = await client.complete(
        types.PromptReference(type="ref/prompt", name="code_review"),
        {"name": "language", "value": "py"},
    )
    assert completion.completion.values == ["python", "pyret"]

    # Multi round-trip: the tool's three questions come back in one InputRequiredResult and
    # the official client answers them with its callbacks, then retries.
    gathered = await client.call_tool("test_input_required_result_multiple_inputs", {})
    assert not gathered.is_error, _texts(gathered)
    assert _texts(gathered) == ["Hi there! Ada (1 root(s))"]
    rounds = await client.call_tool("test_input_required_result_multi_round", {})
    assert _texts(rounds) == ["Ada likes Ada"]
    prompted = await client.get_prompt("test_input_required_result_prompt", {})
    assert prompted.messages[0].content.text == "Answer using this context: Ada"

    logged = await client.call_tool("test_logging_tool", {})
    assert _texts(logged) == ["Logging test completed"]
    # log_level="info" on the client: the debug line stays on the server.
    assert [str(m.data) for m in logs] == [
        "info message from test_logging_tool",
        "warning message from test_logging_tool",
    ]


@pytest.mark.req("LIFECYCLE-VERSION-SERVER-SAME-IF-SUPPORTED", "STDIO-SERVER-STDOUT-ONLY-MCP")
async def test_official_client_default_mode_speaks_2026_with_our_stdio_server(
    tmp_path: Path,
) -> None:
    from mcp import Client, types
    from mcp.client.stdio import StdioServerParameters

    async def sampling(_ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Hi there!"), model="m"
        )

    async def elicitation(_ctx: Any, params: types.ElicitRequestParams) -> Any:
        wanted = set(getattr(params, "requested_schema", {}).get("properties", {}))
        return types.ElicitResult(action="accept", content={k: "Ada" for k in wanted})

    async def roots(_ctx: Any) -> Any:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    logs: list[Any] = []

    async def logging_cb(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    log = tmp_path / "wire.jsonl"
    server = StdioServerParameters(
        command=sys.executable,
        args=[str(TAP), str(log), "--", sys.executable, "-m", "mcpkit", "run", str(EVERYTHING)],
        cwd=str(ROOT),
    )
    with anyio.fail_after(EXCHANGE_TIMEOUT):
        async with Client(
            server,
            sampling_callback=sampling,
            elicitation_callback=elicitation,
            list_roots_callback=roots,
            logging_callback=logging_cb,
            log_level="info",
            cache=None,
        ) as client:
            assert client.protocol_version == MODERN
            assert client.server_info is not None
            assert client.server_info.name == "mcpkit-everything"
            assert client.server_capabilities.tools is not None
            await _check_features(client, logs)

    recorder = await replay_tap_log(log)
    assert recorder.check() == MODERN
    methods = [m["method"] for m in recorder.received if "method" in m]
    # No handshake at all: the probe, then requests that each carry their own revision.
    assert methods[0] == "server/discover"
    assert "initialize" not in methods
    assert "notifications/initialized" not in methods
    for request in (m for m in recorder.received if "method" in m and "id" in m):
        meta = request.get("params", {}).get("_meta", {})
        assert meta.get("io.modelcontextprotocol/protocolVersion") == MODERN, request["method"]
    # Every result names its type under 2026-07-28.
    results = [m["result"] for m in recorder.sent if "result" in m]
    assert results and all("resultType" in r for r in results)
    assert any(r["resultType"] == "input_required" for r in results)


@pytest.mark.req("LIFECYCLE-VERSION-CLIENT-SENDS-SUPPORTED", "TRANSPORT-CLIENT-SUPPORT-STDIO")
async def test_our_client_speaks_2026_with_the_official_server() -> None:
    stderr: list[str] = []
    asked: list[str] = []

    async def on_elicit(params: Any, ctx: Any) -> dict[str, Any]:
        asked.append(params.message)
        return {"action": "accept", "content": {"name": "Ada"}}

    target = mcpkit.stdio(
        [sys.executable, str(OFFICIAL_SERVER_2026)], cwd=ROOT, on_stderr=stderr.append
    )
    with anyio.fail_after(EXCHANGE_TIMEOUT):
        async with mcpkit.Client(target, elicitation_handler=on_elicit) as client:
            assert client.protocol_version == MODERN, "\n".join(stderr)
            assert client.server_info.name == "official-2026"
            tools = {t.name: t for t in await client.list_tools()}
            assert set(tools["add"].input_schema.properties or {}) == {"a", "b"}
            added = await client.call_tool("add", {"a": 2, "b": 3})
            assert not added.is_error
            assert _texts(added) == ["5"]
            # The official server's multi round-trip tool: our client answers its
            # InputRequiredResult with the same elicitation callback it uses for 2025.
            greeted = await client.call_tool("greet", {})
            assert _texts(greeted) == ["Hello, Ada!"]
            assert asked == ["What is your name?"]
            resources = {str(r.uri) for r in await client.list_resources()}
            assert "data://motd" in resources
            motd = await client.read_resource("data://motd")
            assert motd.contents[0].text == "be kind"
            templates = {t.uri_template for t in await client.list_resource_templates()}
            assert "data://items/{item_id}" in templates
            item = await client.read_resource("data://items/7")
            assert orjson.loads(item.contents[0].text) == {"id": "7"}
            prompt = await client.get_prompt("review", {"code": "x = 1"})
            assert prompt.messages[0].content.text == "Review this: x = 1"
