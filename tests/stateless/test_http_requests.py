"""Revision 2026-07-28 over Streamable HTTP, in process: requests without a session.

Discovery, the ``_meta`` every request carries, the standard and custom headers mirroring
the body, version and method errors with their HTTP statuses; every message the server
sends is checked against the 2026-07-28 schema.
"""

from __future__ import annotations

import runpy
from typing import Annotated, Any

import pytest
from _stateless_helpers import (
    EVERYTHING,
    REV,
    b64,
    headers_for,
    meta,
    post,
    request,
)
from pydantic import Field

from mcpkit import Context, Server
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio


def _server() -> Server:
    server = Server("stateless-http", version="2.0", instructions="Be brief.")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    def route(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        shard: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Shard"})] = 0,
        dry: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Dry-Run"})] = False,
        note: str = "",
    ) -> str:
        """Arguments mirrored into Mcp-Param-* headers."""
        return f"{region}/{shard}/{dry}/{note}"

    @server.prompt()
    def hello() -> str:
        """Say hello."""
        return "hello"

    @server.resource("test://one", mime_type="text/plain")
    def one() -> str:
        """One resource."""
        return "one"

    return server


async def test_discover_says_what_the_server_is() -> None:
    async with ASGIClient(_server().http_app()) as http:
        answer = await post(http, request("server/discover"))
    assert answer.status == 200
    result = answer.result
    assert result["supportedVersions"][0] == REV
    assert set(result["capabilities"]) >= {"tools", "prompts", "resources", "logging"}
    assert "tasks" not in result["capabilities"]  # an extension at 2026-07-28, not core
    assert result["instructions"] == "Be brief."
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "stateless-http",
        "version": "2.0",
    }
    # Discovery is cacheable, with the server's default hints.
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


async def test_every_result_names_its_type_and_the_server() -> None:
    async with ASGIClient(_server().http_app()) as http:
        for method, params in [
            ("tools/list", {}),
            ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
            ("prompts/get", {"name": "hello"}),
            ("resources/read", {"uri": "test://one"}),
        ]:
            result = (await post(http, request(method, params))).result
            assert result["resultType"] == "complete", method
            assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "stateless-http"


async def test_client_info_is_optional() -> None:
    body = request("server/discover", {"_meta": meta()})
    del body["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]
    async with ASGIClient(_server().http_app()) as http:
        answer = await post(http, body)
    assert answer.status == 200 and answer.result["supportedVersions"]


@pytest.mark.parametrize(
    "drop",
    [None, "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"],
    ids=["no-meta", "no-version", "no-capabilities"],
)
async def test_a_request_without_the_required_meta_is_invalid_params(drop: str | None) -> None:
    body = request("server/discover", id=41)
    if drop is None:
        del body["params"]["_meta"]
    else:
        del body["params"]["_meta"][drop]
    async with ASGIClient(_server().http_app()) as http:
        answer = await post(http, body)
    assert answer.status == 400
    assert answer.response["id"] == 41
    assert answer.error["code"] == -32602


async def test_an_unsupported_version_is_refused_with_the_supported_ones() -> None:
    body = request(
        "tools/list", {"_meta": meta() | {"io.modelcontextprotocol/protocolVersion": "v9"}}
    )
    async with ASGIClient(_server().http_app()) as http:
        answer = await post(http, body, headers_for(body, mcp_protocol_version="v9"))
        discovered = (await post(http, request("server/discover"))).result
    assert answer.status == 400
    assert answer.error["code"] == -32022
    assert answer.error["data"]["requested"] == "v9"
    assert answer.error["data"]["supported"] == discovered["supportedVersions"]


@pytest.mark.parametrize(
    ("overrides", "why"),
    [
        ({"mcp_protocol_version": None}, "MCP-Protocol-Version header is missing"),
        ({"mcp_protocol_version": "2025-11-25"}, "does not match"),
        ({"mcp_method": None}, "Mcp-Method header is missing"),
        ({"mcp_method": "TOOLS/CALL"}, "does not match body method"),
        ({"mcp_name": None}, "needs an Mcp-Name header"),
        ({"mcp_name": "other"}, "does not match body name"),
        ({"mcp_name": "=?base64?ZWNobw?="}, "malformed"),  # bad Base64 padding
    ],
)
@pytest.mark.req("HTTP-2026-REJECT-HEADER-BODY-MISMATCH")
async def test_standard_headers_must_mirror_the_body(
    overrides: dict[str, str | None], why: str
) -> None:
    body = request("tools/call", {"name": "echo", "arguments": {"text": "x"}}, id="r-1")
    async with ASGIClient(_server().http_app()) as http:
        answer = await post(http, body, headers_for(body, **overrides))
    assert answer.status == 400
    assert answer.response["id"] == "r-1"
    assert answer.error["code"] == -32020
    assert why in answer.error["message"]


async def test_header_values_are_read_as_http_reads_them() -> None:
    body = request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    async with ASGIClient(_server().http_app()) as http:
        # Whitespace around a value is not part of it (RFC 9110); a Base64 name is decoded;
        # header names ignore case.
        padded = await post(http, body, headers_for(body, mcp_name="  echo\t"))
        encoded = await post(http, body, headers_for(body, mcp_name=b64("echo")))
        shouting = headers_for(body)
        shouting["MCP-METHOD"] = shouting.pop("mcp-method")
        upper = await post(http, body, shouting)
    for answer in (padded, encoded, upper):
        assert answer.status == 200
        assert answer.result["content"][0]["text"] == "x"


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
    ],
)
async def test_methods_the_revision_lacks_are_404_method_not_found(method: str) -> None:
    params: dict[str, Any] = {"uri": "test://one"} if "subscribe" in method else {}
    if method == "initialize":
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        }
    body = request(method, params, id=500)
    app = _server().http_app()
    async with ASGIClient(app) as http:
        answer = await post(http, body)
    assert answer.status == 404
    assert answer.response["id"] == 500
    assert answer.error["code"] == -32601
    # No session was opened by a stateless initialize.
    assert len(app.sessions) == 0


async def test_a_notification_is_accepted_and_ignored() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    async with ASGIClient(_server().http_app()) as http:
        answer = await post(http, note, headers_for(note), validate=False)
    assert (answer.status, answer.messages) == (202, [])


# ---------------------------------------------------------------- x-mcp-header


def _route(args: dict[str, Any], **params: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    body = request("tools/call", {"name": "route", "arguments": args})
    return body, headers_for(body, **{f"mcp_param_{k}": v for k, v in params.items()})


async def test_marked_arguments_are_listed_with_their_header_names() -> None:
    server = _server()
    assert server.hosting().tool_header_params("route") == (
        ("Region", ("region",)),
        ("Shard", ("shard",)),
        ("Dry-Run", ("dry",)),
    )
    assert server.hosting().tool_header_params("echo") == ()
    assert server.hosting().tool_header_params("nope") == ()


@pytest.mark.parametrize(
    ("args", "params"),
    [
        ({"region": "eu"}, {"region": "eu"}),
        (
            {"region": "eu", "shard": 42, "dry": True},
            {"region": "eu", "shard": "42", "dry_run": "true"},
        ),
        ({"region": "eu", "shard": 42}, {"region": "eu", "shard": "42.0"}),  # numerically equal
        ({"region": "Grüße"}, {"region": b64("Grüße")}),
        ({"region": " padded "}, {"region": b64(" padded ")}),
        ({"region": "=?base64?x"}, {"region": "=?base64?x"}),  # no closing sentinel: literal
        ({"region": "eu", "note": "n"}, {"region": "eu", "other": "ignored"}),
        # Values a client cannot mirror need no header (the arguments' check judges them).
        ({"region": "eu", "shard": 2**60}, {"region": "eu"}),
        ({"region": "eu", "shard": None}, {"region": "eu"}),
    ],
)
async def test_matching_param_headers_are_accepted(
    args: dict[str, Any], params: dict[str, str]
) -> None:
    body, headers = _route(args, **params)
    async with ASGIClient(_server().http_app()) as http:
        answer = await post(http, body, headers)
    assert answer.status == 200, answer.messages
    assert answer.result["resultType"] == "complete"


@pytest.mark.parametrize(
    ("args", "params", "why"),
    [
        ({"region": "eu"}, {}, "header is missing"),
        ({"region": "eu"}, {"region": "us"}, "does not match"),
        ({"region": "eu"}, {"region": "EU"}, "does not match"),
        ({"region": "eu", "shard": 1}, {"region": "eu", "shard": "2"}, "does not match"),
        ({"region": "eu", "shard": 1}, {"region": "eu", "shard": "one"}, "does not match"),
        ({"region": "eu", "dry": False}, {"region": "eu", "dry_run": "False"}, "does not match"),
        ({"region": "eu"}, {"region": "=?base64?ZXU?="}, "malformed"),  # bad padding
        ({"region": "eu"}, {"region": "=?base64?Z!!u?="}, "malformed"),  # not Base64
        ({"region": "é"}, {"region": "é"}, "malformed"),  # not header text: Base64 needed
        ({}, {"region": "eu"}, "is not set"),
    ],
)
async def test_param_headers_that_do_not_mirror_the_arguments_are_refused(
    args: dict[str, Any], params: dict[str, str], why: str
) -> None:
    body, headers = _route(args, **params)
    async with ASGIClient(_server().http_app()) as http:
        answer = await post(http, body, headers)
    assert answer.status == 400
    assert answer.error["code"] == -32020
    assert why in answer.error["message"]


def test_invalid_marks_are_refused_at_registration() -> None:
    server = Server("bad-marks")

    def f(x: Any = None) -> str:
        return ""

    for schema, why in [
        (
            {"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}},
            "number",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": "A B"}}},
            "token",
        ),
        (
            {
                "type": "object",
                "properties": {
                    "x": {"type": "string", "x-mcp-header": "Same"},
                    "y": {"type": "string", "x-mcp-header": "SAME"},
                },
            },
            "twice",
        ),
        (
            {
                "type": "object",
                "properties": {
                    "x": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}
                },
            },
            "properties",
        ),
    ]:
        with pytest.raises(ValueError, match=why):
            server.add_tool(f, name="f", input_schema=schema)
    assert server.tools == []


async def test_the_everything_example_serves_the_conformance_header_tool() -> None:
    server = runpy.run_path(str(EVERYTHING))["server"]
    body = request("tools/call", {"name": "test_custom_header", "arguments": {"region": "eu"}})
    async with ASGIClient(server.http_app()) as http:
        ok = await post(http, body, headers_for(body, mcp_param_region="eu"))
        missing = await post(http, body)
    assert ok.result["content"][0]["text"] == "ran 'SELECT 1' in eu (limit 10)"
    assert (missing.status, missing.error["code"]) == (400, -32020)


async def test_capabilities_follow_what_is_registered_later() -> None:
    server = Server("grows")

    @server.tool()
    def one() -> str:
        """A tool."""
        return "1"

    async with ASGIClient(server.http_app()) as http:
        before = (await post(http, request("server/discover"))).result["capabilities"]
        server.add_prompt(lambda: "hi", name="late", description="Registered while serving.")
        after = (await post(http, request("server/discover"))).result["capabilities"]
        listed = (await post(http, request("prompts/list"))).result
    assert "prompts" not in before
    assert after["prompts"] == {"listChanged": True}
    assert [p["name"] for p in listed["prompts"]] == ["late"]


async def test_initialize_says_the_revision_has_no_handshake() -> None:
    body = request("initialize", id=3)
    async with ASGIClient(_server().http_app()) as http:
        answer = await post(http, body)
    assert answer.status == 404
    assert "no handshake" in answer.error["message"]


async def test_an_app_answering_in_json_serves_the_same() -> None:
    app = _server().http_app(json_response=True)
    call = request("tools/call", {"name": "echo", "arguments": {"text": "j"}})
    async with ASGIClient(app) as http:
        # The first request also starts the app's shared session: answered all the same.
        found = await post(http, request("server/discover"))
        called = await post(http, call)
        mismatch = await post(http, call, headers_for(call, mcp_name="other"))
        removed = await post(http, request("ping"))
    for answer in (found, called, mismatch, removed):
        assert answer.content_type.startswith("application/json")
    assert found.result["supportedVersions"][0] == REV
    assert called.result["content"][0]["text"] == "j"
    assert (mismatch.status, mismatch.error["code"]) == (400, -32020)
    assert (removed.status, removed.error["code"]) == (404, -32601)


async def test_a_json_app_streams_a_request_that_asked_for_progress_or_logs() -> None:
    # The server picks the answer's form per request: a request with a progress token or a
    # log level would lose what comes before its answer in one JSON body, so it gets SSE.
    server = Server("json-but-live")

    @server.tool()
    async def steps(ctx: Context) -> str:
        """Report progress and log twice."""
        for i in (1, 2):
            await ctx.report_progress(i, 2)
            await ctx.info(f"step {i}")
        return "done"

    app = server.http_app(json_response=True)
    plain = request("tools/call", {"name": "steps"})
    live = request(
        "tools/call",
        {"name": "steps", "_meta": {**meta(log_level="info"), "progressToken": "p"}},
        id=2,
    )
    async with ASGIClient(app) as http:
        quiet = await post(http, plain)
        loud = await post(http, live)
    assert quiet.content_type.startswith("application/json")
    assert quiet.notifications == []
    assert loud.content_type.startswith("text/event-stream")
    assert [n["method"] for n in loud.notifications] == [
        "notifications/progress",
        "notifications/message",
    ] * 2
    assert loud.result["content"][0]["text"] == "done"
