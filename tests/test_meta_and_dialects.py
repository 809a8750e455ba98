"""`_meta` key names and JSON Schema dialects (basic/index.mdx), on both sides."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit import Client, InvalidResponse, Server
from mcpkit._session import RequestContext, ServerSession
from mcpkit._transports import memory_pair
from mcpkit.types._dialects import UnsupportedDialect, schema_dialect
from mcpkit.types._jsonschema import schema_errors
from mcpkit.types._metakeys import check_meta, is_reserved_meta_key, is_valid_meta_key

pytestmark = pytest.mark.anyio
SRC = Path(__file__).resolve().parents[1] / "src" / "mcpkit"


@pytest.mark.req("META-PREFIX-DOT-LABELS-SLASH", "META-PREFIX-LABEL-CHARS", "META-NAME-ALNUM-ENDS")
@pytest.mark.parametrize(
    ("key", "ok"),
    [
        ("progressToken", True),
        ("", True),
        ("a", True),
        ("com.example/trace-id", True),
        ("io.modelcontextprotocol/related-task", True),
        ("com.example-corp.api/x.y_z", True),
        ("x1/y", True),
        ("com..example/x", False),  # empty label
        ("1com.example/x", False),  # label starts with a digit
        ("com.example-/x", False),  # label ends with a hyphen
        ("com.ex_ample/x", False),  # underscore in a label
        ("com.example", True),  # no slash: a plain name (dots allowed inside names)
        ("com.example/", True),  # prefix with an empty name
        ("com.example/-x", False),  # name starts with a hyphen
        ("com.example/x.", False),  # name ends with a dot
        ("com.example/x y", False),
        ("/x", False),
    ],
)
def test_meta_key_format(key: str, ok: bool) -> None:
    assert is_valid_meta_key(key) is ok


def test_reserved_prefixes() -> None:
    assert is_reserved_meta_key("io.modelcontextprotocol/x")
    assert is_reserved_meta_key("dev.mcp/x")
    assert is_reserved_meta_key("org.modelcontextprotocol.api/x")
    assert not is_reserved_meta_key("com.example.mcp/x")
    assert not is_reserved_meta_key("progressToken")


def test_server_refuses_malformed_meta_keys_at_registration() -> None:
    server = Server("meta")
    with pytest.raises(ValueError, match="invalid _meta key"):
        server.add_tool(lambda: "x", name="t", meta={"com.example/ok": 1, "bad key": 2})
    with pytest.raises(ValueError, match="invalid _meta key"):
        check_meta({"-x": 1}, "here")
    check_meta({"com.example/x": {"anything": [1, None]}}, "here")


@pytest.mark.req("META-PREFIX-REVERSE-DNS")
def test_the_meta_keys_mcpkit_itself_uses_are_valid_reverse_dns() -> None:
    found: set[str] = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                v = node.value
                if v.startswith(("io.", "com.", "org.", "dev.")) and "/" in v and " " not in v:
                    found.add(v)
    assert "io.modelcontextprotocol/related-task" in found
    for key in found:
        assert is_valid_meta_key(key), key
        assert key.split(".", 1)[0] in ("io", "com", "org", "dev"), key  # a TLD first


@pytest.mark.req("META-RESERVED-NO-ASSUMPTIONS")
async def test_reserved_keys_with_unknown_values_pass_through_untouched() -> None:
    odd: dict[str, Any] = {
        "io.modelcontextprotocol/some-future-key": {"nested": [1, None, "x"]},
        "dev.mcp/flag": False,
    }
    server = Server("meta")

    @server.tool(meta=odd)
    def echo(text: str) -> str:
        """Echo."""
        return text

    async with Client(server) as client:
        tools = await client.list_tools()
        assert tools[0].meta == odd
        # and such keys in a request's _meta do not disturb the call
        result = await client.send_request(
            "tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": odd}
        )
        assert result["content"][0]["text"] == "hi"


@pytest.mark.req("SCHEMA-VALIDATE-BY-DIALECT", "SCHEMA-DEFAULT-2020-12")
def test_validation_follows_the_declared_dialect() -> None:
    assert schema_dialect({"type": "object"}) == "2020-12"
    assert schema_dialect({"$schema": "https://json-schema.org/draft/2020-12/schema"}) == "2020-12"
    assert schema_dialect({"$schema": "http://json-schema.org/draft-07/schema#"}) == "draft-07"
    # draft-07's tuple form of `items` and `definitions` refs
    d7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "items": [{"type": "string"}, {"$ref": "#/definitions/n"}],
        "definitions": {"n": {"type": "integer"}},
    }
    assert schema_errors(["a", 1], d7) == []
    assert schema_errors(["a", "b"], d7) != []
    # 2020-12: prefixItems and $defs
    d2020 = {
        "type": "array",
        "prefixItems": [{"type": "string"}],
        "items": {"$ref": "#/$defs/n"},
        "$defs": {"n": {"type": "integer"}},
    }
    assert schema_errors(["a", 1, 2], d2020) == []
    assert schema_errors(["a", 1, "x"], d2020) != []


@pytest.mark.req("SCHEMA-UNSUPPORTED-DIALECT-ERROR")
async def test_unsupported_dialects_are_refused_with_a_clear_error() -> None:
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}
    with pytest.raises(UnsupportedDialect, match="draft-04"):
        schema_dialect(draft4)
    errors = schema_errors({}, draft4)
    assert len(errors) == 1 and "not supported" in errors[0]
    server = Server("dialects")
    with pytest.raises(ValueError, match="not supported"):
        server.add_tool(lambda: "x", name="t", input_schema=draft4)
    # client side: a tool whose outputSchema declares an unknown dialect (from a server we
    # did not write) is reported clearly, not validated by the wrong rules
    tool = {
        "name": "thing",
        "inputSchema": {"type": "object"},
        "outputSchema": {"$schema": "https://example.com/my-dialect", "type": "object"},
    }

    async def list_tools(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        return {"tools": [tool]}

    async def call_tool(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
        return {"content": [], "structuredContent": {"a": 1}}

    a, b = memory_pair()
    session = ServerSession(
        b,
        server_info={"name": "s", "version": "1"},
        capabilities={"tools": {}},
        handlers={"tools/list": list_tools, "tools/call": call_tool},
    )
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            async with Client(a) as client:
                with pytest.raises(InvalidResponse, match="not supported"):
                    await client.call_tool("thing")
            tg.cancel_scope.cancel()
    finally:
        a.close()
        b.close()
