"""Results that JSON cannot carry are failures, never a success with a wrong answer.

Before: ``float("nan")`` went out as the text ``"null"``, and an object with no text form as
``<Thing object at 0x7f...>`` (a memory address), both as successful results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.hostile._proc import StdioServer

SERVER = """
import decimal
from mcpkit import Server

server = Server("answers")


class Thing:
    pass


@server.tool()
def nan() -> float:
    '''Not a number.'''
    return float("nan")


@server.tool()
def nested_infinity():
    '''An infinity deep inside.'''
    return {"values": [1.0, float("inf")]}


@server.tool()
def opaque():
    '''An object with no text form.'''
    return Thing()


@server.tool()
def opaque_inside():
    '''The same, inside a list.'''
    return [Thing()]


@server.tool()
def money():
    '''A Decimal has a text form of its own.'''
    return decimal.Decimal("12.50")
"""


@pytest.fixture
def server(tmp_path: Path) -> Any:
    with StdioServer(tmp_path, SERVER) as s:
        s.handshake()
        yield s


@pytest.mark.parametrize("tool", ["nan", "nested_infinity", "opaque", "opaque_inside"])
def test_unrepresentable_result_is_an_error(server: StdioServer, tool: str) -> None:
    server.call(2, tool)
    result = server.answer(2)["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "null" not in text and "0x" not in text and "object at" not in text
    assert "could not be converted" in text or "Error executing tool" in text


def test_value_with_a_text_form_is_shown_as_text(server: StdioServer) -> None:
    server.call(2, "money")
    result = server.answer(2)["result"]
    assert result.get("isError") is not True
    assert result["content"][0]["text"] == "12.50"
