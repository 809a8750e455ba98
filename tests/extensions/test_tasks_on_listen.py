"""Tasks followed on ``subscriptions/listen`` (the tasks extension, 2026-07-28), over the real
HTTP app in process.

``notifications.taskIds`` asks for ``notifications/tasks``: a client that did not declare the
extension is refused with -32021; one that did gets the tasks it may see acknowledged, the
state each is in when the stream opens, then each change of it (the ``DetailedTask`` that
``tasks/get`` would answer), tagged with the subscription, and never a progress or log
message of the task.
"""

from __future__ import annotations

import itertools
import sys
from typing import Any

import anyio
import pytest
from tests._schema import schema_errors
from tests.stateless._stateless_helpers import (
    EVERYTHING,
    REV,
    ROOT,
    TIMEOUT,
    Stream,
    meta,
    post,
    request,
    stream,
)

from mcpkit import Context, MissingRequiredClientCapability, Server
from mcpkit.lowlevel import ASGIClient, ClientSession, spawn_stdio

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"
ACK = "notifications/subscriptions/acknowledged"
TASK_NOTE = "notifications/tasks"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
RUN = [sys.executable, "-c", "import sys; from mcpkit._cli import main; sys.exit(main())", "run"]
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def caps(with_tasks: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"elicitation": {}}
    if with_tasks:
        out["extensions"] = {TASKS: {}}
    return out


def as_client(name: str, msg: dict[str, Any], with_tasks: bool = True) -> dict[str, Any]:
    """``msg`` sent by the client called ``name`` (the server's task owner)."""
    info = {"io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"}}
    msg["params"]["_meta"] = meta(caps(with_tasks), **info)
    return msg


def make_server() -> tuple[Server, anyio.Event]:
    # Tasks belong to the client named in clientInfo: alice's are not bob's.
    server = Server(
        "followed", task_poll_interval=10, task_owner=lambda ctx: ctx.client_info["name"]
    )
    gate = anyio.Event()

    @server.tool(task_support="optional")
    async def gated(ctx: Context) -> str:
        """Runs until the test opens the gate, then reports progress and logs."""
        await gate.wait()
        await ctx.report_progress(1, 2, "half way")
        await ctx.info("almost there")
        return "through the gate"

    @server.tool(task_support="optional")
    async def asks(ctx: Context) -> str:
        """Asks the client a name."""
        answer = await ctx.elicit("Your name?", NAME, key="who")
        return f"Hello, {(answer.content or {}).get('name')}!"

    return server, gate


class Listen(Stream):
    """A ``subscriptions/listen`` response read as it arrives; every message is checked
    against 2026-07-28, ``notifications/tasks`` (the extension's) as a notification."""

    def check(self, msg: Any) -> None:
        if msg.get("method") == TASK_NOTE:
            assert not schema_errors(REV, "JSONRPCNotification", msg), msg
        else:
            super().check(msg)


def listen(http: ASGIClient, body: dict[str, Any]) -> Any:
    return stream(http, body, reader=Listen)


def listen_body(sub_id: str, **notifications: Any) -> dict[str, Any]:
    return request("subscriptions/listen", {"notifications": notifications}, id=sub_id)


async def start(http: ASGIClient, tool: str, owner: str = "alice") -> str:
    body = as_client(owner, request("tools/call", {"name": tool, "arguments": {}}))
    created = (await post(http, body, validate=False)).result
    assert created["resultType"] == "task"
    task_id: str = created["taskId"]
    return task_id


async def tasks_get(http: ASGIClient, task_id: str, owner: str = "alice") -> dict[str, Any]:
    body = as_client(owner, request("tasks/get", {"taskId": task_id}))
    result: dict[str, Any] = (await post(http, body, validate=False)).result
    return result


def bare(result: dict[str, Any]) -> dict[str, Any]:
    """A ``tasks/get`` result as the task alone (its ``resultType`` and ``_meta`` left out)."""
    return {k: v for k, v in result.items() if k not in ("resultType", "_meta")}


def task_of(note: dict[str, Any]) -> dict[str, Any]:
    """The task a ``notifications/tasks`` carries (its subscription tag left out)."""
    assert note["method"] == TASK_NOTE, note
    return {k: v for k, v in note["params"].items() if k != "_meta"}


@pytest.mark.req("EXTTASKS-LISTEN-MISSING-CAPABILITY", "EXTTASKS-ERRORS-LISTEN-32021")
async def test_a_client_without_the_extension_cannot_follow_tasks() -> None:
    server, _ = make_server()
    plain = Server("no-tasks")  # serves no task at all: still refused (MUST)

    @plain.tool()
    def one() -> str:
        """A tool."""
        return "1"

    body = as_client("bob", listen_body("sub-x", taskIds=["t-1"]), with_tasks=False)
    async with ASGIClient(server.http_app()) as http, ASGIClient(plain.http_app()) as http2:
        refused = await post(http, body)
        refused_too = await post(http2, body)
    for got in (refused, refused_too):
        assert got.error["code"] == -32021
        assert got.error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}


@pytest.mark.req("EXTTASKS-NO-PROGRESS-ON-LISTEN")
async def test_a_declaring_client_follows_its_task_to_the_end() -> None:
    server, gate = make_server()
    async with ASGIClient(server.http_app()) as http:
        task_id = await start(http, "gated")
        body = as_client("alice", listen_body("sub-1", taskIds=[task_id, "no-such-task"]))
        async with listen(http, body) as stream:
            ack = await stream.next()
            assert ack["method"] == ACK
            assert ack["params"]["notifications"] == {"taskIds": [task_id]}
            assert ack["params"]["_meta"][SUB_ID] == "sub-1"
            # Its state now: it may have changed before the stream opened.
            now = await stream.next()
            assert now["params"]["_meta"] == {SUB_ID: "sub-1"}
            assert task_of(now)["status"] == "working"
            assert task_of(now) == bare(await tasks_get(http, task_id))
            gate.set()
            # The tool's progress and log message are not sent here: the next is its end.
            done = await stream.next()
            assert done["params"]["_meta"] == {SUB_ID: "sub-1"}
            final = await tasks_get(http, task_id)
    assert task_of(done)["status"] == "completed"
    assert task_of(done)["result"]["content"] == [{"type": "text", "text": "through the gate"}]
    # Exactly what tasks/get answers.
    assert task_of(done) == bare(final)


async def test_input_required_and_back_are_told_with_the_questions() -> None:
    server, _ = make_server()
    async with ASGIClient(server.http_app()) as http:
        task_id = await start(http, "asks")
        body = as_client("alice", listen_body("sub-2", taskIds=[task_id]))
        async with listen(http, body) as stream:
            assert (await stream.next())["method"] == ACK
            seen = [task_of(await stream.next())]
            while seen[-1]["status"] != "input_required":  # the snapshot may still be working
                seen.append(task_of(await stream.next()))
            assert seen[-1]["inputRequests"]["who"]["method"] == "elicitation/create"
            answer = {"who": {"action": "accept", "content": {"name": "Ada"}}}
            update = request("tasks/update", {"taskId": task_id, "inputResponses": answer})
            await post(http, as_client("alice", update), validate=False)
            while seen[-1]["status"] != "completed":
                seen.append(task_of(await stream.next()))
    statuses = [t["status"] for t in seen]
    assert statuses[-1] == "completed" and "input_required" in statuses
    assert statuses.index("input_required") < len(statuses) - 1
    assert "working" in statuses[statuses.index("input_required") :]
    assert seen[-1]["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]
    # A state is told once: no two notifications in a row say the same thing.
    for a, b in itertools.pairwise(seen):
        assert {**a, "lastUpdatedAt": ""} != {**b, "lastUpdatedAt": ""}


async def test_only_the_callers_own_tasks_are_followed() -> None:
    server, gate = make_server()
    async with ASGIClient(server.http_app()) as http:
        alices = await start(http, "gated", owner="alice")
        spy = as_client("bob", listen_body("sub-bob", taskIds=[alices], toolsListChanged=True))
        own = as_client("alice", listen_body("sub-alice", taskIds=[alices]))
        async with listen(http, spy) as bob, listen(http, own) as alice:
            bob_ack = await bob.next()
            assert bob_ack["params"]["notifications"] == {"taskIds": [], "toolsListChanged": True}
            assert (await alice.next())["method"] == ACK
            assert task_of(await alice.next())["status"] == "working"
            gate.set()
            assert task_of(await alice.next())["status"] == "completed"
            # Bob asked for tool changes too: the next thing he hears is one, not her task.
            server.add_tool(lambda: "x", name="late_tool", description="Added live.")
            assert (await bob.next())["method"] == "notifications/tools/list_changed"


async def test_a_server_without_tasks_leaves_task_ids_out_of_the_ack() -> None:
    plain = Server("no-tasks")

    @plain.tool()
    def one() -> str:
        """A tool."""
        return "1"

    body = as_client("alice", listen_body("sub-3", taskIds=["t-1"], toolsListChanged=True))
    async with ASGIClient(plain.http_app()) as http, listen(http, body) as stream:
        ack = await stream.next()
        plain.listeners.close_all()
        end = await stream.next()
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert end["result"]["_meta"][SUB_ID] == "sub-3"


async def test_malformed_task_ids_are_invalid_params() -> None:
    server, _ = make_server()
    body = as_client("alice", listen_body("sub-4", taskIds="t-1"))
    async with ASGIClient(server.http_app()) as http:
        got = await post(http, body)
    assert got.error["code"] == -32602


@pytest.mark.req("EXTTASKS-LISTEN-MISSING-CAPABILITY")
async def test_tasks_followed_over_stdio() -> None:
    """``examples/everything.py`` over stdio: a task asks, its follower hears it, answers,
    and hears the end, all on the one pipe; a non-declaring listen is refused there too."""
    notes: list[dict[str, Any]] = []
    asking, ended = anyio.Event(), anyio.Event()

    async def on_task(params: Any) -> None:
        notes.append(params)
        if params["status"] == "input_required":
            asking.set()
        elif params["status"] in ("completed", "failed", "cancelled"):
            ended.set()

    ext = meta(caps())
    with anyio.fail_after(TIMEOUT):
        async with (
            spawn_stdio(RUN[0], [*RUN[1:], str(EVERYTHING)], cwd=ROOT) as t,
            ClientSession(
                t,
                client_info={"name": "stdio-tasks", "version": "1"},
                capabilities=caps(),
                notification_handlers={TASK_NOTE: on_task},
            ) as session,
        ):
            await session.discover()
            with pytest.raises(MissingRequiredClientCapability):
                await session.engine.request(
                    "subscriptions/listen",
                    {"_meta": meta(caps(False)), "notifications": {"taskIds": ["t"]}},
                )
            call = {"name": "confirm_delete", "arguments": {"filename": "a.txt"}, "_meta": ext}
            created = await session.engine.request("tools/call", call)
            task_id = created["taskId"]

            async def follow() -> None:
                params = {"_meta": ext, "notifications": {"taskIds": [task_id]}}
                await session.engine.request("subscriptions/listen", params, timeout=None)

            async with anyio.create_task_group() as tg:
                tg.start_soon(follow)
                await asking.wait()
                key = next(iter(notes[-1]["inputRequests"]))
                answer = {key: {"action": "accept", "content": {"confirm": True}}}
                update = {"taskId": task_id, "inputResponses": answer, "_meta": ext}
                await session.engine.request("tasks/update", update)
                await ended.wait()
                tg.cancel_scope.cancel()
    assert {n["_meta"][SUB_ID] for n in notes} == {notes[0]["_meta"][SUB_ID]}
    assert notes[-1]["status"] == "completed"
    assert notes[-1]["result"]["content"][0]["text"] == "deleted a.txt"
