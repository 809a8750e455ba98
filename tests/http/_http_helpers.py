"""The HTTP tests' tools: a small ServerSession-based server object (:class:`DemoServer`), the
app called in process (:func:`in_process`, raw requests through :class:`ASGIClient`; no
socket), and a real uvicorn server on 127.0.0.1 (random free port, background thread) for the
tests that need a socket. :class:`Changes` and :class:`Gate` let a test wait for what a server
does, in whichever thread and event loop it runs, without polling."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import orjson
import sniffio
import uvicorn

from mcpkit._app import close_sse_stream
from mcpkit._exceptions import InvalidParams
from mcpkit._session import ServerSession
from mcpkit._session._base import RequestContext
from mcpkit._transports._base import Transport
from mcpkit.lowlevel import ASGIClient

TEXT = {"type": "text"}


def _waker(event: anyio.Event) -> Callable[[], None]:
    """A function that sets ``event`` (made in the calling task's loop) from any thread."""
    thread = threading.get_ident()
    soon: Callable[[Callable[[], object]], object]
    if sniffio.current_async_library() == "trio":
        import trio

        soon = trio.lowlevel.current_trio_token().run_sync_soon
    else:
        soon = asyncio.get_running_loop().call_soon_threadsafe

    def wake() -> None:
        if threading.get_ident() == thread:
            event.set()
        else:  # never blocks the notifying thread (it may be a server loop the waiter awaits)
            with contextlib.suppress(RuntimeError):  # that loop is gone: nobody waits
                soon(event.set)

    return wake


class Changes:
    """Wakes the tasks waiting for a condition, whichever thread and loop (asyncio or trio)
    they and the notifier run in: whoever changes what a condition reads calls ``notify()``.

    The state of a server under uvicorn lives in uvicorn's thread while the test runs in its
    own; in process, both share one loop. Either way a test awaits ``wait_for(condition)``
    (bound it with ``anyio.fail_after``) instead of polling with sleeps.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: list[Callable[[], None]] = []

    def notify(self) -> None:
        with self._lock:
            waiters, self._waiters = self._waiters, []
        for wake in waiters:
            wake()

    async def wait_for(self, condition: Callable[[], bool]) -> None:
        while not condition():
            event = anyio.Event()
            wake = _waker(event)
            with self._lock:
                self._waiters.append(wake)
            try:
                if condition():  # changed before we were registered: not missed
                    return
                await event.wait()
            finally:
                with self._lock, contextlib.suppress(ValueError):
                    self._waiters.remove(wake)


class Gate:
    """A gate a test opens from any thread, awaited by tools in any loop (no polling)."""

    def __init__(self) -> None:
        self._open = False
        self._changes = Changes()

    def set(self) -> None:
        self._open = True
        self._changes.notify()

    def is_set(self) -> bool:
        return self._open

    async def wait(self) -> None:
        await self._changes.wait_for(self.is_set)


class DemoServer:
    """Tools: echo, slow (sleeps), progress (n notifications), sample (sampling), log,
    gated (waits for the test to open ``gate``), poll (closes its SSE connection mid-call).

    ``started``, ``finished`` and ``cancelled`` list the slow and gated calls that began,
    ended, and were cancelled; ``changes`` is notified as they grow
    (``await demo.changes.wait_for(...)``).
    """

    def __init__(self) -> None:
        self.sessions: list[ServerSession] = []
        self.gate = Gate()
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self.changes = Changes()
        self.keep_sessions = True

    def _note(self, what: list[str], name: str) -> None:
        what.append(name)
        self.changes.notify()

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
                self._note(self.started, "slow")
                await anyio.sleep(float(args.get("seconds", 0.2)))  # the work it simulates
                self._note(self.finished, "slow")
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
                self._note(self.started, "gated")
                try:
                    with anyio.move_on_after(10):  # a test that never opens it does not hang it
                        await self.gate.wait()
                except anyio.get_cancelled_exc_class():
                    self._note(self.cancelled, "gated")
                    raise
                self._note(self.finished, "gated")
                return {"content": [{"type": "text", "text": "through the gate"}]}
            if name == "poll":
                await ctx.notify("notifications/message", {"level": "info", "data": "before"})
                await close_sse_stream(ctx, retry_ms=int(args.get("retry", 100)))
                await anyio.sleep(0.2)  # work done while the client is away (then replayed)
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


class _Server(uvicorn.Server):
    """``up`` is set once it listens (or has failed to start)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.up = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.up.set()


class ThreadServer:
    """uvicorn serving ``app`` on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any, **kw: Any) -> None:
        self.app = app
        self.port = free_port()
        # What serve_http runs: uvicorn's own protocol (httptools when installed), unless a
        # test names one (http="h11").
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
        self.server = _Server(self.config)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.loop: asyncio.AbstractEventLoop | None = None

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            await self.server.serve()

        try:
            asyncio.run(main())
        finally:
            self.server.up.set()  # it failed to start: start() need not wait any longer

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.thread.start()
        if not self.server.up.wait(10) or not self.server.started:
            raise RuntimeError("uvicorn did not start")

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
    """ASGI middleware keeping (time, method, headers, body) of every HTTP request.

    ``finished`` holds the indexes (in ``requests``) of the requests the app has finished
    handling. ``await rec.wait_for(condition)`` waits (no polling) until ``condition()``
    holds; it is checked again whenever a request arrives, a body has been read or the app
    has finished with a request.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[float, str, dict[str, str], bytes]] = []
        self.finished: set[int] = set()
        self.changes = Changes()

    async def wait_for(self, condition: Callable[[], bool]) -> None:
        await self.changes.wait_for(condition)

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
        self.changes.notify()

        async def rec_receive() -> Any:
            m = await receive()
            if m["type"] == "http.request":
                body.extend(m.get("body", b""))
                self.requests[idx] = (entry[0], entry[1], entry[2], bytes(body))
                if not m.get("more_body"):
                    self.changes.notify()
            return m

        try:
            await self.app(scope, rec_receive, send)
        finally:
            self.finished.add(idx)
            self.changes.notify()

    def bodies(self) -> list[Any]:
        import orjson

        return [orjson.loads(b) for _, m, _, b in self.requests if m == "POST" and b]


async def asgi_call(
    app: Any,
    method: str,
    headers: dict[str, str],
    body: bytes | Iterable[bytes] = b"",
    path: str = "/mcp",
    *,
    send: Any = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request straight into an ASGI app (no server), for in-process load tests.

    ``body`` may be several chunks (sent as they would arrive without a Content-Length);
    ``send`` replaces the recording one (e.g. to play a client that went away).
    """
    chunks_in = [body] if isinstance(body, bytes) else list(body)
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
    status = 0
    out_headers: dict[str, str] = {}
    chunks: list[bytes] = []

    async def receive() -> Any:
        if chunks_in:
            chunk = chunks_in.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks_in)}
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


def broken_app(kind: str) -> Any:
    """An ASGI app answering every request wrongly: "500", "bad-json" (a truncated JSON body),
    "garbage-sse" (bytes that are no SSE), or "midstream" (an SSE stream that ends before the
    response, without event ids)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        if kind == "500":
            await send(
                {
                    "type": "http.response.start",
                    "status": 500,
                    "headers": [(b"content-type", b"text/plain")],
                }
            )
            await send({"type": "http.response.body", "body": b"boom"})
        elif kind == "bad-json":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": b'{"jsonrpc": "2.0", "id": 1, "res'})
        elif kind == "garbage-sse":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            await send(
                {
                    "type": "http.response.body",
                    "body": bytes(range(256)) * 64 + b"\n\ndata: {nope\n\n",
                    "more_body": True,
                }
            )
            await send({"type": "http.response.body", "body": b""})
        else:  # an SSE stream that ends before the response, without event ids
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            await send({"type": "http.response.body", "body": b": hello\n\n", "more_body": True})
            await send({"type": "http.response.body", "body": b""})

    return app


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


#: Where the in-process tests address the app (the Host header says 127.0.0.1:8000).
IN_PROCESS_BASE = "http://127.0.0.1:8000"


class Reply:
    """A response read in full: what the HTTP-level tests read of an httpx response."""

    class Headers:
        def __init__(self, raw: Any) -> None:
            self._raw = raw

        def __getitem__(self, name: str) -> str:
            value = self._raw.get(name)
            if value is None:
                raise KeyError(name)
            return str(value)

        def __contains__(self, name: object) -> bool:
            return isinstance(name, str) and self._raw.get(name) is not None

        def get(self, name: str, default: str | None = None) -> str | None:
            value = self._raw.get(name)
            return default if value is None else str(value)

    def __init__(self, status_code: int, headers: Any, content: bytes) -> None:
        self.status_code = status_code
        self.headers = Reply.Headers(headers)
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode()

    def json(self) -> Any:
        return orjson.loads(self.content)


class InProcessHTTP:
    """Raw HTTP requests to an app in this process, through :class:`ASGIClient` (no socket).

    ``url`` and ``base`` address the app as a server's would; ``app`` is the app itself.
    """

    def __init__(self, asgi: ASGIClient, app: Any, path: str = "/mcp") -> None:
        self.asgi = asgi
        self.app = app
        self.base = IN_PROCESS_BASE
        self.url = IN_PROCESS_BASE + path

    async def request(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        content: bytes = b"",
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        if json is not None:
            content = orjson.dumps(json)
        r = await self.asgi.request(method, url, content=content, headers=headers)
        return Reply(r.status_code, r.headers, await r.aread())

    async def post(self, url: str, **kw: Any) -> Reply:
        return await self.request("POST", url, **kw)

    async def get(self, url: str, **kw: Any) -> Reply:
        return await self.request("GET", url, **kw)

    async def delete(self, url: str, **kw: Any) -> Reply:
        return await self.request("DELETE", url, **kw)

    async def put(self, url: str, **kw: Any) -> Reply:
        return await self.request("PUT", url, **kw)

    async def post_chunks(
        self, url: str, chunks: Iterable[bytes], headers: Mapping[str, str]
    ) -> Reply:
        """POST ``chunks`` as a body of unknown length (no Content-Length), chunk by chunk."""
        path = url.removeprefix(self.base)
        status, out, body = await asgi_call(self.app, "POST", dict(headers), chunks, path)
        return Reply(status, out, body)


@asynccontextmanager
async def in_process(app: Any, timeout: float = 15) -> AsyncIterator[InProcessHTTP]:
    """``app`` served in this process (its lifespan run), for raw requests; bounded."""
    with anyio.fail_after(timeout):
        async with ASGIClient(app) as asgi:
            yield InProcessHTTP(asgi, app)


async def read_body(receive: Any) -> bytes:
    """The whole body of the ASGI HTTP request ``receive`` reads."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def replaying(body: bytes, receive: Any) -> Callable[[], Awaitable[Any]]:
    """An ASGI ``receive`` giving ``body`` (already read by :func:`read_body`) first, then
    what ``receive`` gives: the request handed on to the app behind as it came."""
    replayed = False

    async def replay() -> Any:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
