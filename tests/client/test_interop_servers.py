"""Our Client against servers we did not write, over stdio.

* the official Python SDK (``mcp``): ``servers/official_sdk.py``, written with its MCPServer;
* the reference TypeScript server ``@modelcontextprotocol/server-everything`` from npm,
  installed once into ``~/.cache/mcpkit-tests/npm`` (outside the repository). The test is
  skipped only when the npm registry cannot be reached, with a reason that says so.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests._schema import WireRecorder

from mcpkit import Client
from mcpkit._exceptions import InvalidParams
from mcpkit._transports import spawn_stdio
from mcpkit.types import (
    CreateMessageRequestParams,
    ElicitRequestFormParams,
    PromptReference,
    ResourceTemplateReference,
)

pytestmark = pytest.mark.anyio


def file_uri(path: Path) -> str:
    return path.resolve().as_uri()


def real(path: Path) -> str:
    return str(path.resolve())


HERE = Path(__file__).parent
OFFICIAL = [sys.executable, str(HERE / "servers" / "official_sdk.py")]


# ---------------------------------------------------------------- the official Python SDK


async def test_official_sdk_server_everything_a_client_does(tmp_path: Path) -> None:
    samples: list[CreateMessageRequestParams] = []
    forms: list[ElicitRequestFormParams] = []
    logs: list[Any] = []
    progress: list[tuple[float, float | None, str | None]] = []

    async def sample(params: CreateMessageRequestParams, ctx: Any) -> str:
        samples.append(params)
        return "four"

    async def elicit(params: ElicitRequestFormParams, ctx: Any) -> dict[str, Any]:
        forms.append(params)
        return {"action": "accept", "content": {"name": "Ann"}}

    with anyio.fail_after(30):
        async with (
            spawn_stdio(OFFICIAL, on_stderr=lambda line: None) as transport,
            Client(
                wire := WireRecorder(transport, side="client"),
                # Its tools ask the client mid-call (sampling, elicitation, roots): the
                # handshake era's wire. Its 2026-07-28 side: test_official_sdk_server_2026.
                protocol_version="2025-11-25",
                sampling_handler=sample,
                elicitation_handler=elicit,
                roots=[tmp_path],
                logging_handler=logs.append,
            ) as client,
        ):
            assert client.server_info.name == "official-fixture"
            assert client.server_info.version == "1.2.3"
            assert client.instructions == "Use add to add."
            assert client.protocol_version == "2025-11-25"
            names = {t.name for t in await client.list_tools()}
            assert {"add", "countdown", "ask_model", "ask_user", "show_roots", "fail"} <= names

            r = await client.call_tool("add", {"a": 2, "b": 40})
            assert r.structured_content == {"total": 42} and not r.is_error

            r = await client.call_tool(
                "countdown", {"n": 3}, progress_handler=lambda *a: progress.append(a)
            )
            assert r.structured_content == {"result": "done"}
            assert [p[0] for p in progress] == [1, 2, 3] and progress[0][1] == 3
            assert [x.data for x in logs] == ["step 1", "step 2", "step 3"]

            r = await client.call_tool("ask_model", {"prompt": "2+2?"})
            assert r.structured_content == {"result": "model said: four"}
            assert samples[0].messages[0].content.text == "2+2?"  # type: ignore[union-attr]

            r = await client.call_tool("ask_user", {})
            # The schema default (age 30) was applied by our client.
            assert r.structured_content == {"result": "Ann (30)"}
            assert "age" in forms[0].requested_schema.properties

            r = await client.call_tool("show_roots", {})
            assert r.structured_content == {"result": file_uri(tmp_path)}

            r = await client.call_tool("fail", {})
            assert r.is_error is True and "fail" in r.content[0].text  # type: ignore[union-attr]

            # An unknown tool: this SDK answers with an error result (others use -32602).
            r = await client.call_tool("no_such_tool", {})
            assert r.is_error is True

            resources = await client.list_resources()
            assert [x.uri for x in resources] == ["memo://readme"]
            read = await client.read_resource("memo://readme")
            assert read.contents[0].text == "hello from the official SDK"  # type: ignore[union-attr]
            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates] == ["memo://items/{item}"]
            read = await client.read_resource("memo://items/7")
            assert read.contents[0].text == "item 7"  # type: ignore[union-attr]

            prompts = await client.list_prompts()
            assert prompts[0].name == "greet" and prompts[0].arguments[0].name == "name"  # type: ignore[index]
            got = await client.get_prompt("greet", {"name": "Bo"})
            assert got.messages[0].content.text == "Hello, Bo!"  # type: ignore[union-attr]
            done = await client.complete(PromptReference(name="greet"), "name", "a")
            assert done.completion.values == ["alice"]
            await client.ping()
    # Everything both sides sent was valid for the negotiated revision.
    assert wire.check() == "2025-11-25"


# ---------------------------------------------------------------- server-everything (TypeScript)


async def test_reference_typescript_server(everything_js: str, tmp_path: Path) -> None:
    samples: list[CreateMessageRequestParams] = []
    forms: list[ElicitRequestFormParams] = []
    logs: list[Any] = []
    got_log = anyio.Event()

    async def sample(params: CreateMessageRequestParams, ctx: Any) -> dict[str, Any]:
        samples.append(params)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "sampled!"},
            "model": "test-model",
        }

    async def elicit(params: ElicitRequestFormParams, ctx: Any) -> dict[str, Any]:
        forms.append(params)
        return {
            "action": "accept",
            "content": {"name": "Ann", "email": "ann@example.com", "check": True},
        }

    async def on_log(params: Any) -> None:
        # async: a plain callback runs in a worker thread, where an anyio Event cannot be set
        logs.append(params)
        got_log.set()

    stderr: list[str] = []
    with anyio.fail_after(60):
        async with (
            spawn_stdio(["node", everything_js, "stdio"], on_stderr=stderr.append) as transport,
            Client(
                wire := WireRecorder(transport, side="client"),
                sampling_handler=sample,
                elicitation_handler=elicit,
                roots=[tmp_path],
                logging_handler=on_log,
            ) as client,
        ):
            assert client.server_info.name == "mcp-servers/everything"
            assert client.protocol_version == "2025-11-25"
            tools = {t.name: t for t in await client.list_tools()}
            for name in (
                "echo",
                "get-sum",
                "get-structured-content",
                "trigger-long-running-operation",
            ):
                assert name in tools

            r = await client.call_tool("echo", {"message": "hi"})
            assert r.content[0].text == "Echo: hi"  # type: ignore[union-attr]
            r = await client.call_tool("get-sum", {"a": 2, "b": 3})
            assert "5" in r.content[0].text  # type: ignore[union-attr]

            # A tool with an outputSchema: structured content checked by our client.
            assert tools["get-structured-content"].output_schema is not None
            r = await client.call_tool("get-structured-content", {"location": "Chicago"})
            assert r.structured_content is not None and "temperature" in r.structured_content

            r = await client.call_tool("get-tiny-image", {})
            assert any(getattr(c, "type", None) == "image" for c in r.content)

            # Invalid arguments: the server's error is a result with isError, or a -32602.
            try:
                r = await client.call_tool("get-sum", {"a": "x"})
                assert r.is_error is True
            except InvalidParams:
                pass

            progress: list[tuple[float, float | None, str | None]] = []
            r = await client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.3, "steps": 3},
                progress_handler=lambda *a: progress.append(a),
            )
            assert [p[0] for p in progress] == [1, 2, 3] and progress[-1][1] == 3

            r = await client.call_tool(
                "trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20}
            )
            assert samples and samples[0].max_tokens == 20
            assert "sampled!" in " ".join(getattr(c, "text", "") for c in r.content)

            r = await client.call_tool("trigger-elicitation-request", {})
            text = " ".join(getattr(c, "text", "") for c in r.content)
            assert "Ann" in text and "ann@example.com" in text
            # Defaults of the form were filled in for the fields the user left out.
            assert "Favorite Integer: 42" in text

            r = await client.call_tool("get-roots-list", {})
            assert file_uri(tmp_path) in " ".join(getattr(c, "text", "") for c in r.content)

            await client.set_logging_level("debug")
            await client.call_tool("toggle-simulated-logging", {})
            await got_log.wait()
            assert logs[0].level in (
                "debug",
                "info",
                "notice",
                "warning",
                "error",
                "critical",
                "alert",
                "emergency",
            )

            resources = await client.list_resources()
            assert len(resources) > 0
            text_res = next(x for x in resources if (x.mime_type or "").startswith("text/"))
            read = await client.read_resource(text_res.uri)
            assert read.contents and read.contents[0].uri == text_res.uri

            templates = await client.list_resource_templates()
            assert any("{resourceId}" in t.uri_template for t in templates)
            read = await client.read_resource("demo://resource/dynamic/text/3")
            assert read.contents[0].text  # type: ignore[union-attr]
            read = await client.read_resource("demo://resource/dynamic/blob/3")
            assert read.contents[0].blob  # type: ignore[union-attr]

            prompts = {p.name: p for p in await client.list_prompts()}
            assert {"simple-prompt", "args-prompt"} <= set(prompts)
            got = await client.get_prompt("simple-prompt")
            assert got.messages
            got = await client.get_prompt("args-prompt", {"city": "Oslo"})
            assert "Oslo" in str(got.messages[0].content)
            done = await client.complete(
                PromptReference(name="completable-prompt"), "department", "E", context={}
            )
            assert isinstance(done.completion.values, list)
            done = await client.complete(
                ResourceTemplateReference(uri="demo://resource/dynamic/text/{resourceId}"),
                "resourceId",
                "1",
            )
            assert isinstance(done.completion.values, list)

            await client.subscribe(text_res.uri)
            await client.unsubscribe(text_res.uri)
            await client.ping()

    # One deliberate exception: the form has a "number" field (default 3.14) and the answer
    # carries it, but the 2025-11-25 JSON schema types ElicitResult.content values as
    # string | integer | boolean | string[] (no non-integer numbers), contradicting its own
    # NumberSchema. We send the number the form asked for; only that record is exempt.
    def float_in_elicit_answer(rec: Any) -> bool:
        content = (
            (rec.message or {}).get("result", {}).get("content")
            if rec.direction == "sent"
            else None
        )
        return isinstance(content, dict) and any(isinstance(v, float) for v in content.values())

    assert wire.check(ignore=float_in_elicit_answer) == "2025-11-25"


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26", "2024-11-05"])
async def test_official_sdk_server_at_older_revisions(version: str) -> None:
    async def sample(params: CreateMessageRequestParams, ctx: Any) -> str:
        return "old"

    with anyio.fail_after(30):
        async with (
            spawn_stdio(OFFICIAL, on_stderr=lambda line: None) as transport,
            Client(
                wire := WireRecorder(transport, side="client"),
                protocol_version=version,
                sampling_handler=sample,
            ) as client,
        ):
            assert client.protocol_version == version
            tools = {t.name: t for t in await client.list_tools()}
            r = await client.call_tool("add", {"a": 1, "b": 2})
            assert r.content and not r.is_error
            if tools["add"].output_schema is not None:
                assert r.structured_content == {"total": 3}
            r = await client.call_tool("ask_model", {"prompt": "?"})
            assert "model said: old" in r.content[0].text  # type: ignore[union-attr]
            assert (await client.read_resource("memo://readme")).contents[0].text  # type: ignore[union-attr]
            assert (await client.get_prompt("greet", {"name": "A"})).messages
    assert wire.check() == version
