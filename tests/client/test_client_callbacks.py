"""Server -> client requests: sampling, elicitation (form and URL), roots; capabilities."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.client._helpers import session_server

from mcpkit import Client
from mcpkit._exceptions import (
    CapabilityError,
    InternalError,
    InvalidParams,
    MCPError,
    MethodNotFound,
    ProtocolError,
)
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    TextContent,
)

pytestmark = pytest.mark.anyio

SAMPLE = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
    "maxTokens": 10,
}

FORM = {
    "message": "Who are you?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "age": {"type": "integer", "default": 30, "minimum": 0},
            "email": {"type": "string", "format": "email"},
            "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            "ok": {"type": "boolean", "default": True},
        },
        "required": ["name"],
    },
}


async def ask(srv: Any, method: str, params: dict[str, Any] | None = None) -> Any:
    with anyio.fail_after(5):
        await srv.session.wait_initialized()
        return await srv.session.send_request(method, params, timeout=5)


# ---------------------------------------------------------------- capabilities


@pytest.mark.req(
    "ELICIT-CLIENT-DECLARE-CAPABILITY",
    "SAMPLING-CLIENT-DECLARE-CAPABILITY",
    "ROOTS-CLIENT-DECLARE-CAPABILITY",
)
async def test_capabilities_declared_match_the_callbacks() -> None:
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({}, {}),
        ({"sampling_handler": lambda p, c: "x"}, {"sampling": {}}),
        (
            {"sampling_handler": lambda p, c: "x", "sampling_tools": True},
            {"sampling": {"tools": {}}},
        ),
        ({"elicitation_handler": lambda p, c: None}, {"elicitation": {"form": {}}}),
        ({"url_elicitation_handler": lambda p, c: None}, {"elicitation": {"url": {}}}),
        ({"roots": []}, {"roots": {"listChanged": True}}),
    ]
    for kwargs, expected in cases:
        async with session_server({}) as srv:
            with anyio.fail_after(5):
                async with Client(srv.wire, protocol_version="2025-11-25", **kwargs):
                    pass
            assert srv.wire.sent[0]["params"]["capabilities"] == expected, kwargs
            srv.wire.check()


@pytest.mark.req("ROOTS-CLIENT-ERROR-NOT-SUPPORTED")
async def test_requests_without_a_handler_get_method_not_found() -> None:
    async with session_server({}) as srv:
        with anyio.fail_after(5):
            async with Client(srv.wire, protocol_version="2025-11-25"):
                await srv.session.wait_initialized()
                # Our server session refuses to send what the client did not declare...
                with pytest.raises(CapabilityError):
                    await srv.session.send_request("roots/list", None, timeout=5)
                # ...and if a server sends it anyway, the client answers -32601.
                for method in (
                    "roots/list",
                    "sampling/createMessage",
                    "elicitation/create",
                    "bogus/method",
                ):
                    with pytest.raises(MethodNotFound):
                        await srv.session.engine.request(method, {}, timeout=5)
        # The server side sent deliberately incomplete requests; what the client sent is checked.
        srv.wire.check(allow_unknown_methods=True, ignore=lambda rec: rec.direction == "received")


# ---------------------------------------------------------------- sampling


async def test_sampling_handler_typed_params_and_results() -> None:
    seen: list[Any] = []

    async def sample(params: CreateMessageRequestParams, ctx: Any) -> Any:
        seen.append((params, ctx.name, ctx.request_id))
        return CreateMessageResult(
            role="assistant", content=TextContent(text="4"), model="m1", stop_reason="endTurn"
        )

    async with session_server({}) as srv:
        async with Client(
            srv.wire, protocol_version="2025-11-25", sampling_handler=sample
        ) as client:
            result = await ask(srv, "sampling/createMessage", SAMPLE)
            assert result == {
                "role": "assistant",
                "content": {"type": "text", "text": "4"},
                "model": "m1",
                "stopReason": "endTurn",
            }
            params, name, rid = seen[0]
            assert params.max_tokens == 10
            assert params.messages[0].content.text == "2+2?"
            assert name == "test-server" == client.name
            assert isinstance(rid, (int, str))
        srv.wire.check()


async def test_sampling_handler_conveniences_and_errors() -> None:
    answers: list[Any] = [
        "plain text",
        {"role": "assistant", "content": {"type": "text", "text": "d"}, "model": "m"},
        {"role": "robot"},
        ProtocolError(-1, "User rejected sampling request"),
    ]

    def sample(params: Any, ctx: Any) -> Any:  # a plain function: run in a worker thread
        a = answers.pop(0)
        if isinstance(a, Exception):
            raise a
        return a

    async with (
        session_server({}) as srv,
        Client(srv.wire, protocol_version="2025-11-25", sampling_handler=sample),
    ):
        r = await ask(srv, "sampling/createMessage", SAMPLE)
        assert r["content"] == {"type": "text", "text": "plain text"} and r["role"] == "assistant"
        r = await ask(srv, "sampling/createMessage", SAMPLE)
        assert r["model"] == "m"
        with pytest.raises(InternalError, match="invalid result"):
            await ask(srv, "sampling/createMessage", SAMPLE)
        with pytest.raises(ProtocolError, match="User rejected") as ei:
            await ask(srv, "sampling/createMessage", SAMPLE)
        assert ei.value.code == -1
        srv.wire.check()


@pytest.mark.req("SAMPLING-CLIENT-DECLARE-TOOLS", "SAMPLING-CLIENT-ERRORS")
async def test_sampling_with_tools() -> None:
    tool = {
        "name": "weather",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    with_tools = {**SAMPLE, "tools": [tool], "toolChoice": {"mode": "auto"}}
    seen: list[CreateMessageRequestParams] = []

    async def sample(params: CreateMessageRequestParams, ctx: Any) -> Any:
        seen.append(params)
        return {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "u1", "name": "weather", "input": {"city": "Oslo"}}
            ],
            "model": "m",
            "stopReason": "toolUse",
        }

    # Without sampling.tools declared, a tool-enabled request is refused (-32602).
    async with (
        session_server({}) as srv,
        Client(srv.wire, protocol_version="2025-11-25", sampling_handler=sample),
    ):
        await srv.session.wait_initialized()
        with anyio.fail_after(5), pytest.raises(InvalidParams, match=r"sampling\.tools"):
            await srv.session.engine.request("sampling/createMessage", with_tools, timeout=5)
    assert seen == []

    async with (
        session_server({}) as srv,
        Client(
            srv.wire, protocol_version="2025-11-25", sampling_handler=sample, sampling_tools=True
        ),
    ):
        r = await ask(srv, "sampling/createMessage", with_tools)
        assert r["content"][0] == {
            "type": "tool_use",
            "id": "u1",
            "name": "weather",
            "input": {"city": "Oslo"},
        }
        assert seen[0].tools is not None and seen[0].tools[0].name == "weather"
        assert seen[0].tool_choice is not None and seen[0].tool_choice.mode == "auto"
        mixed = {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "toolUseId": "u1", "content": []},
                        {"type": "text", "text": "and also"},
                    ],
                }
            ],
            "maxTokens": 5,
            "tools": [tool],
        }
        with anyio.fail_after(5), pytest.raises(InvalidParams, match="only tool results"):
            await srv.session.engine.request("sampling/createMessage", mixed, timeout=5)
        srv.wire.check(ignore=lambda rec: bool(rec.message and "error" in rec.message))


# ---------------------------------------------------------------- elicitation


@pytest.mark.req("ELICIT-CLIENT-VALIDATE-RESPONSES")
async def test_form_elicitation_defaults_and_validation() -> None:
    answers: list[Any] = [
        {"action": "accept", "content": {"name": "Ann"}},
        ElicitResult(
            action="accept", content={"name": "Bo", "age": 7, "email": "bo@x.org", "tags": ["a"]}
        ),
        {"action": "accept", "content": {"name": "Cy", "age": "old"}},
        {"action": "accept", "content": {"age": 3}},
        {"action": "accept", "content": {"name": "Di", "email": "not-an-email"}},
        {"action": "accept", "content": {"name": "Ed", "extra": 1}},
        {"action": "decline", "content": {"name": "ignored"}},
        {"action": "cancel"},
    ]
    seen: list[ElicitRequestFormParams] = []

    async def elicit(params: ElicitRequestFormParams, ctx: Any) -> Any:
        seen.append(params)
        return answers.pop(0)

    async with (
        session_server({}) as srv,
        Client(srv.wire, protocol_version="2025-11-25", elicitation_handler=elicit),
    ):
        r = await ask(srv, "elicitation/create", {"mode": "form", **FORM})
        assert r == {
            "action": "accept",
            "content": {"name": "Ann", "age": 30, "color": "red", "ok": True},
        }
        r = await ask(srv, "elicitation/create", FORM)  # no mode: form
        assert r["content"] == {
            "name": "Bo",
            "age": 7,
            "email": "bo@x.org",
            "tags": ["a"],
            "color": "red",
            "ok": True,
        }
        for message in (
            "expected integer",
            "missing required property 'name'",
            "not an email",
            "no such field",
        ):
            with pytest.raises(InternalError, match=message):
                await ask(srv, "elicitation/create", FORM)
        assert await ask(srv, "elicitation/create", FORM) == {"action": "decline"}
        assert await ask(srv, "elicitation/create", FORM) == {"action": "cancel"}
        assert seen[0].message == "Who are you?"
        assert seen[0].requested_schema.required == ["name"]
        srv.wire.check()


async def test_form_elicitation_without_defaults() -> None:
    async def elicit(params: Any, ctx: Any) -> Any:
        return {"action": "accept", "content": {"name": "Ann"}}

    async with (
        session_server({}) as srv,
        Client(
            srv.wire,
            protocol_version="2025-11-25",
            elicitation_handler=elicit,
            elicitation_defaults=False,
        ),
    ):
        r = await ask(srv, "elicitation/create", FORM)
        assert r == {"action": "accept", "content": {"name": "Ann"}}


@pytest.mark.req("ELICIT-CLIENT-NO-MODE-IS-FORM", "ELICIT-CLIENT-UNDECLARED-MODE-INVALID-PARAMS")
async def test_elicitation_mode_not_declared_is_invalid_params() -> None:
    url_params = {
        "mode": "url",
        "message": "Sign in",
        "elicitationId": "e1",
        "url": "https://example.com/auth",
    }
    async with (
        session_server({}) as srv,
        Client(
            srv.wire,
            protocol_version="2025-11-25",
            elicitation_handler=lambda p, c: {"action": "decline"},
        ),
    ):
        await srv.session.wait_initialized()
        with anyio.fail_after(5), pytest.raises(InvalidParams, match="URL-mode"):
            await srv.session.engine.request("elicitation/create", url_params, timeout=5)
        assert await ask(srv, "elicitation/create", FORM) == {"action": "decline"}
    async with (
        session_server({}) as srv,
        Client(
            srv.wire,
            protocol_version="2025-11-25",
            url_elicitation_handler=lambda p, c: {"action": "decline"},
        ),
    ):
        await srv.session.wait_initialized()
        with anyio.fail_after(5), pytest.raises(InvalidParams, match="form-mode"):
            await srv.session.engine.request("elicitation/create", FORM, timeout=5)


@pytest.mark.req("ELICIT-CLIENT-IGNORE-UNKNOWN-COMPLETE")
async def test_url_elicitation_and_completion_notification() -> None:
    seen: list[ElicitRequestURLParams] = []
    completed: list[str] = []
    got = anyio.Event()

    async def on_url(params: ElicitRequestURLParams, ctx: Any) -> Any:
        seen.append(params)
        return {"action": "accept", "content": {"dropped": "x"}}

    async def on_complete(params: Any) -> None:
        completed.append(params.elicitation_id)
        got.set()

    url_params = {
        "mode": "url",
        "message": "Sign in",
        "elicitationId": "e1",
        "url": "https://example.com/auth",
    }
    async with session_server({}) as srv:
        async with Client(
            srv.wire,
            protocol_version="2025-11-25",
            url_elicitation_handler=on_url,
            elicitation_complete_handler=on_complete,
        ):
            assert await ask(srv, "elicitation/create", url_params) == {"action": "accept"}
            assert seen[0].url == "https://example.com/auth" and seen[0].elicitation_id == "e1"
            # Unknown ids are ignored; a known one is reported once.
            await srv.session.notify(
                "notifications/elicitation/complete", {"elicitationId": "nope"}
            )
            await srv.session.notify("notifications/elicitation/complete", {"elicitationId": "e1"})
            await srv.session.notify("notifications/elicitation/complete", {"elicitationId": "e1"})
            with anyio.fail_after(5):
                await got.wait()
            await ask(srv, "ping")  # everything sent before is handled by now
        assert completed == ["e1"]
        srv.wire.check()


# ---------------------------------------------------------------- roots


@pytest.mark.req("ROOTS-CLIENT-NOTIFY-LIST-CHANGED", "ROOTS-CLIENT-FILE-URI")
async def test_roots_list_and_change_notification(tmp_path: Path) -> None:
    a = tmp_path / "a"
    a.mkdir()
    async with session_server({}) as srv:
        async with Client(
            srv.wire,
            protocol_version="2025-11-25",
            roots=[a, {"uri": "file:///srv/data", "name": "data"}],
        ) as client:
            r = await ask(srv, "roots/list")
            assert r == {
                "roots": [
                    {"uri": a.as_uri(), "name": "a"},
                    {"uri": "file:///srv/data", "name": "data"},
                ]
            }
            await client.set_roots(["file:///other"])
            assert await ask(srv, "roots/list") == {"roots": [{"uri": "file:///other"}]}
            with pytest.raises(ValueError, match="file://"):
                await client.set_roots(["https://example.com"])
        assert srv.sent_methods().count("notifications/roots/list_changed") == 1
        srv.wire.check()


async def test_roots_from_a_function() -> None:
    current = ["file:///one"]

    async def roots() -> list[str]:
        return list(current)

    async with (
        session_server({}) as srv,
        Client(srv.wire, protocol_version="2025-11-25", roots=roots) as client,
    ):
        assert await ask(srv, "roots/list") == {"roots": [{"uri": "file:///one"}]}
        current.append("file:///two")
        await client.notify_roots_changed()
        assert len((await ask(srv, "roots/list"))["roots"]) == 2
    async with session_server({}) as srv, Client(srv.wire, protocol_version="2025-11-25") as client:
        with pytest.raises(MCPError, match="roots"):
            await client.set_roots([])


async def test_url_elicitation_required_error() -> None:
    from mcpkit._exceptions import URLElicitationRequired

    pending = {
        "mode": "url",
        "elicitationId": "e-7",
        "url": "https://mcp.example.com/connect?elicitationId=e-7",
        "message": "Authorization is required.",
    }

    async def call(ctx: Any, params: Any) -> Any:
        raise URLElicitationRequired(
            message="This request requires more information.", data={"elicitations": [pending]}
        )

    shown: list[Any] = []
    completed = anyio.Event()

    def on_url(params: ElicitRequestURLParams, ctx: Any) -> dict[str, Any]:
        shown.append((params.url, ctx.request_id, ctx.name))
        return {"action": "accept"}

    async def on_complete(params: Any) -> None:  # async: sync ones run in a worker thread
        completed.set()

    async with (
        session_server({"tools/call": call}) as srv,
        Client(
            srv.wire,
            protocol_version="2025-11-25",
            url_elicitation_handler=on_url,
            elicitation_complete_handler=on_complete,
        ) as client,
    ):
        with anyio.fail_after(5):
            with pytest.raises(URLElicitationRequired) as ei:
                await client.call_tool("needs_auth")
            assert ei.value.code == -32042
            assert ei.value.elicitations == [pending]
            assert shown == [(pending["url"], None, "test-server")]
            # The server's completion notification for that id now reaches the application.
            await srv.session.notify("notifications/elicitation/complete", {"elicitationId": "e-7"})
            await completed.wait()
