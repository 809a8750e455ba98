"""Three workers sharing one real Redis, behind a strict round-robin proxy.

Every HTTP request goes to the next worker, so no two requests of a session meet the same
worker in a row: sessions, server-to-client requests, the GET stream, subscriptions and
tasks all have to go through the shared state.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import orjson
import pytest
from tests.scaleout._cluster import Cluster, RedisServer, cluster
from tests.scaleout._wire import answer, call, headers, initialize, sse_messages
from tests.scaleout.conftest import JOBS

import mcpkit
from mcpkit.types import ElicitResult

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def jobs(redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(redis.url, tmp_path_factory.mktemp("logs"), target=JOBS) as c:
        yield c


async def _confirm(params: Any, ctx: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"ok": True})


async def test_tasks_run_on_one_worker_and_answer_on_every_other(jobs: Cluster) -> None:
    progress: list[float] = []
    async with mcpkit.Client(
        jobs.url, protocol_version="2025-11-25", elicitation_handler=_confirm
    ) as client:
        with anyio.fail_after(30):
            handle = await client.call_tool_as_task("build", {"steps": 4})
            result = await handle.result()
            assert result.content[0].text == "built in 4 steps"  # type: ignore[union-attr]
            assert (await handle.status()).status == "completed"
            # Cancelled through one worker while another runs it: it stops, and stays so.
            held = await client.call_tool_as_task("hold", {})
            assert (await held.status()).status == "working"
            cancelled = await held.cancel()
            assert cancelled.status == "cancelled"
            for _ in range(3):
                assert (await held.status()).status == "cancelled"
            # A task asks the client something: the question goes out on the GET stream
            # (held by some worker), the answer is POSTed to another, and reaches the task.
            asked = await client.call_tool_as_task("confirm", {})
            confirmed = await asked.result()
            assert confirmed.content[0].text == "confirmed"  # type: ignore[union-attr]
            listed = await client.list_tasks()
            ids = {t.task_id for t in listed}
            assert {handle.task_id, held.task_id, asked.task_id} <= ids
        # Plain calls with progress, many times: each lands on the next worker.
        for _ in range(6):
            r = await client.call_tool(
                "build", {"steps": 2}, progress_handler=lambda p, t, m: progress.append(p)
            )
            assert r.content[0].text == "built in 2 steps"  # type: ignore[union-attr]
    assert progress.count(2.0) == 6


async def test_tasks_of_the_extension_run_on_one_worker_and_answer_on_every_other(
    jobs: Cluster,
) -> None:
    # 2026-07-28: every request (tasks/get, tasks/update, tasks/cancel) meets the next worker.
    async with mcpkit.Client(
        jobs.url, protocol_version="2026-07-28", elicitation_handler=_confirm
    ) as client:
        with anyio.fail_after(30):
            built = await client.call_tool("build", {"steps": 3})
            assert built.content[0].text == "built in 3 steps"  # type: ignore[union-attr]
            held = await client.call_tool_as_task("hold", {})
            assert isinstance(held, mcpkit.ExtensionTaskHandle)
            assert (await held.status()).status == "working"
            assert (await held.cancel()).status == "cancelled"
            for _ in range(3):
                assert (await held.status()).status == "cancelled"
            # The task waits for input on one worker; the answer is given to another.
            confirmed = await client.call_tool("confirm", {})
            assert confirmed.content[0].text == "confirmed"  # type: ignore[union-attr]
            # An empty list in a result stays a list through Redis (checked against the
            # tool's outputSchema by the client too).
            found = await client.call_tool("search", {"query": "x"})
            assert found.structured_content == {"hits": []}
    async with mcpkit.Client(jobs.url, protocol_version="2025-11-25") as client:
        with anyio.fail_after(30):
            handle = await client.call_tool_as_task("search", {"query": "x"})
            assert (await handle.result()).structured_content == {"hits": []}


def _modern(method: str, params: dict[str, Any], rid: Any = 1) -> tuple[dict[str, str], bytes]:
    """A 2026-07-28 request of a client of the tasks extension (and of elicitation): its
    headers and body."""
    caps = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "wire", "version": "0"},
    }
    h = headers(**{"mcp-protocol-version": "2026-07-28", "mcp-method": method})
    named = params.get("name", params.get("taskId"))
    if isinstance(named, str):
        h["mcp-name"] = named
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": meta}}
    return h, orjson.dumps(body)


async def test_answers_given_on_several_workers_at_once_are_all_kept(jobs: Cluster) -> None:
    # A task of the extension asks four questions at once on the worker running it; the
    # four answers are sent at the same moment and land on the three workers: each edit of
    # the task in Redis is made over the record it read, or made again, so none is lost
    # (a lost answer would leave the task waiting for input until the test times out).
    async with httpx2.AsyncClient(timeout=20) as http:

        async def post(method: str, params: dict[str, Any]) -> Any:
            h, body = _modern(method, params)
            reply = answer(await http.post(jobs.url, headers=h, content=body))
            assert "result" in reply, reply
            return reply["result"]

        for _ in range(5):
            created = await post("tools/call", {"name": "survey", "arguments": {"n": 4}})
            task_id = created["taskId"]
            with anyio.fail_after(20):
                while True:
                    state = await post("tasks/get", {"taskId": task_id})
                    if len(state.get("inputRequests") or {}) == 4:
                        break
                    assert state["status"] in ("working", "input_required"), state
                    await anyio.sleep(0.02)  # polling is how this extension is used
                keys = list(state["inputRequests"])
                accept = {"action": "accept", "content": {"ok": True}}
                async with anyio.create_task_group() as tg:
                    for key in keys:
                        tg.start_soon(
                            post,
                            "tasks/update",
                            {"taskId": task_id, "inputResponses": {key: accept}},
                        )
                while state["status"] != "completed":
                    assert state["status"] in ("working", "input_required"), state
                    await anyio.sleep(0.02)
                    state = await post("tasks/get", {"taskId": task_id})
            assert state["result"]["content"][0]["text"] == "4 of 4"


async def test_a_task_followed_on_one_worker_hears_of_its_cancellation_on_another(
    jobs: Cluster,
) -> None:
    # The task runs where the proxy puts it, its follower listens on worker 0, and it is
    # cancelled through worker 1: the news reaches the stream through Redis.
    first, second = (u + "/mcp" for u in jobs.worker_urls[:2])
    async with httpx2.AsyncClient(timeout=30) as c:
        with anyio.fail_after(30):
            h, body = _modern("tools/call", {"name": "hold", "arguments": {}})
            created = answer(await c.post(jobs.url, headers=h, content=body))["result"]
            task_id = created["taskId"]
            h, body = _modern("subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
            async with c.stream("POST", first, headers=h, content=body) as stream:
                notes = _sse(stream.aiter_bytes())
                ack = await notes.__anext__()
                assert ack["params"]["notifications"] == {"taskIds": [task_id]}
                assert (await notes.__anext__())["params"]["status"] == "working"
                h, body = _modern("tasks/cancel", {"taskId": task_id}, rid=2)
                assert "result" in answer(await c.post(second, headers=h, content=body))
                told = await notes.__anext__()
    assert told["method"] == "notifications/tasks"
    assert (told["params"]["taskId"], told["params"]["status"]) == (task_id, "cancelled")


async def _sse(chunks: Any) -> Any:
    """The messages of an SSE body, as they arrive."""
    buffer = b""
    async for chunk in chunks:
        buffer += chunk.replace(b"\r\n", b"\n")
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            for _, message in sse_messages(block + b"\n\n"):
                yield message


async def test_a_resource_update_reaches_each_subscriber_once(jobs: Cluster) -> None:
    updates: list[str] = []
    got = anyio.Event()

    async def on_update(params: Any) -> None:
        updates.append(params.uri)
        got.set()

    async with mcpkit.Client(
        jobs.url, protocol_version="2025-11-25", resource_updated_handler=on_update
    ) as client:
        await client.subscribe("note://board")
        for _ in range(3):
            await client.list_tools()  # the session now has a replica on every worker
        await client.call_tool("touch", {"uri": "note://board"})
        with anyio.fail_after(10):
            await got.wait()
        await client.call_tool("touch", {"uri": "note://other"})
        await client.unsubscribe("note://board")
        await client.call_tool("touch", {"uri": "note://board"})
        await client.list_tools()
    assert updates == ["note://board"]


async def test_a_2026_listen_stream_hears_of_changes_made_on_every_worker(
    jobs: Cluster,
) -> None:
    # The listen stream is served by one worker; the calls land on the three workers in
    # turn (strict round robin), so two of each three changes happen elsewhere.
    changed: list[str] = []
    updates: list[str] = []
    heard = {"event": anyio.Event()}

    async def on_change(kind: str) -> None:
        changed.append(kind)
        heard["event"].set()

    async def on_update(params: Any) -> None:
        updates.append(params.uri)
        heard["event"].set()

    async with mcpkit.Client(
        jobs.url, list_changed_handler=on_change, resource_updated_handler=on_update
    ) as client:
        assert client.protocol_version == "2026-07-28"
        await client.subscribe("note://board")
        for i in range(3):
            heard["event"] = anyio.Event()
            await client.call_tool("grow", {"name": f"grown_2026_{os.getpid()}_{i}"})
            with anyio.fail_after(10):
                await heard["event"].wait()
        for _ in range(3):
            heard["event"] = anyio.Event()
            await client.call_tool("touch", {"uri": "note://board"})
            with anyio.fail_after(10):
                await heard["event"].wait()
    assert changed == ["tools"] * 3
    assert updates == ["note://board"] * 3


async def test_a_2025_session_hears_of_a_change_once_whichever_worker_made_it(
    jobs: Cluster,
) -> None:
    changed: list[str] = []
    heard = anyio.Event()

    async def on_change(kind: str) -> None:
        changed.append(kind)
        heard.set()

    async with mcpkit.Client(
        jobs.url, protocol_version="2025-11-25", list_changed_handler=on_change
    ) as client:
        for _ in range(3):
            await client.list_tools()  # the session now has a replica on every worker
        for i in range(3):
            heard = anyio.Event()
            await client.call_tool("grow", {"name": f"grown_2025_{os.getpid()}_{i}"})
            with anyio.fail_after(10):
                await heard.wait()
        # One more round trip on each worker: a duplicate would have arrived by now.
        for _ in range(3):
            await client.list_tools()
    assert changed == ["tools"] * 3


async def test_log_level_set_on_one_worker_holds_on_the_others(jobs: Cluster) -> None:
    async with httpx2.AsyncClient(timeout=20) as http:
        sid = await initialize(http, jobs.url)
        r = await call(http, jobs.url, sid, "logging/setLevel", {"level": "error"})
        assert r["result"] == {}
        # Three calls, three workers: each sends the error record and drops the info one.
        for _ in range(3):
            body = orjson.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "log_twice", "arguments": {}},
                }
            )
            got = await http.post(jobs.url, headers=headers(sid), content=body)
            logs = [m["params"] for _, m in sse_messages(got.content) if "method" in m]
            assert logs == [{"level": "error", "data": "loud"}], logs
        gone = await http.delete(jobs.url, headers=headers(sid))
        assert gone.status_code == 200
        for _ in range(3):  # ended for every worker
            r = await http.post(
                jobs.url, headers=headers(sid), content=b'{"jsonrpc":"2.0","id":9,"method":"ping"}'
            )
            assert r.status_code == 404


async def test_a_cancellation_reaches_the_worker_serving_the_request(jobs: Cluster) -> None:
    first, second = (u + "/mcp" for u in jobs.worker_urls[:2])
    async with httpx2.AsyncClient(timeout=20) as http:
        sid = await initialize(http, jobs.url)
        chat = {
            "jsonrpc": "2.0",
            "id": "talk",
            "method": "tools/call",
            "params": {"name": "chatter", "arguments": {"n": 1}, "_meta": {"progressToken": 1}},
        }
        async with http.stream(
            "POST", first, headers=headers(sid), content=orjson.dumps(chat)
        ) as r:
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": "talk", "reason": "enough"},
            }

            talking = anyio.Event()

            async def cancel_once_talking() -> None:
                await talking.wait()  # the call surely runs: its progress came
                sent = await http.post(second, headers=headers(sid), content=orjson.dumps(cancel))
                assert sent.status_code == 202

            buf = b""
            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(cancel_once_talking)
                    # The first worker cancels the call and ends its stream, unanswered.
                    async for chunk in r.aiter_raw():
                        buf += chunk
                        if b"notifications/progress" in buf:
                            talking.set()
        messages = [m for _, m in sse_messages(buf)]
        assert [m["method"] for m in messages] == ["notifications/progress"]


async def test_a_live_stream_resumed_on_another_worker_is_followed_to_its_end(
    jobs: Cluster,
) -> None:
    first, second = (u + "/mcp" for u in jobs.worker_urls[:2])
    async with httpx2.AsyncClient(timeout=20) as http:
        sid = await initialize(http, jobs.url)
        chat = {
            "jsonrpc": "2.0",
            "id": "slow",
            "method": "tools/call",
            "params": {
                "name": "chatter",
                "arguments": {"n": 3, "wait": 2},
                "_meta": {"progressToken": 1},
            },
        }
        async with http.stream(
            "POST", first, headers=headers(sid), content=orjson.dumps(chat)
        ) as r:
            with anyio.fail_after(10):
                seen, _ = await _read_events(r, 3)
        # The client went away; it resumes on another worker while the call still runs
        # there: what was sent is replayed, then the rest arrives as the first sends it.
        priming = seen.split(b"id:", 1)[1].split(b"\n", 1)[0].strip().decode()
        with anyio.fail_after(15):
            got = await http.get(second, headers=headers(sid, **{"last-event-id": priming}))
        messages = [m for _, m in sse_messages(got.content)]
        assert [m["params"]["progress"] for m in messages if "method" in m] == [1, 2, 3, 4]
        assert messages[-1]["id"] == "slow"
        assert messages[-1]["result"]["content"][0]["text"] == "done"


async def test_a_message_waits_for_the_next_get_stream_on_any_worker(jobs: Cluster) -> None:
    async with httpx2.AsyncClient(timeout=20) as http:
        sid = await initialize(http, jobs.url)
        await call(http, jobs.url, sid, "resources/subscribe", {"uri": "note://board"})
        # No GET stream anywhere: the update waits in the session's backlog...
        await call(
            http,
            jobs.url,
            sid,
            "tools/call",
            {"name": "touch", "arguments": {"uri": "note://board"}},
        )
        # ...and goes out first on the GET stream opened later, whichever worker takes it.
        async with http.stream("GET", jobs.url, headers=headers(sid)) as r:
            assert r.status_code == 200
            with anyio.fail_after(10):
                _, messages = await _read_events(r, 1)
        assert messages == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/resources/updated",
                "params": {"uri": "note://board"},
            }
        ]


async def test_every_key_in_redis_expires(jobs: Cluster, redis: RedisServer) -> None:
    import redis as redis_py

    # A session with a task, a subscription, a GET stream held and a backlog: every kind
    # of key this backend writes.
    # Looked at while the session lives: its end (the client's DELETE) removes some of
    # them, and when that lands against our look is a race.
    keys_client = redis_py.Redis(port=redis.port)
    try:
        async with mcpkit.Client(jobs.url, protocol_version="2025-11-25") as client:
            await client.subscribe("note://board")
            await (await client.call_tool_as_task("build", {"steps": 1})).result()
            await client.call_tool("build", {"steps": 1})
            kinds = {k.split(b":")[1] for k in keys_client.keys("mcpkit:*")}
            assert {b"s", b"ev", b"evs", b"sub", b"task", b"tasks", b"worker"} <= kinds, kinds
            lasting = [
                k
                for k in keys_client.keys("mcpkit:*")
                if keys_client.ttl(k) == -1 and k != b"mcpkit:taskseq"
            ]
            assert lasting == [], f"keys without a TTL: {lasting}"
    finally:
        keys_client.close()


# ---------------------------------------------------------------------- a worker dies


@pytest.fixture
def doomed(redis: RedisServer, tmp_path: Path) -> Iterator[Cluster]:
    with cluster(redis.url, tmp_path, target=JOBS) as c:
        yield c


async def _read_events(
    response: httpx2.Response, n: int, *, to_end: bool = False
) -> tuple[bytes, list[Any]]:
    """What a streamed response sent until ``n`` messages arrived (or, ``to_end``, until
    it ended, after at least ``n``)."""
    buf = b""
    async for chunk in response.aiter_raw():
        buf += chunk
        if not to_end and len(sse_messages(buf)) >= n and buf.endswith(b"\n\n"):
            break
    return buf, [m for _, m in sse_messages(buf)]


async def test_a_killed_worker_loses_nothing_of_a_session(doomed: Cluster) -> None:
    first = doomed.worker_urls[0] + "/mcp"
    second = doomed.worker_urls[1] + "/mcp"
    async with httpx2.AsyncClient(timeout=20) as http:
        sid = await initialize(http, doomed.url)
        # A task on the first worker, and a request streaming from it.
        started = await call(
            http, first, sid, "tools/call", {"name": "hold", "arguments": {}, "task": {}}
        )
        task_id = started["result"]["task"]["taskId"]
        chatter = {
            "jsonrpc": "2.0",
            "id": "chat",
            "method": "tools/call",
            "params": {"name": "chatter", "arguments": {"n": 3}, "_meta": {"progressToken": 7}},
        }
        async with http.stream(
            "POST", first, headers=headers(sid), content=orjson.dumps(chatter)
        ) as r:
            with anyio.fail_after(10):
                seen, messages = await _read_events(r, 3)
            # The priming event (no data) names where the stream starts.
            priming = seen.split(b"id:", 1)[1].split(b"\n", 1)[0].strip().decode()
            assert priming.endswith("_0")
            assert [m["params"]["progress"] for m in messages] == [1, 2, 3]
            os.kill(doomed.workers[0].pid, signal.SIGKILL)
            doomed.workers[0].wait(10)
        # The session goes on through the others (the proxy skips the dead worker).
        for _ in range(6):
            r2 = await call(
                http, doomed.url, sid, "tools/call", {"name": "build", "arguments": {"steps": 1}}
            )
            assert r2["result"]["content"][0]["text"] == "built in 1 steps"
        # The stream resumed on another worker replays what the dead one sent, then ends.
        resume = headers(sid, **{"last-event-id": priming})
        with anyio.fail_after(20):
            got = await http.get(second, headers=resume)
        assert got.status_code == 200
        replayed = [m for _, m in sse_messages(got.content)]
        assert [m["params"]["progress"] for m in replayed] == [1, 2, 3]
        # The task it ran ends as failed instead of `working` forever.
        status: dict[str, Any] = {}
        with anyio.fail_after(20):
            while True:
                status = (await call(http, doomed.url, sid, "tasks/get", {"taskId": task_id}))[
                    "result"
                ]
                if status["status"] != "working":
                    break
                await anyio.sleep(0.2)
        assert status["status"] == "failed"
        assert "worker" in status["statusMessage"]
