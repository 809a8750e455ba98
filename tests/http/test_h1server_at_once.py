"""A 2026-07-28 request known to end at once (a sync tool shown short, no Context, nothing
asked to be said before the answer) is served by mcpkit's HTTP/1.1 protocol in the step that
read it, with no task (``mcpkit._backend._eager``), over real sockets: its answers are the
ASGI way's (uvicorn's h11) byte for byte, JSON and SSE; a pipelined burst of them is answered
in order without growing the stack; one that waits after all is finished by a task; what may
wait (an ``async def`` tool, a progress token, middleware) keeps its task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import pytest
from _h1_wire import H1_MARKS, Launcher, Running, request
from test_h1server_mcp import META, call, mcp_headers

import mcpkit
from mcpkit._app import StreamableHTTPApp
from mcpkit._backend._eager import AtOnce
from mcpkit._http import _h1server
from mcpkit._http._asgi import Receive, Scope, Send
from mcpkit._http._sse import SSEParser
from mcpkit._server import _threads
from mcpkit._server._threads import INLINE_AFTER

pytestmark = H1_MARKS


@pytest.fixture(autouse=True)
def _short_is_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded machine may preempt a call of a microsecond tool for milliseconds: what
    these tests check is what follows from "shown short", not how it is decided."""
    monkeypatch.setattr(_threads, "INLINE_UNDER", 10.0)
    monkeypatch.setattr(_threads, "INLINE_LIMIT", 10.0)


async def _later(text: str) -> str:
    await asyncio.sleep(0.01)  # waits on the loop: no anyio, which asks for a task
    return text.upper()


def at_once_server() -> mcpkit.Server:
    server = mcpkit.Server("at-once", version="1.0")

    @server.tool()
    def echo(text: str) -> str:
        """Says the text back."""
        if text == "boom":
            raise ValueError("no boom here")
        return text

    @server.tool()
    def maybe_later(text: str) -> Any:
        """Says the text back, or, for "wait", a coroutine that waits first."""
        return _later(text) if text == "wait" else text

    @server.tool()
    async def echo_async(text: str) -> str:
        """Says the text back, from a coroutine."""
        return text

    return server


class Ways:
    """The app's ``direct`` hook, recording what each request it took was given as."""

    def __init__(self, app: StreamableHTTPApp, monkeypatch: pytest.MonkeyPatch) -> None:
        self.kinds: list[str] = []
        hook = app.direct

        def direct(scope: Scope, body: bytes, receive: Receive, send: Send) -> Any:
            work = hook(scope, body, receive, send)
            self.kinds.append(
                "none" if work is None else "at once" if isinstance(work, AtOnce) else "task"
            )
            return work

        monkeypatch.setattr(app, "direct", direct)


@contextmanager
def counting_request_tasks() -> Iterator[list[str]]:
    """The running loop's tasks serving a request (the protocol's ``_run``), as created."""
    loop = asyncio.get_running_loop()
    made: list[str] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kw: Any) -> asyncio.Task[Any]:
        name = getattr(coro, "__qualname__", "")
        if name.endswith("._run"):
            made.append(name)
        return asyncio.Task(coro, loop=loop, **kw)

    previous = loop.get_task_factory()
    loop.set_task_factory(factory)
    try:
        yield made
    finally:
        loop.set_task_factory(previous)


def tool_call(name: str, text: str, rid: int, meta: dict[str, Any] = META) -> bytes:
    body = call(text, meta=meta, rid=rid)
    body["params"]["name"] = name
    return orjson.dumps(body)


async def _post(srv: Running, name: str, text: str, rid: int = 1, **meta: Any) -> Any:
    async with srv.connect() as c:
        body = tool_call(name, text, rid, {**META, **meta})
        await c.send(request("POST", "/mcp", body, mcp_headers(name=name), host=srv.host))
        return await c.response("POST")


async def _warm(srv: Running, name: str) -> None:
    """Calls until the sync tool is shown short (it then runs on the loop)."""
    for i in range(INLINE_AFTER + 1):
        r = await _post(srv, name, "warm", rid=100 + i)
        assert r.status == 200, r


@pytest.mark.parametrize("json_response", [True, False], ids=["json", "sse"])
async def test_a_call_that_ends_at_once_is_answered_without_a_task_as_the_asgi_way(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch, json_response: bool
) -> None:
    server = at_once_server()
    answers: dict[str, list[tuple[int, list[tuple[str, str]], bytes]]] = {}
    for http in ("mcpkit", "h11"):
        app = mcpkit.create_http_app(server, json_response=json_response)
        ways = Ways(app, monkeypatch)
        async with launcher.serve(app, http=http) as srv:
            await _warm(srv, "echo")
            ways.kinds.clear()
            got = []
            with counting_request_tasks() as tasks:
                for rid, text in enumerate(["hi", "boom"], start=1):
                    r = await _post(srv, "echo", text, rid)
                    varying = ("date", "server")
                    got.append(
                        (r.status, sorted(h for h in r.headers if h[0] not in varying), r.body)
                    )
            if http == "mcpkit":
                assert ways.kinds == ["at once", "at once"]
                assert tasks == []  # no task served either request
            answers[http] = got
    assert answers["mcpkit"] == answers["h11"]
    ok, failed = answers["mcpkit"]
    if json_response:
        result = orjson.loads(ok[2])["result"]
        assert ok[1][0] == ("content-length", str(len(ok[2])))
    else:
        (event,) = [e for e in SSEParser().feed(ok[2]) if e.data]
        result = orjson.loads(event.data)["result"]
        assert ("content-type", "text/event-stream") in ok[1]
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert b'"isError":true' in failed[2] and b"Error executing tool echo" in failed[2]


async def test_a_pipelined_burst_of_calls_that_end_at_once_is_answered_in_order(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 requests in one write (more than the recursion limit): each is answered in
    order, with no task unless the client's reading lagged: an answer that finds the
    socket's buffer full waits (flow control), and a task finishes that request."""
    app = mcpkit.create_http_app(at_once_server(), json_response=True)
    n = 2000
    pauses: list[None] = []
    pause = _h1server.H1Protocol.pause_writing

    def counted(self: _h1server.H1Protocol) -> None:
        pauses.append(None)
        pause(self)

    monkeypatch.setattr(_h1server.H1Protocol, "pause_writing", counted)
    async with launcher.serve(app) as srv:
        await _warm(srv, "echo")
        burst = b"".join(
            request("POST", "/mcp", tool_call("echo", f"t{i}", i), mcp_headers(), host=srv.host)
            for i in range(n)
        )
        with counting_request_tasks() as tasks:
            async with srv.connect() as c:
                await c.send(burst)
                ids = []
                for _ in range(n):
                    r = await c.response("POST")
                    assert r.status == 200, r
                    ids.append(r.json()["id"])
                    assert r.json()["result"]["content"][0]["text"] == f"t{ids[-1]}"
        assert ids == list(range(n))
        assert len(tasks) <= len(pauses), (len(tasks), len(pauses))


async def test_a_call_that_waits_after_all_is_finished_by_a_task(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync tool shown short that returns a coroutine this once: it was marked at once,
    waited in its first step, and a task ran the rest; the answer is whole."""
    app = mcpkit.create_http_app(at_once_server(), json_response=True)
    ways = Ways(app, monkeypatch)
    async with launcher.serve(app) as srv:
        await _warm(srv, "maybe_later")
        ways.kinds.clear()
        with counting_request_tasks() as tasks:
            r = await _post(srv, "maybe_later", "wait", rid=7)
        assert r.status == 200, r
        answer = r.json()
        assert answer["id"] == 7 and not answer["result"].get("isError"), answer
        assert answer["result"]["content"] == [{"type": "text", "text": "WAIT"}]
        assert ways.kinds == ["at once"] and len(tasks) == 1
        r = await _post(srv, "maybe_later", "again", rid=8)  # the connection's next request
        assert r.status == 200 and r.json()["result"]["content"][0]["text"] == "again"


async def _ways_taken(
    launcher: Launcher,
    monkeypatch: pytest.MonkeyPatch,
    server: mcpkit.Server,
    calls: list[tuple[str, str, dict[str, Any]]],
) -> list[str]:
    """How the direct way in took each call (tool, text, extra ``_meta``), the sync tool
    shown short first; every call answered with its text."""
    app = mcpkit.create_http_app(server, json_response=True)
    ways = Ways(app, monkeypatch)
    async with launcher.serve(app) as srv:
        await _warm(srv, "echo")
        ways.kinds.clear()
        for name, text, meta in calls:
            r = await _post(srv, name, text, **meta)
            assert r.status == 200, r
            sse = (r.get("content-type") or "").startswith("text/event-stream")
            answer = orjson.loads(_last_event(r.body)) if sse else r.json()  # progress: SSE
            assert answer["result"]["content"][0]["text"] == text, r
    return ways.kinds


def _last_event(body: bytes) -> str:
    return [e.data for e in SSEParser().feed(body) if e.data][-1]


async def test_what_may_wait_keeps_its_task(
    launcher: Launcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ``async def`` tool, a call asking for progress, a server with middleware: a task
    each, as before (they may wait, or say things before the answer)."""
    server = at_once_server()
    calls = [("echo_async", "a", {}), ("echo", "p", {"progressToken": "tok"}), ("echo", "b", {})]
    assert await _ways_taken(launcher, monkeypatch, server, calls) == ["task", "task", "at once"]

    async def passthrough(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    server.add_middleware(passthrough)
    assert await _ways_taken(launcher, monkeypatch, server, [("echo", "m", {})]) == ["task"]
