"""What a client user does with results first: hand a tool's schemas to JSON (an LLM API's
tool list) and branch on ``is_error`` (issue 33)."""

from __future__ import annotations

import json

import anyio
import pytest
from typing_extensions import TypedDict

from mcpkit import Client, Server, ToolError
from mcpkit.types import CallToolResult, ObjectSchema, Tool, ToolSchema

pytestmark = pytest.mark.anyio


class Sum(TypedDict):
    total: int


def make_server() -> Server:
    server = Server("plain")

    @server.tool()
    def add(a: int, b: int = 2) -> Sum:
        """Adds."""
        return {"total": a + b}

    @server.tool(input_schema={"type": "object", "x-custom": [1, 2], "properties": {}})
    def raw() -> str:
        return "ok"

    @server.tool()
    def fail() -> str:
        raise ToolError("no luck")

    return server


async def test_tool_schemas_are_plain_json_and_results_say_false() -> None:
    with anyio.fail_after(10):
        async with Client(make_server()) as client:
            tools = {t.name: t for t in await client.list_tools()}
            schema = tools["add"].input_schema
            # json.dumps takes it as it is, and gives what the server sent.
            assert json.loads(json.dumps(schema)) == tools["add"].to_wire()["inputSchema"]
            assert isinstance(schema, dict) and schema["required"] == ["a"]
            assert schema.properties is not None and set(schema.properties) == {"a", "b"}
            output = json.loads(json.dumps(tools["add"].output_schema))
            assert output == tools["add"].to_wire()["outputSchema"]
            assert set(output["properties"]) == {"total"}
            # Keywords MCP does not name are kept, in the dict and on the wire.
            assert json.dumps(tools["raw"].input_schema, sort_keys=True) == (
                '{"properties": {}, "type": "object", "x-custom": [1, 2]}'
            )
            ok = await client.call_tool("add", {"a": 1})
            failed = await client.call_tool("fail", {})
    assert ok.is_error is False and ok.structured_content == {"total": 3}
    assert "isError" not in ok.to_wire()
    assert failed.is_error is True and failed.to_wire()["isError"] is True


def test_schema_classes_build_and_read_as_before() -> None:
    built = ObjectSchema(dialect="https://json-schema.org/draft/2020-12/schema", required=["a"])
    assert built == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "required": ["a"],
        "type": "object",
    }
    assert built.dialect and built.type == "object" and built.required == ["a"]
    assert ToolSchema(type="array").to_wire() == {"type": "array"}
    read = Tool.model_validate({"name": "t", "inputSchema": {"properties": {}}})
    assert read.input_schema == {"properties": {}, "type": "object"}  # as before: filled in
    with pytest.raises(ValueError, match="type 'object'"):
        Tool.model_validate({"name": "t", "inputSchema": {"type": "array"}})
    with pytest.raises(ValueError, match="type 'object'"):
        ObjectSchema(type="string")


def test_is_error_defaults_to_false_without_changing_the_wire() -> None:
    read = CallToolResult.model_validate({"content": []})
    assert read.is_error is False and read.to_wire() == {"content": []}
    assert CallToolResult(content=[], is_error=None).to_wire() == {"content": []}
    assert CallToolResult(content=[], is_error=True).to_wire()["isError"] is True
    assert CallToolResult.model_validate({"content": [], "isError": None}).is_error is False
