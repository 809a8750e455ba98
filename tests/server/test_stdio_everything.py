"""``examples/everything.py`` served over stdio by ``mcpkit run``, used by real clients.

* Our ``ClientSession`` over ``spawn_stdio``, every message validated by a ``WireRecorder``.
* The official SDK's client (``mcp`` on PyPI) over its ``stdio_client``, through a wire tap
  whose log is replayed into a ``WireRecorder``: every feature of the example, its sampling,
  elicitation, roots and logging callbacks answering.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests._schema import WireRecorder, replay_tap_log

from mcpkit._exceptions import ProtocolError
from mcpkit._session import ClientSession
from mcpkit._transports import spawn_stdio

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
TAP = ROOT / "tests" / "interop" / "wire_tap.py"
RUN = [sys.executable, "-c", "import sys; from mcpkit._cli import main; sys.exit(main())", "run"]
TIMEOUT = 30.0


async def test_our_client_over_stdio_via_mcpkit_run() -> None:
    stderr: list[str] = []
    elicited: list[Any] = []

    async def sampling(ctx: Any, params: Any) -> Any:
        text = params["messages"][0]["content"]["text"]
        return {
            "role": "assistant",
            "content": {"type": "text", "text": f"echo {text}"},
            "model": "m",
        }

    async def elicit(ctx: Any, params: Any) -> Any:
        elicited.append(params)
        return {"action": "accept", "content": {"username": "u", "email": "e@x"}}

    messages: list[Any] = []

    async def on_message(params: Any) -> None:
        messages.append(params)

    with anyio.fail_after(TIMEOUT):
        async with spawn_stdio(
            RUN[0], [*RUN[1:], str(EVERYTHING)], cwd=ROOT, on_stderr=stderr.append
        ) as transport:
            recorder = WireRecorder(transport, side="client")
            async with ClientSession(
                recorder,
                client_info={"name": "ours", "version": "1"},
                capabilities={"sampling": {}, "elicitation": {}},
                handlers={"sampling/createMessage": sampling, "elicitation/create": elicit},
                notification_handlers={"notifications/message": on_message},
            ) as session:
                init = await session.initialize()
                assert init["serverInfo"]["name"] == "mcpkit-everything"
                assert set(init["capabilities"]) >= {
                    "tools",
                    "resources",
                    "prompts",
                    "completions",
                    "logging",
                }

                async def call(name: str, args: dict[str, Any] | None = None) -> Any:
                    return await session.send_request(
                        "tools/call", {"name": name, "arguments": args or {}}, timeout=10
                    )

                assert (await call("test_simple_text"))["content"][0]["text"]
                assert (await call("test_sampling", {"prompt": "hello"}))["content"][0][
                    "text"
                ] == "LLM response: echo hello"
                r = await call("test_elicitation", {"message": "Who?"})
                assert r["content"][0]["text"].startswith("User response: accept")
                assert elicited[0]["requestedSchema"]["required"] == ["username", "email"]
                await session.send_request("logging/setLevel", {"level": "debug"}, timeout=5)
                await call("test_tool_with_logging")
                # Log notifications precede the result on the one stdio stream.
                assert [m["data"] for m in messages[-3:]] == [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                # stdout stays protocol-only even when user code prints.
                assert (await call("echo", {"text": "x"}))["content"][0]["text"] == "x"
    recorder.check()
    assert not any("Traceback" in line for line in stderr), "\n".join(stderr)


def _ok(result: Any) -> Any:
    assert not getattr(result, "is_error", False), result
    return result


# The official SDK flags features the 2026-07-28 draft deprecates; they are current in 2025-11-25.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_official_sdk_client_uses_every_feature(tmp_path: Path) -> None:
    from mcp import types
    from mcp.client.session import ClientSession as OfficialClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    log = tmp_path / "wire.jsonl"
    logs: list[Any] = []
    sampled: list[Any] = []
    elicited: list[Any] = []
    progress: list[Any] = []

    async def sampling_cb(context: Any, params: types.CreateMessageRequestParams) -> Any:
        sampled.append(params)
        if params.tools:
            already = any(
                isinstance(m.content, list)
                and any(getattr(b, "type", None) == "tool_result" for b in m.content)
                for m in params.messages
            )
            if not already:
                return types.CreateMessageResultWithTools(
                    role="assistant",
                    content=[
                        types.ToolUseContent(
                            type="tool_use", id="t1", name="add", input={"a": 2, "b": 3}
                        )
                    ],
                    model="fake",
                    stop_reason="toolUse",
                )
            return types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text="the sum is 5"),
                model="fake",
            )
        text = params.messages[0].content.text  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"answer to {text}"),
            model="fake",
        )

    async def elicitation_cb(context: Any, params: Any) -> Any:
        elicited.append(params)
        if getattr(params, "mode", None) == "url":
            return types.ElicitResult(action="accept")
        props = params.requested_schema["properties"]
        if "username" in props:
            return types.ElicitResult(
                action="accept", content={"username": "testuser", "email": "test@example.com"}
            )
        if "newsletter" in props:
            return types.ElicitResult(
                action="accept", content={"name": "Ada", "email": "ada@example.com"}
            )
        if "verified" in props:
            return types.ElicitResult(
                action="accept",
                content={
                    "name": "Jane Smith",
                    "age": 25,
                    "score": 88.0,
                    "status": "inactive",
                    "verified": False,
                },
            )
        return types.ElicitResult(
            action="accept",
            content={
                "untitledSingle": "option1",
                "titledSingle": "value1",
                "legacyEnum": "opt1",
                "untitledMulti": ["option1", "option2"],
                "titledMulti": ["value1", "value2"],
            },
        )

    async def roots_cb(context: Any) -> Any:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    async def logging_cb(params: types.LoggingMessageNotificationParams) -> None:
        logs.append((params.level, params.data))

    async def progress_cb(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total))

    server = StdioServerParameters(
        command=sys.executable,
        args=[str(TAP), str(log), "--", *RUN, str(EVERYTHING)],
        cwd=str(ROOT),
    )
    with (tmp_path / "stderr.txt").open("w") as errlog, anyio.fail_after(TIMEOUT):
        async with (
            stdio_client(server, errlog=errlog) as (read, write),
            OfficialClientSession(
                read,
                write,
                sampling_callback=sampling_cb,
                elicitation_callback=elicitation_cb,
                list_roots_callback=roots_cb,
                logging_callback=logging_cb,
                client_info=types.Implementation(name="official", version="2"),
                sampling_capabilities=types.SamplingCapability(
                    tools=types.SamplingToolsCapability()
                ),
            ) as s,
        ):
            init = await s.initialize()
            assert init.protocol_version == "2025-11-25"
            assert init.server_info.website_url == "https://example.com/mcpkit"
            assert init.instructions
            await s.send_ping()
            await s.set_logging_level("debug")

            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert all(t.description for t in tools.values())
            schema = tools["json_schema_2020_12_tool"].input_schema
            assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
            assert schema["additionalProperties"] is False and "address" in schema["$defs"]
            assert tools["get_weather"].output_schema is not None
            assert (
                tools["get_weather"].annotations is not None
                and tools["get_weather"].annotations.read_only_hint
            )

            r = _ok(await s.call_tool("test_simple_text"))
            assert r.content[0].text == "This is a simple text response for testing."
            r = _ok(await s.call_tool("test_image_content", {}))
            assert r.content[0].type == "image" and base64.b64decode(r.content[0].data).startswith(
                b"\x89PNG"
            )
            r = _ok(await s.call_tool("test_audio_content", {}))
            assert r.content[0].type == "audio" and r.content[0].mime_type == "audio/wav"
            r = _ok(await s.call_tool("test_embedded_resource", {}))
            assert r.content[0].resource.uri == "test://embedded-resource"
            r = _ok(await s.call_tool("test_multiple_content_types", {}))
            assert {c.type for c in r.content} == {"text", "image", "resource"}
            _ok(await s.call_tool("test_tool_with_logging", {}))
            _ok(await s.call_tool("test_tool_with_progress", {}, progress_callback=progress_cb))
            r = await s.call_tool("test_error_handling", {})
            assert (
                r.is_error
                and r.content[0].text == "This tool intentionally returns an error for testing"
            )
            r = _ok(await s.call_tool("test_sampling", {"prompt": "Test prompt for sampling"}))
            assert r.content[0].text == "LLM response: answer to Test prompt for sampling"
            r = _ok(
                await s.call_tool(
                    "test_elicitation", {"message": "Please provide your information"}
                )
            )
            assert "testuser" in r.content[0].text and "accept" in r.content[0].text
            r = _ok(await s.call_tool("test_elicitation_sep1034_defaults", {}))
            assert "Jane Smith" in r.content[0].text
            r = _ok(await s.call_tool("test_elicitation_sep1330_enums", {}))
            assert "option1" in r.content[0].text
            r = _ok(await s.call_tool("get_weather", {"city": "Paris"}))
            assert r.structured_content == {
                "city": "Paris",
                "temperature_c": 21.5,
                "conditions": "sunny",
            }
            r = _ok(await s.call_tool("add", {"a": 2, "b": 3}))
            assert r.structured_content == {"result": 5}
            r = _ok(await s.call_tool("sample_with_tools", {"question": "what is 2+3?"}))
            assert r.content[0].text == "the sum is 5"
            r = _ok(await s.call_tool("list_client_roots", {}))
            assert r.structured_content == {"result": ["file:///work"]}
            r = _ok(await s.call_tool("ask_contact", {}))
            assert r.content[0].text == "contact: Ada <ada@example.com>"
            r = _ok(await s.call_tool("connect_account", {}))
            assert r.content[0].text == "url elicitation: accept"
            r = _ok(await s.call_tool("whoami", {}))
            assert r.structured_content["client"] == "official"
            r = _ok(await s.call_tool("get_resource_link", {}))
            assert r.content[0].type == "resource_link"
            r = await s.call_tool("test_sampling", {})
            assert r.is_error and "prompt" in r.content[0].text

            resources = {str(x.uri) for x in (await s.list_resources()).resources}
            assert {
                "test://static-text",
                "test://static-binary",
                "test://watched-resource",
            } <= resources
            templates = {
                t.uri_template for t in (await s.list_resource_templates()).resource_templates
            }
            assert "test://template/{id}/data" in templates
            text = (await s.read_resource("test://static-text")).contents[0]
            assert text.text == "This is the content of the static text resource."
            blob = (await s.read_resource("test://static-binary")).contents[0]
            assert base64.b64decode(blob.blob).startswith(b"\x89PNG")
            tmpl = (await s.read_resource("test://template/123/data")).contents[0]
            assert "123" in tmpl.text
            await s.subscribe_resource("test://watched-resource")
            _ok(await s.call_tool("update_watched_resource", {"text": "v2"}))
            assert (await s.read_resource("test://watched-resource")).contents[0].text == "v2"
            await s.unsubscribe_resource("test://watched-resource")

            prompts = {p.name: p for p in (await s.list_prompts()).prompts}
            assert all(p.description for p in prompts.values())
            g = await s.get_prompt(
                "test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"}
            )
            assert (
                "testValue1" in g.messages[0].content.text
                and "testValue2" in g.messages[0].content.text
            )
            g = await s.get_prompt(
                "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
            )
            assert g.messages[0].content.type == "resource"
            g = await s.get_prompt("test_prompt_with_image")
            assert g.messages[0].content.type == "image"
            c = await s.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "test"},
            )
            assert "testValue1" in c.completion.values
            c = await s.complete(
                types.ResourceTemplateReference(
                    type="ref/resource", uri="test://template/{id}/data"
                ),
                {"name": "id", "value": "1"},
            )
            assert c.completion.values and c.completion.has_more is True

            await s.send_roots_list_changed()
            _ok(await s.call_tool("add_dynamic_tool", {"name": "dyn"}))
            assert "dyn" in {t.name for t in (await s.list_tools()).tools}
            assert (await s.call_tool("dyn", {})).content[0].text == "I am dyn"
            await s.send_ping()

    assert [m for m in logs if m[0] == "info"][:3] == [
        ("info", "Tool execution started"),
        ("info", "Tool processing data"),
        ("info", "Tool execution completed"),
    ]
    assert progress == [(0, 100), (50, 100), (100, 100)]
    assert len(sampled) >= 3 and len(elicited) >= 5

    # Replay the traffic as the server saw it, and validate it all.
    recorder = await replay_tap_log(log)
    methods_sent = [m["method"] for m in recorder.sent if isinstance(m, dict) and "method" in m]
    assert recorder.check() == "2025-11-25"
    assert {
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
        "notifications/message",
        "notifications/progress",
        "notifications/resources/updated",
        "notifications/tools/list_changed",
        "notifications/elicitation/complete",
    } <= set(methods_sent)


async def test_pagination_and_bad_input_over_stdio(tmp_path: Path) -> None:
    # Issue 3, "Done when": pagination and bad input for each method, end to end over stdio
    # (`mcpkit run FILE:OBJECT --transport stdio`), with clear errors and a server that keeps
    # serving; every message schema-checked.
    wrapper = tmp_path / "paged_everything.py"
    wrapper.write_text(
        f"import sys\nsys.path.insert(0, {str(EVERYTHING.parent)!r})\n"
        "from everything import server as paged\npaged.page_size = 2\n",
        encoding="utf-8",
    )
    stderr: list[str] = []
    with anyio.fail_after(TIMEOUT):
        async with spawn_stdio(
            RUN[0],
            [*RUN[1:], f"{wrapper}:paged", "--transport", "stdio"],
            cwd=ROOT,
            on_stderr=stderr.append,
        ) as transport:
            recorder = WireRecorder(transport, side="client")
            async with ClientSession(
                recorder, client_info={"name": "ours", "version": "1"}
            ) as session:
                await session.initialize()

                async def call(method: str, params: dict[str, Any] | None = None) -> Any:
                    return await session.send_request(method, params, timeout=10)

                async def alive() -> None:
                    r = await call("tools/call", {"name": "echo", "arguments": {"text": "ok"}})
                    assert r["content"][0]["text"] == "ok"

                async def error(method: str, params: dict[str, Any]) -> ProtocolError:
                    with pytest.raises(ProtocolError) as e:
                        await call(method, params)
                    await alive()
                    return e.value

                # Every list method pages (2 items a page) and follows its opaque cursor.
                for method, key in (
                    ("tools/list", "tools"),
                    ("resources/list", "resources"),
                    ("resources/templates/list", "resourceTemplates"),
                    ("prompts/list", "prompts"),
                ):
                    items: list[Any] = []
                    cursor: str | None = None
                    pages = 0
                    while True:
                        page = await call(method, {"cursor": cursor} if cursor else None)
                        assert len(page[key]) <= 2
                        items += page[key]
                        pages += 1
                        cursor = page.get("nextCursor")
                        if cursor is None:
                            break
                        assert pages < 100, f"{method} never ends"
                    names = [i.get("name") or i.get("uri") for i in items]
                    assert len(names) == len(set(names)), method
                    if key != "resourceTemplates":
                        assert pages >= 2, method
                    e = await error(method, {"cursor": "not-a-cursor"})
                    assert e.code == -32602 and "cursor" in e.message.lower(), method

                # tools/call: unknown name, missing required argument, wrong type.
                e = await error("tools/call", {"name": "no_such_tool", "arguments": {}})
                assert e.code == -32602 and "no_such_tool" in e.message
                r = await call("tools/call", {"name": "test_sampling", "arguments": {}})
                assert r["isError"] is True and "prompt" in r["content"][0]["text"]
                r = await call("tools/call", {"name": "add", "arguments": {"a": "two", "b": 3}})
                assert r["isError"] is True and "a" in r["content"][0]["text"]
                await alive()
                # resources/read: unknown URI, traversal through a template.
                for uri in ("test://does-not-exist", "test://template/../data"):
                    e = await error("resources/read", {"uri": uri})
                    assert e.code == -32002, uri
                # prompts/get: unknown name, missing required argument.
                e = await error("prompts/get", {"name": "no_such_prompt"})
                assert e.code == -32602 and "no_such_prompt" in e.message
                e = await error(
                    "prompts/get",
                    {"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}},
                )
                assert e.code == -32602 and "arg2" in e.message
                # completion/complete: unknown prompt.
                e = await error(
                    "completion/complete",
                    {
                        "ref": {"type": "ref/prompt", "name": "no_such_prompt"},
                        "argument": {"name": "a", "value": ""},
                    },
                )
                assert e.code == -32602
                g = await call("prompts/get", {"name": "test_simple_prompt"})
                assert g["messages"] == [
                    {
                        "role": "user",
                        "content": {"type": "text", "text": "This is a simple prompt for testing."},
                    }
                ]
    recorder.check()
    assert not any("Traceback" in line for line in stderr), "\n".join(stderr)
