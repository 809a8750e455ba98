"""SyncClient mirrors Client: every public member, with the same parameters, so they cannot drift.

A new Client method without its blocking twin (or with different parameters) fails here.
"""

from __future__ import annotations

import inspect
from typing import Any

from mcpkit import Client, SyncClient, TaskHandle
from mcpkit._client._sync import SyncTaskHandle

#: Members that differ on purpose, and why.
ONLY_ASYNC = {"close": "SyncClient.close() is the blocking close"}
ONLY_SYNC = {"open": "the blocking counterpart of `async with` / connect()"}
#: TaskHandle keeps these as instance attributes; SyncTaskHandle exposes them as properties.
HANDLE_ATTRIBUTES = {"task": "TaskHandle.task", "tool": "TaskHandle.tool"}
#: Returned objects that have their own blocking twin.
TWINS = {"TaskHandle": "SyncTaskHandle"}


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


def test_sync_task_handle_mirrors_task_handle() -> None:
    assert _compare(TaskHandle, SyncTaskHandle, HANDLE_ATTRIBUTES) == []


def test_the_comparison_catches_a_missing_method() -> None:
    class Partial(SyncClient):
        ping = None  # type: ignore[assignment]

    class Smaller:
        pass

    assert any("lacks ping" in p for p in _compare(Client, Smaller))
