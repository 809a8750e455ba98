"""``mcpkit list`` / ``mcpkit call``: output for people, the wire result for programs, no tracebacks."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mcpkit._client._cli import main

HERE = Path(__file__).parent
SERVER = shlex.join([sys.executable, str(HERE / "servers" / "session_stdio.py")])
BAD = str(HERE / "servers" / "misbehaving.py")


def run(capsys: pytest.CaptureFixture[str], command: str, *argv: str) -> tuple[int, str, str]:
    code = main(command, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_tools_readable_and_all_pages(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "list", SERVER)
    assert code == 0, err
    assert out.splitlines() == [
        "add  Add two numbers.",
        "    a: number (required)",
        "    b: number (required)",
        "shout  Upper-case a text.",
        "    text: string (required)",
        "fail  Always fails.",
        "picture  A tiny image.",
    ]


def test_list_json_is_the_wire_result(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", SERVER, "tools", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert list(data) == ["tools"]
    assert [t["name"] for t in data["tools"]] == ["add", "shout", "fail", "picture"]
    assert data["tools"][0]["outputSchema"]["required"] == ["sum"]
    for kind, key, first in (
        ("resources", "resources", "mem://hello"),
        ("templates", "resourceTemplates", "mem://items/{id}"),
        ("prompts", "prompts", "greet"),
    ):
        code, out, _ = run(capsys, "list", SERVER, kind, "--format", "json")
        assert code == 0
        item = json.loads(out)[key][0]
        assert first in (item.get("uri"), item.get("uriTemplate"), item.get("name"))


def test_list_other_kinds_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "list", SERVER, "resources")[1] == "mem://hello  hello [text/plain]\n"
    assert run(capsys, "list", SERVER, "templates")[1] == "mem://items/{id}  item\n"
    assert run(capsys, "list", SERVER, "prompts")[1] == "greet(who)  Greet someone.\n"


def test_call_with_coerced_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "call", SERVER, "add", "a=1", "b=2.5")
    assert (code, out, err) == (0, "3.5\n", "")
    # A string argument stays a string even when it looks like a number.
    code, out, _ = run(capsys, "call", SERVER, "shout", "text=123")
    assert (code, out) == (0, "123\n")
    code, out, _ = run(capsys, "call", SERVER, "shout", "--json", '{"text": "hey"}')
    assert (code, out) == (0, "HEY\n")
    code, out, _ = run(capsys, "call", SERVER, "picture")
    assert (code, out) == (0, "[image: image/png, 8 bytes]\n")


def test_call_json_is_the_wire_result(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "call", SERVER, "add", "--json", '{"a": 1, "b": 2}', "--format", "json"
    )
    assert code == 0
    assert json.loads(out) == {
        "content": [{"type": "text", "text": "3"}],
        "structuredContent": {"sum": 3},
    }


def test_tool_error_goes_to_stderr_with_status_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "call", SERVER, "fail") == (1, "", "it failed\n")
    code, out, _ = run(capsys, "call", SERVER, "fail", "--format", "json")
    assert code == 1 and json.loads(out)["isError"] is True


@pytest.mark.parametrize(
    "command, argv, status, message",
    [
        ("call", [SERVER, "add", "a=x", "b=1"], 2, "argument a: 'x' is not a valid number"),
        ("call", [SERVER, "add", "novalue"], 2, "must look like NAME=VALUE"),
        ("call", [SERVER, "add", "--json", "{nope"], 2, "--json is not valid JSON"),
        ("call", [SERVER, "add", "--json", "[1]"], 2, "--json must be a JSON object"),
        ("call", [SERVER, "nope"], 1, "Unknown tool: nope"),
        ("list", [], 2, "the following arguments are required"),
        ("list", [SERVER, "widgets"], 2, "invalid choice"),
        ("list", ["/nonexistent/server"], 1, "cannot start '/nonexistent/server'"),
        (
            "call",
            [shlex.join([sys.executable, BAD, "exit-mid-call"]), "get"],
            1,
            "exited with code 3",
        ),
        (
            "call",
            [shlex.join([sys.executable, BAD, "bad-output"]), "get"],
            1,
            "violates its outputSchema",
        ),
        (
            "list",
            [shlex.join([sys.executable, BAD, "silent"]), "--timeout", "0.3"],
            1,
            "no response within",
        ),
    ],
)
def test_errors_are_one_message_and_a_status(
    capsys: pytest.CaptureFixture[str], command: str, argv: list[str], status: int, message: str
) -> None:
    code, out, err = run(capsys, command, *argv)
    assert code == status
    assert message in err
    assert "Traceback" not in err and out == ""


def test_console_script_end_to_end() -> None:
    exe = Path(sys.executable).parent / "mcpkit"
    p = subprocess.run(
        [str(exe), "call", SERVER, "add", "a=2", "b=3"], capture_output=True, text=True, timeout=30
    )
    assert (p.returncode, p.stdout) == (0, "5\n"), p.stderr
    p = subprocess.run(
        [str(exe), "call", "http://127.0.0.1:9/mcp", "x"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (
        p.returncode == 1
        and "Traceback" not in p.stderr
        and p.stderr.startswith("mcpkit call: error:")
    )


def test_url_target_over_streamable_http(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.client.servers.ours import make_server
    from tests.http._http_helpers import running

    from mcpkit._app import create_http_app

    with running(create_http_app(make_server())) as srv:
        code, out, err = run(capsys, "list", srv.url, "--format", "json")
        assert code == 0, err
        tools = json.loads(out)["tools"]  # every page (the server pages by 2)
        assert [t["name"] for t in tools] == ["add", "work", "ask", "who", "roots"]
        assert tools[0]["inputSchema"]["required"] == ["a", "b"]
        code, out, err = run(capsys, "list", srv.url, "templates")
        assert (code, out) == (0, "memo://items/{item}  item  One item.\n"), err
        code, out, err = run(capsys, "call", srv.url, "add", "a=2", "b=5", "--format", "json")
        assert code == 0, err
        assert json.loads(out) == {
            "content": [{"type": "text", "text": "7"}],
            "structuredContent": {"result": 7},
        }
        assert run(capsys, "call", srv.url, "add", "a=2", "b=5") == (0, "7\n", "")
        code, out, err = run(capsys, "call", srv.url, "nope")
        assert code == 1 and out == "" and "Traceback" not in err and "nope" in err
