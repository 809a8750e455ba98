"""Unknown tool arguments (issue 45): refused by default as a tool execution error naming the
accepted ones (the spec's "input validation errors", so a model can correct itself), in both
eras, in process and over stdio; ``extra_arguments="ignore"`` drops them; a ``**kwargs``
tool receives them; the listed schemas say ``additionalProperties: false`` only for the
refusing tools, and stay valid against the official schemas.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests._schema import schema_errors
from tests.server._harness import connect

from mcpkit import Client, InvalidParams, Server
from mcpkit._client._cli import main

pytestmark = pytest.mark.anyio
REVISIONS = ["2025-11-25", "2026-07-28"]
TIMEOUT = 30

#: What a misspelt ``days`` gets back, word for word.
REFUSED = (
    "Invalid arguments for tool 'forecast':\n- unknown argument `dayz` (accepted: `city`, `days`)"
)

SERVER = '''
import sys

from mcpkit import Server

server = Server("weather")


@server.tool()
def forecast(city: str, days: int = 3) -> str:
    """The weather."""
    return f"sunny in {city} for {days} days"


@server.tool(extra_arguments="ignore")
def lenient(city: str) -> str:
    """Extras dropped."""
    return city


@server.tool()
def gather(city: str, **extra: object) -> str:
    """Extras received."""
    return city + " " + ",".join(f"{k}={v}" for k, v in sorted(extra.items()))


@server.tool()
def loaded() -> str:
    """Whether pydantic was imported (a refusal of a scalar tool needs none)."""
    return "pydantic" if "pydantic" in sys.modules else ""
'''


def _server() -> Server:
    namespace: dict[str, Any] = {}
    exec(SERVER, namespace)  # the same server in process as over stdio
    server: Server = namespace["server"]

    @server.tool(input_schema={"type": "object", "properties": {"q": {"type": "string"}}})
    def open_schema(q: str = "") -> str:
        """An explicit schema without additionalProperties: it allows extras."""
        return q

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "additionalProperties": False,
        }
    )
    def closed_schema(q: str = "") -> str:
        """An explicit closed schema: the same refusal as a derived one."""
        return q

    @server.tool()
    def count(name: str, **counts: int) -> str:
        """Extras checked by the annotation of **counts."""
        return name + " " + ",".join(f"{k}={v!r}" for k, v in sorted(counts.items()))

    @server.prompt()
    def greet(name: str) -> str:
        """A prompt: an unknown argument is -32602 (no isError result to carry it)."""
        return f"Hello {name}"

    return server


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_unknown_argument_refused_in_process(revision: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(_server(), protocol_version=revision) as client:
            refused = await client.call_tool("forecast", {"city": "Paris", "dayz": 5})
            fine = await client.call_tool("forecast", {"city": "Paris", "days": 5})
            two = await client.call_tool("forecast", {"city": 1, "dayz": 5, "q": 1})
            open_ = await client.call_tool("open_schema", {"q": "x", "z": 1})
            closed = await client.call_tool("closed_schema", {"q": "x", "z": 1})
            with pytest.raises(InvalidParams, match="has no argument"):
                await client.get_prompt("greet", {"name": "Ada", "nmae": "x"})
    assert refused.is_error and _text(refused) == REFUSED
    assert not fine.is_error and _text(fine) == "sunny in Paris for 5 days"
    # Beside a wrong type: one line for the unknown ones, as a wrong type gets one.
    assert _text(two) == (
        "Invalid arguments for tool 'forecast':\n"
        "- `city`: Input should be a valid string, got 1\n"
        "- unknown arguments `dayz`, `q` (accepted: `city`, `days`)"
    )
    assert not open_.is_error and _text(open_) == "x"
    assert closed.is_error
    assert _text(closed) == (
        "Invalid arguments for tool 'closed_schema':\n- unknown argument `z` (accepted: `q`)"
    )


async def test_the_refusal_is_a_valid_tool_execution_error_on_the_wire() -> None:
    # Every message of the exchange is checked against the official schema by the harness.
    async with connect(_server()) as c:
        raw = await c.tool("forecast", {"city": "Paris", "dayz": 5})
    assert raw == {"content": [{"type": "text", "text": REFUSED}], "isError": True}


@pytest.mark.parametrize("revision", REVISIONS)
async def test_extras_ignored_or_received_on_request(revision: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(_server(), protocol_version=revision) as client:
            lenient = await client.call_tool("lenient", {"city": "Oslo", "dayz": 5})
            gather = await client.call_tool("gather", {"city": "Oslo", "dayz": 5, "unit": "C"})
            none = await client.call_tool("loaded", {"x": 1})
            counted = await client.call_tool("count", {"name": "n", "a": "2", "b": 3})
            miscounted = await client.call_tool("count", {"name": "n", "a": "two"})
    assert not lenient.is_error and _text(lenient) == "Oslo"
    assert not gather.is_error and _text(gather) == "Oslo dayz=5,unit=C"
    assert not counted.is_error and _text(counted) == "n a=2,b=3"
    assert miscounted.is_error and _text(miscounted) == (
        "Invalid arguments for tool 'count':\n"
        "- `a`: Input should be a valid integer, unable to parse string as an integer, got 'two'"
    )
    assert none.is_error
    assert _text(none) == (
        "Invalid arguments for tool 'loaded':\n- unknown argument `x` (this tool takes no arguments)"
    )


@pytest.mark.parametrize("revision", REVISIONS)
async def test_listed_schemas_say_which_tools_refuse(revision: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(_server(), protocol_version=revision) as client:
            listed = await client.send_request("tools/list", None)
    tools = {t["name"]: t for t in listed["tools"]}
    assert tools["forecast"]["inputSchema"] == {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer", "default": 3}},
        "required": ["city"],
        "additionalProperties": False,
    }
    assert tools["loaded"]["inputSchema"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    # Those that accept extras, and explicit schemas, kept as written.
    for name in ("lenient", "gather", "open_schema"):
        assert "additionalProperties" not in tools[name]["inputSchema"], name
    assert tools["closed_schema"]["inputSchema"]["additionalProperties"] is False
    assert tools["count"]["inputSchema"]["additionalProperties"] == {"type": "integer"}
    for tool in listed["tools"]:
        assert schema_errors(revision, "Tool", tool) == [], tool["name"]


async def test_a_mounted_tool_is_refused_once_by_its_own_server() -> None:
    parent = Server("hub")
    parent.mount(_server(), prefix="w")
    with anyio.fail_after(TIMEOUT):
        async with Client(parent) as client:
            listed = {t.name: t for t in await client.list_tools()}
            refused = await client.call_tool("w_forecast", {"city": "Paris", "dayz": 5})
            gather = await client.call_tool("w_gather", {"city": "Oslo", "unit": "C"})
    assert (
        listed["w_forecast"].input_schema.model_dump(by_alias=True, exclude_none=True)[
            "additionalProperties"
        ]
        is False
    )
    # The mounted server's own refusal, not a second one from the hub.
    assert refused.is_error and _text(refused) == REFUSED
    assert _text(gather) == "Oslo unit=C"


@pytest.mark.parametrize("revision", REVISIONS)
async def test_unknown_argument_refused_over_stdio(tmp_path: Path, revision: str) -> None:
    script = tmp_path / "weather.py"
    script.write_text(SERVER + "\nif __name__ == '__main__':\n    server.run()\n")
    with anyio.fail_after(TIMEOUT):
        async with Client([sys.executable, str(script)], protocol_version=revision) as client:
            refused = await client.call_tool("forecast", {"city": "Paris", "dayz": 5})
            pydantic = await client.call_tool("loaded", {})
            lenient = await client.call_tool("lenient", {"city": "Oslo", "dayz": 5})
            gather = await client.call_tool("gather", {"city": "Oslo", "dayz": 5})
    assert refused.is_error and _text(refused) == REFUSED
    assert _text(pydantic) == "", "refusing an unknown argument imported pydantic"
    assert _text(lenient) == "Oslo"
    assert _text(gather) == "Oslo dayz=5"


def test_mcpkit_call_refuses_what_the_schema_closes_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The schema says additionalProperties: false, so mcpkit call refuses a misspelling
    # before sending, with the server's own line (exit 2, a command line to change): a
    # server that drops unknown arguments silently would not have said so.
    script = tmp_path / "weather.py"
    script.write_text(SERVER + "\nif __name__ == '__main__':\n    server.run()\n")
    line = REFUSED.splitlines()[-1].removeprefix("- ")
    code = main("call", [str(script), "forecast", "city=Paris", "dayz=5"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.strip() == f"mcpkit call: {line}"
    code = main("call", [str(script), "forecast", "--json", '{"city": "Paris", "dayz": 5}'])
    assert code == 2 and capsys.readouterr().err.strip() == f"mcpkit call: {line}"
    # A tool whose schema accepts extras gets them; the right name is called as before.
    assert main("call", [str(script), "lenient", "city=Oslo", "dayz=5"]) == 0
    assert capsys.readouterr().out == "Oslo\n"
    assert main("call", [str(script), "forecast", "city=Paris", "days=5"]) == 0
    assert capsys.readouterr().out == "sunny in Paris for 5 days\n"
