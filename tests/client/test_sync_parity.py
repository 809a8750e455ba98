"""SyncClient mirrors Client: every public member, with the same parameters, so they cannot drift.

A new Client method without its blocking twin (or with different parameters) fails here.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.client.servers.ours import make_server

from mcpkit import Client, MCPError, SyncClient, TaskHandle
from mcpkit._client._sync import SyncTaskHandle

#: Members that differ on purpose, and why.
ONLY_ASYNC = {"close": "SyncClient.close() is the blocking close"}
ONLY_SYNC = {"open": "the blocking counterpart of `async with` / connect()"}
#: TaskHandle keeps these as instance attributes; SyncTaskHandle exposes them as properties.
HANDLE_ATTRIBUTES = {"task": "TaskHandle.task", "tool": "TaskHandle.tool"}
#: Returned objects that have their own blocking twin.
TWINS = {
    "TaskHandle": "SyncTaskHandle",
    "TaskHandle | ExtensionTaskHandle": "SyncTaskHandle",
    "LoadedSkill": "SyncLoadedSkill",
    # A SyncTaskHandle wraps either era's handle: its states are either era's.
    "Task": "Task | DetailedTask",
}


def _public(cls: type) -> dict[str, Any]:
    return {n: v for n, v in inspect.getmembers(cls) if not n.startswith("_")}


def _shape(member: Any) -> Any:
    if isinstance(member, property):
        return "property"
    sig = inspect.signature(member)
    ret = str(sig.return_annotation).strip("'")
    ret = TWINS.get(ret, ret)
    params = [
        (p.name, p.kind, str(p.annotation).strip("'"), repr(p.default))
        for p in sig.parameters.values()
    ]
    return params, ret


def _compare(
    async_cls: type, sync_cls: type, attributes: dict[str, str] | None = None
) -> list[str]:
    a, s = _public(async_cls), _public(sync_cls)
    only_sync = {**ONLY_SYNC, **(attributes or {})}
    problems = [f"{sync_cls.__name__} lacks {n}" for n in sorted(set(a) - set(s) - set(ONLY_ASYNC))]
    problems += [
        f"{sync_cls.__name__} has extra {n}" for n in sorted(set(s) - set(a) - set(only_sync))
    ]
    for name in sorted(set(a) & set(s)):
        if name in ONLY_ASYNC or name in ONLY_SYNC:
            continue
        am, sm = inspect.getattr_static(async_cls, name), inspect.getattr_static(sync_cls, name)
        if isinstance(am, property) != isinstance(sm, property):
            problems.append(f"{name}: property on one side only")
            continue
        if not isinstance(am, property) and _shape(getattr(async_cls, name)) != _shape(
            getattr(sync_cls, name)
        ):
            problems.append(
                f"{name}: {inspect.signature(getattr(async_cls, name))} != "
                f"{inspect.signature(getattr(sync_cls, name))}"
            )
    return problems


def test_sync_client_mirrors_client() -> None:
    assert _compare(Client, SyncClient) == []


def _init_params(cls: type) -> list[tuple[str, Any, str, str]]:
    return [
        (p.name, p.kind, str(p.annotation).strip("'"), repr(p.default))
        for p in inspect.signature(cls.__init__).parameters.values()
    ]


def test_sync_client_init_mirrors_client_init() -> None:
    """SyncClient(...) is typed and signed with Client(...)'s parameters (for type checkers,
    IDEs and help()): the same names, kinds, annotations and defaults, in the same order."""
    assert _init_params(SyncClient) == _init_params(Client)
    names = [p.name for p in inspect.signature(SyncClient.__init__).parameters.values()]
    assert "kwargs" not in names and len(names) > 20


def test_sync_client_passes_its_keywords_to_the_client() -> None:
    logs: list[Any] = []
    with SyncClient(
        make_server(),
        name="ours",
        protocol_version="2025-06-18",
        timeout=5.0,
        init_timeout=7.0,
        validate_output=False,
        logging_handler=logs.append,
    ) as client:
        assert client.protocol_version == "2025-06-18"
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
    inner = client.client
    assert (inner.name, inner.timeout, inner.init_timeout) == ("ours", 5.0, 7.0)
    assert inner.validate_output is False
    assert inner.max_timeout == Client(make_server()).max_timeout  # the default, untouched


def test_sync_client_refuses_an_unknown_keyword() -> None:
    with pytest.raises(TypeError, match="timeot"):
        SyncClient(make_server(), timeot=5.0)  # type: ignore[call-arg]


def test_sync_task_handle_mirrors_task_handle() -> None:
    assert _compare(TaskHandle, SyncTaskHandle, HANDLE_ATTRIBUTES) == []


def test_the_comparison_catches_a_missing_method_and_a_changed_signature() -> None:
    class Smaller:
        pass

    class Drifted(SyncClient):
        def ping(self, *, timeout: float | None = None, extra: int = 0) -> None:  # type: ignore[override]
            pass

    assert any("lacks ping" in p for p in _compare(Client, Smaller))
    assert any(p.startswith("ping:") for p in _compare(Client, Drifted))


def test_the_members_added_for_parity_work_over_stdio() -> None:
    """The blocking twins of connect, capabilities, session, list_tasks_page,
    check_tool_result and send_request(progress_handler=), against a real server process."""
    demo = Path(__file__).resolve().parents[2] / "examples" / "client_demo_server.py"
    client = SyncClient([sys.executable, str(demo)])
    client.connect()
    try:
        assert client.connected and client.capabilities() == {
            "extensions": {
                "io.modelcontextprotocol/tasks": {},
                "io.modelcontextprotocol/skills": {},
            }
        }
        assert client.session.protocol_version == client.protocol_version
        seen: list[float] = []
        counted = client.send_request(
            "tools/call",
            {"name": "slow_count", "arguments": {"n": 3}},
            progress_handler=lambda progress, total, message: seen.append(progress),
        )
        assert counted["content"][0]["text"] == "counted to 3" and seen == [1, 2, 3]
        raw = client.send_request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        assert client.check_tool_result("add", raw).structured_content == {"result": 5}
        with pytest.raises(MCPError):  # the demo declares no tasks: -32601, or refused locally
            client.list_tasks_page()
    finally:
        client.close()
    assert not client.connected
