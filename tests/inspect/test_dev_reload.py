"""``mcpkit dev FILE``: the server file runs with the inspector attached, and an edit to it
restarts the server (the page's lists follow), as a person developing a server uses it."""

from __future__ import annotations

import json
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import BACKEND
from tests.inspect._browser_harness import inspected

pytestmark = pytest.mark.skipif(
    BACKEND != "asyncio", reason="the inspector is a process: one pass (asyncio) is enough"
)

SERVER = """
from mcpkit import Server

server = Server("dev-demo")


@server.tool()
def first() -> str:
    return "one"
"""


def _api(url: str, path: str, body: Any = None) -> Any:
    base, token = url.split("/?token=")
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{base}/api/{path}",
        data=data,
        headers={"X-Inspector-Token": token, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)["result"]


def _connected_after(url: str, seq: int, deadline: float) -> int:
    """Follow the events (long polls, bounded) until a 'connected' status after ``seq``."""
    while time.monotonic() < deadline:
        got = _api(url, f"events?after={seq}")
        for event in got["events"]:
            if event["kind"] == "status" and event["state"] == "connected":
                return int(event["seq"])
        seq = got["last"]
    raise AssertionError("the server did not come back")


def test_an_edit_restarts_the_server_and_the_inspector_follows(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text(SERVER)
    with inspected(["dev", str(path)], cwd=tmp_path) as running:
        url = running.url()
        deadline = time.monotonic() + 60
        seq = _connected_after(url, 0, deadline)
        assert [t["name"] for t in _api(url, "list/tools")] == ["first"]
        path.write_text(
            SERVER
            + textwrap.dedent(
                """

                @server.tool()
                def second() -> str:
                    return "two"
                """
            )
        )
        _connected_after(url, seq, deadline)
        assert [t["name"] for t in _api(url, "list/tools")] == ["first", "second"]
        result = _api(url, "call", {"name": "second", "arguments": {}})
        assert result["content"][0]["text"] == "two"
        assert any("server.py changed" in line for line in running.stderr)
