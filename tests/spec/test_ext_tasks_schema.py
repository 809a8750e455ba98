"""The tasks extension's messages against its own schema (``ext-tasks/schema.json``,
vendored beside its specification), over the real HTTP app in process.

What the server sends (the ``CreateTaskResult`` of a task-augmented call, ``tasks/get``
answers in every state, ``tasks/update`` and ``tasks/cancel`` results, ``notifications/tasks``
on a listen stream, the capability it declares) and what it takes (``tasks/get``,
``tasks/update``, ``tasks/cancel`` as a client sends them) are each checked against the
definition the extension gives it.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import anyio
import pytest
from jsonschema.validators import validator_for
from tests._schema import SPEC_DIR
from tests.extensions.test_tasks_extension import call, make_server, poll, tasks, terminal
from tests.extensions.test_tasks_on_listen import as_client, listen, listen_body, start
from tests.extensions.test_tasks_on_listen import make_server as make_followed
from tests.stateless._stateless_helpers import post, request

from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"
SCHEMA = SPEC_DIR / "ext-tasks" / "schema.json"


@functools.cache
def _root() -> dict[str, Any]:
    root: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return root


def errors(name: str, instance: Any) -> list[str]:
    """Why ``instance`` is not a valid ``name`` of the extension's schema (empty: valid)."""
    root = _root()
    cls = validator_for(root)
    v = cls({**root, "$ref": f"#/$defs/{name}"}, format_checker=cls.FORMAT_CHECKER)
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:300]}"
        for e in v.iter_errors(instance)
    ]


def check(name: str, instance: Any) -> None:
    found = errors(name, instance)
    assert not found, f"{name}: {instance!r}\n" + "\n".join(found)


async def answer(http: ASGIClient, msg: dict[str, Any], request_def: str | None = None) -> Any:
    """POST ``msg`` (checked first against ``request_def``, what the server takes); its result."""
    if request_def is not None:
        check(request_def, msg)
    return (await post(http, msg, validate=False)).result


def test_the_vendored_schema_is_the_extensions() -> None:
    """The file is the extension's schema, with the definitions this module checks."""
    root = _root()
    assert root["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "io.modelcontextprotocol/tasks" in root["description"]
    defs = root["$defs"]
    for name in (
        "CreateTaskResult",
        "GetTaskRequest",
        "GetTaskResult",
        "UpdateTaskRequest",
        "UpdateTaskResult",
        "CancelTaskRequest",
        "CancelTaskResult",
        "TaskStatusNotification",
        "TasksExtensionCapability",
    ):
        assert name in defs, name
    # Strict enough to catch a wrong message: a task without its status is refused.
    assert errors("GetTaskResult", {"taskId": "t", "resultType": "complete"})


@pytest.mark.req("EXTTASKS-CREATE-RESULTTYPE-TASK", "EXTTASKS-GET-BY-STATUS")
async def test_task_results_and_requests_match_the_extension_schema() -> None:
    server, gates = make_server()
    async with ASGIClient(server.http_app()) as http:
        discovered = await answer(http, request("server/discover"))
        check("TasksExtensionCapability", discovered["capabilities"]["extensions"][TASKS])

        created = await answer(http, call("gated"))
        check("CreateTaskResult", created)
        tid = created["taskId"]
        check("GetTaskResult", await answer(http, tasks("tasks/get", taskId=tid), "GetTaskRequest"))
        await gates["started"].wait()
        gates["go"].set()
        check("GetTaskResult", await poll(http, tid, terminal))  # completed, with its result

        failed = await answer(http, call("crashes"))
        check("GetTaskResult", await poll(http, failed["taskId"], terminal))  # failed, its error

        asking = await answer(http, call("two_questions"))
        waiting = await poll(http, asking["taskId"], lambda t: t["status"] == "input_required")
        check("GetTaskResult", waiting)  # input_required, with the input requests
        responses = {
            key: {"action": "accept", "content": {"name": key}} for key in waiting["inputRequests"]
        }
        update = tasks("tasks/update", taskId=asking["taskId"], inputResponses=responses)
        check("UpdateTaskResult", await answer(http, update, "UpdateTaskRequest"))
        check("GetTaskResult", await poll(http, asking["taskId"], terminal))

        gates["go"], gates["started"] = anyio.Event(), anyio.Event()  # closed again
        running = await answer(http, call("gated"))
        cancel = tasks("tasks/cancel", taskId=running["taskId"])
        check("CancelTaskResult", await answer(http, cancel, "CancelTaskRequest"))
        cancelled = await poll(http, running["taskId"], terminal)
    assert cancelled["status"] == "cancelled"
    check("GetTaskResult", cancelled)


@pytest.mark.req("EXTTASKS-NO-PROGRESS-ON-LISTEN")
async def test_task_status_notifications_match_the_extension_schema() -> None:
    server, gate = make_followed()
    async with ASGIClient(server.http_app()) as http:
        task_id = await start(http, "gated")
        body = as_client("alice", listen_body("sub-schema", taskIds=[task_id]))
        async with listen(http, body) as stream:
            ack = await stream.next()
            check("TaskSubscriptionAcknowledgedNotifications", ack["params"]["notifications"])
            now = await stream.next()
            gate.set()
            done = await stream.next()
    for note in (now, done):
        check("TaskStatusNotification", note)
    assert [now["params"]["status"], done["params"]["status"]] == ["working", "completed"]
