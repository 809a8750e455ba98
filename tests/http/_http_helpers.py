"""A real uvicorn server on 127.0.0.1 (random free port, background thread) and a small
ServerSession-based server object for the HTTP tests."""

from __future__ import annotations

import asyncio
import contextvars
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import uvicorn

from mcpkit._app import close_sse_stream
from mcpkit._exceptions import InvalidParams
from mcpkit._session import ServerSession
from mcpkit._session._base import RequestContext
from mcpkit._transports._base import Transport

TEXT = {"type": "text"}


class DemoServer:
    """Tools: echo, slow (sleeps), progress (n notifications), sample (sampling), log,
    gated (waits for an event set by the test), poll (closes its SSE connection mid-call)."""

    def __init__(self) -> None:
        self.sessions: list[ServerSession] = []
        self.gate = threading.Event()
        self.finished: list[str] = []
        self.keep_sessions = True

    def create_session(self, transport: Transport) -> ServerSession:
        async def list_tools(ctx: RequestContext, params: dict[str, Any] | None) -> dict[str, Any]:
            return {
                "tools": [
                    {"name": n, "inputSchema": {"type": "object"}}
                    for n in ("echo", "slow", "progress", "sample", "log", "gated", "poll")
                ]
            }

        async def call_tool(ctx: RequestContext, params: dict[str, Any] | None) -> dict[str, Any]:
            assert params is not None
            name = params.get("name")
            args = params.get("arguments") or {}
            if name == "echo":
                return {"content": [{"type": "text", "text": str(args.get("text", ""))}]}
            if name == "slow":
                await anyio.sleep(float(args.get("seconds", 0.2)))
                self.finished.append("slow")
                return {"content": [{"type": "text", "text": "slept"}]}
            if name == "progress":
                n = int(args.get("n", 10))
                for i in range(n):
                    await ctx.report_progress(i + 1, n)
                return {"content": [{"type": "text", "text": f"sent {n}"}]}
            if name == "sample":
                r = await ctx.send_request(
                    "sampling/createMessage",
                    {
                        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                        "maxTokens": 5,
                    },
                    timeout=10,
                )
                return {"content": [{"type": "text", "text": r["content"]["text"]}]}
            if name == "log":
                for i in range(3):
                    await ctx.notify(
                        "notifications/message", {"level": "info", "data": f"line {i}"}
                    )
                return {"content": [{"type": "text", "text": "logged"}]}
            if name == "gated":
                deadline = time.monotonic() + 10
                while not self.gate.is_set() and time.monotonic() < deadline:  # noqa: ASYNC110 - set from another thread
                    await anyio.sleep(0.01)
                self.finished.append("gated")
                return {"content": [{"type": "text", "text": "through the gate"}]}
            if name == "poll":
                await ctx.notify("notifications/message", {"level": "info", "data": "before"})
                await close_sse_stream(ctx, retry_ms=int(args.get("retry", 100)))
                await anyio.sleep(0.2)
                await ctx.notify("notifications/message", {"level": "info", "data": "after"})
                return {"content": [{"type": "text", "text": "polled"}]}
            raise InvalidParams(message=f"unknown tool {name}")

        async def set_level(ctx: RequestContext, params: dict[str, Any] | None) -> dict[str, Any]:
            return {}

        s = ServerSession(
            transport,
            server_info={"name": "demo", "version": "1.0"},
            capabilities={"tools": {"listChanged": True}, "logging": {}},
            handlers={
                "tools/list": list_tools,
                "tools/call": call_tool,
                "logging/setLevel": set_level,
            },
        )
        if self.keep_sessions:
            self.sessions.append(s)
        return s


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ThreadServer:
    """uvicorn serving ``app`` on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any, **kw: Any) -> None:
        self.app = app
        self.port = free_port()
        self.config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=2,
            **kw,
        )
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.loop: asyncio.AbstractEventLoop | None = None

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            await self.server.serve()

        asyncio.run(main())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)

    def call(self, fn: Any) -> Any:
        """Run ``fn()`` (a coroutine function) on the server's loop and wait (bounded)."""
        assert self.loop is not None
        # asyncio copies the *calling* thread's context into the task; a trio caller's
        # context says "trio" to sniffio, so the coroutine would build trio objects on
        # the asyncio loop. A fresh context keeps the server's side pure asyncio.
        fut = contextvars.Context().run(asyncio.run_coroutine_threadsafe, fn(), self.loop)
        return fut.result(10)

    def stop(self) -> None:
        if not self.thread.is_alive():
            return
        if self.loop is not None and hasattr(self.app, "aclose"):
            try:
                self.call(self.app.aclose)
            except Exception:
                pass
        self.server.should_exit = True
        self.thread.join(10)


def built_off_loop(factory: Any) -> Any:
    """``factory()`` run in a thread of its own, outside the test's event loop.

    Some libraries (the official SDK) create anyio objects when an app is built, and anyio
    picks the backend of the thread that builds them: an app built in a trio test but served
    by uvicorn's asyncio loop would hold trio objects.
    """
    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(factory()), daemon=True)
    thread.start()
    thread.join(30)
    assert box, "building the app failed (see the thread's traceback)"
    return box[0]


@contextmanager
def running(app: Any, **kw: Any) -> Iterator[ThreadServer]:
    srv = ThreadServer(app, **kw)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


CLIENT_INFO = {"name": "test-client", "version": "0.0.1"}
INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class Recorder:
    """ASGI middleware keeping (time, method, headers, body) of every HTTP request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[float, str, dict[str, str], bytes]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        body = bytearray()
        entry = (time.monotonic(), scope["method"], headers, b"")
        idx = len(self.requests)
        self.requests.append(entry)

        async def rec_receive() -> Any:
            m = await receive()
            if m["type"] == "http.request":
                body.extend(m.get("body", b""))
                self.requests[idx] = (entry[0], entry[1], entry[2], bytes(body))
            return m

        await self.app(scope, rec_receive, send)

    def bodies(self) -> list[Any]:
        import orjson

        return [orjson.loads(b) for _, m, _, b in self.requests if m == "POST" and b]


async def asgi_call(
    app: Any,
    method: str,
    headers: dict[str, str],
    body: bytes = b"",
    path: str = "/mcp",
    *,
    send: Any = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request straight into an ASGI app (no server), for in-process load tests.

    ``send`` replaces the recording one (e.g. to play a client that went away).
    """
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "root_path": "",
        "query_string": b"",
        "headers": [
            (k.encode(), v.encode()) for k, v in {"host": "127.0.0.1:9", **headers}.items()
        ],
    }
    delivered = False
    status = 0
    out_headers: dict[str, str] = {}
    chunks: list[bytes] = []

    async def receive() -> Any:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()

    async def record(m: Any) -> None:
        nonlocal status
        if m["type"] == "http.response.start":
            status = m["status"]
            out_headers.update({k.decode(): v.decode() for k, v in m.get("headers", [])})
        else:
            chunks.append(m.get("body", b""))

    await app(scope, receive, send or record)
    return status, out_headers, b"".join(chunks)


class sse_events:  # named like the generator function it replaces
    """Parsed SSE events of an httpx2 streaming response, as they come.

    An iterator object rather than an async generator: tests stop reading mid-stream, and
    trio (unlike asyncio) reports an async generator left unfinished to the GC.
    """

    def __init__(self, resp: Any) -> None:
        from mcpkit._http._sse import SSEParser

        self._parser = SSEParser()
        self._chunks = resp.aiter_bytes()
        self._ready: list[Any] = []

    def __aiter__(self) -> sse_events:
        return self

    async def __anext__(self) -> Any:
        while not self._ready:
            chunk = await self._chunks.__anext__()  # StopAsyncIteration ends us too
            self._ready.extend(self._parser.feed(chunk))
        return self._ready.pop(0)

    async def aclose(self) -> None:
        await self._chunks.aclose()
