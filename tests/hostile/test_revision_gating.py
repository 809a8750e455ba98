"""Every method and field gated by the negotiated revision, over a real stdio server.

Before: at 2024-11-05, 2025-03-26 and 2025-06-18 the server answered ``tasks/*`` (methods
those revisions do not have), and a ``tools/call`` carrying ``task`` started a task and then
failed with ``-32603 NotInRevisionError`` while the task ran on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests._schema import validate_message
from tests.hostile._proc import StdioServer

SERVER = """
from mcpkit import Server

server = Server("gated")


@server.tool(task_support="optional")
async def build() -> str:
    '''Builds (as a task when the client asks and the revision has tasks).'''
    return "built"
"""

OLD = ["2024-11-05", "2025-03-26", "2025-06-18"]
TASK_METHODS: list[tuple[str, dict[str, Any] | None]] = [
    ("tasks/list", None),
    ("tasks/get", {"taskId": "t-1"}),
    ("tasks/result", {"taskId": "t-1"}),
    ("tasks/cancel", {"taskId": "t-1"}),
]


def _start(tmp_path: Path, version: str) -> StdioServer:
    server = StdioServer(tmp_path, SERVER)
    init = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    answer = server.answer(1)
    assert answer["result"]["protocolVersion"] == version
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return server


@pytest.mark.parametrize("version", OLD)
def test_task_methods_do_not_exist_before_2025_11_25(tmp_path: Path, version: str) -> None:
    with _start(tmp_path, version) as server:
        assert "tasks" not in server.answers[1]["result"]["capabilities"]
        for rid, (method, params) in enumerate(TASK_METHODS, 10):
            msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
            if params is not None:
                msg["params"] = params
            server.send(msg)
            assert server.answer(rid)["error"]["code"] == -32601, method


@pytest.mark.parametrize("version", OLD)
def test_a_task_field_is_ignored_where_tasks_do_not_exist(tmp_path: Path, version: str) -> None:
    with _start(tmp_path, version) as server:
        params = {"name": "build", "arguments": {}, "task": {"ttl": 60000}}
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
        answer = server.answer(2)
        # Processed as a plain call, answered in that revision's shape.
        assert answer["result"]["content"] == [{"type": "text", "text": "built"}]
        assert "task" not in answer["result"]
        validate_message(answer, version, sender="server", request_method="tools/call")


def test_tasks_work_at_2025_11_25(tmp_path: Path) -> None:
    with _start(tmp_path, "2025-11-25") as server:
        assert "tasks" in server.answers[1]["result"]["capabilities"]
        params = {"name": "build", "arguments": {}, "task": {"ttl": 60000}}
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
        created = server.answer(2)["result"]["task"]
        server.send({"jsonrpc": "2.0", "id": 3, "method": "tasks/list"})
        listed = server.answer(3)["result"]["tasks"]
        assert created["taskId"] in [t["taskId"] for t in listed]
