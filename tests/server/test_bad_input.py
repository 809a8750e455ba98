"""Bad input to every method: a clear JSON-RPC error, and a server that keeps serving."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from tests.server._harness import connect

from mcpkit._exceptions import InvalidParams, ProtocolError

pytestmark = pytest.mark.anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

BAD: list[tuple[str, Any]] = [
    ("tools/list", {"cursor": 5}),
    ("tools/list", {"cursor": "x" * 1000}),
    ("tools/call", None),
    ("tools/call", {}),
    ("tools/call", {"name": None}),
    ("tools/call", {"name": "echo", "arguments": "text=hi"}),
    ("resources/list", {"cursor": ["a"]}),
    ("resources/templates/list", {"cursor": "bad"}),
    ("resources/read", None),
    ("resources/read", {"uri": ""}),
    ("resources/read", {"uri": ["test://static-text"]}),
    ("resources/subscribe", {}),
    ("resources/subscribe", {"uri": 1}),
    ("resources/unsubscribe", {"uri": None}),
    ("prompts/list", {"cursor": {}}),
    ("prompts/get", None),
    ("prompts/get", {"name": 1}),
    ("prompts/get", {"name": "test_prompt_with_arguments", "arguments": ["a", "b"]}),
    ("prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": 1, "arg2": 2}}),
    ("completion/complete", None),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": ""}},
    ),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "code_review"}}),
    ("completion/complete", {"ref": "code_review", "argument": {"name": "language", "value": 3}}),
    ("logging/setLevel", None),
    ("logging/setLevel", {"level": 3}),
    ("logging/setLevel", {"level": "DEBUG"}),
]


@pytest.mark.parametrize(("method", "params"), BAD)
async def test_bad_params_get_invalid_params(method: str, params: Any) -> None:
    from everything import server

    async with connect(server) as c:
        with pytest.raises(InvalidParams) as e:
            await c.bad_call(method, params)
        assert e.value.message and "Internal" not in e.value.message
        # Still serving.
        assert (await c.tool("echo", {"text": "alive"}))["content"][0]["text"] == "alive"


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("tools/call", {"name": "does_not_exist", "arguments": {}}, -32602),
        ("resources/read", {"uri": "test://does-not-exist"}, -32002),
        ("resources/read", {"uri": "test://template/../data"}, -32002),
        ("resources/subscribe", {"uri": "nothing://here"}, -32002),
        ("prompts/get", {"name": "does_not_exist"}, -32602),
        ("prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}}, -32602),
        (
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}},
            -32602,
        ),
        ("tools/list", {"cursor": "dG9vbHM6LTE="}, -32602),
    ],
)
async def test_unknown_names_and_uris(method: str, params: Any, code: int) -> None:
    from everything import server

    async with connect(server) as c:
        with pytest.raises(ProtocolError) as e:
            await c.call(method, params)
        assert e.value.code == code
        assert (await c.tool("echo", {"text": "alive"}))["content"][0]["text"] == "alive"
