"""An HTTP client that calls an ASGI application in this process: no socket, no server.

The HTTP transports run over it unchanged, so a test drives the real client code against the
real app. It behaves as a server in front of the app would: the request body is delivered at
once, the response streams as the app sends it, and a response the client stops reading is
an ``http.disconnect`` for the app (which then finishes on its own; sends after it are
dropped, as an ASGI server drops them).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Mapping,
    MutableMapping,
    Sequence,
)
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, overload
from urllib.parse import unquote, urlsplit

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream

from .._exceptions import HTTPProtocolError, HTTPReadTimeout
from ._interface import HTTPClient, Timeouts

#: Request headers: a mapping, or (name, value) pairs (a name may then repeat).
RequestHeaders = Mapping[str, str] | Sequence[tuple[str, str]]

ASGIApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[MutableMapping[str, Any]]],
        Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ],
    Awaitable[None],
]

#: How long the app may take to finish after its client went away, before it is cancelled.
_APP_EXIT_GRACE = 5.0


class _Headers:
    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._d = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in raw}

    @overload
    def get(self, name: str, /) -> str | None: ...

    @overload
    def get(self, name: str, default: str, /) -> str: ...

    def get(self, name: str, default: str | None = None, /) -> str | None:
        return self._d.get(name.lower(), default)


class ASGIResponse:
    """The app's response, its body read as the app sends it."""

    def __init__(
        self,
        status: int,
        headers: _Headers,
        body: MemoryObjectReceiveStream[bytes],
        read_timeout: float | None,
    ) -> None:
        self.status_code = status
        self.reason_phrase = ""
        self._headers = headers
        self._body = body
        self._read_timeout = read_timeout

    @property
    def headers(self) -> _Headers:
        return self._headers

    async def aiter_bytes(self) -> AsyncGenerator[bytes, None]:
        while True:
            try:
                with anyio.fail_after(self._read_timeout):
                    chunk = await self._body.receive()
            except TimeoutError as e:
                raise HTTPReadTimeout(f"no data from the app within {self._read_timeout} s") from e
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            yield chunk

    async def aread(self) -> bytes:
        return b"".join([c async for c in self.aiter_bytes()])

    async def aclose(self) -> None:
        self._body.close()


class ASGIClient:
    """Call ``app`` in this process as an HTTP client would over a socket.

    Use it as ``async with``: it runs the app's lifespan (startup, then shutdown at exit)
    unless ``lifespan=False``. Give it to the HTTP transports as ``http_client=``.

    Example::

        app = server.http_app()
        async with ASGIClient(app) as http:
            async with open_streamable_http("http://127.0.0.1/mcp", http_client=http) as t:
                async with ClientSession(t, client_info={"name": "t", "version": "1"}) as s:
                    await s.initialize()
    """

    def __init__(self, app: ASGIApp, *, lifespan: bool = True, timeout: float = 30.0) -> None:
        self.app = app
        self.timeout = timeout
        self._lifespan = lifespan
        self._tg: TaskGroup | None = None
        self._shutdown: anyio.Event | None = None
        self._lifespan_done: anyio.Event | None = None

    async def __aenter__(self) -> ASGIClient:
        self._tg = await anyio.create_task_group().__aenter__()
        if self._lifespan:
            await self._start_lifespan(self._tg)
        return self

    async def __aexit__(self, *exc: object) -> None:
        tg, self._tg = self._tg, None
        if tg is None:
            return
        try:
            if self._shutdown is not None and self._lifespan_done is not None:
                self._shutdown.set()
                with anyio.move_on_after(self.timeout):
                    await self._lifespan_done.wait()
        finally:
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)

    async def aclose(self) -> None:
        """Nothing to close per client (the lifespan ends with ``async with``)."""

    async def _start_lifespan(self, tg: TaskGroup) -> None:
        started, self._shutdown, done = anyio.Event(), anyio.Event(), anyio.Event()
        self._lifespan_done = done
        outcome: list[str] = []
        sent_startup = False

        async def receive() -> MutableMapping[str, Any]:
            nonlocal sent_startup
            if not sent_startup:
                sent_startup = True
                return {"type": "lifespan.startup"}
            assert self._shutdown is not None
            await self._shutdown.wait()
            return {"type": "lifespan.shutdown"}

        async def send(message: MutableMapping[str, Any]) -> None:
            outcome.append(str(message["type"]))
            if message["type"].startswith("lifespan.startup"):
                started.set()

        async def run() -> None:
            try:
                await self.app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
            finally:
                started.set()
                done.set()

        tg.start_soon(run)
        with anyio.fail_after(self.timeout):
            await started.wait()
        if "lifespan.startup.failed" in outcome:
            raise HTTPProtocolError("the app's lifespan startup failed")

    # ------------------------------------------------------------------ requests

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: RequestHeaders | None = None,
        timeout: Timeouts | float | None = None,
    ) -> AsyncIterator[ASGIResponse]:
        read_t = timeout[1] if isinstance(timeout, tuple) else (timeout or self.timeout)
        scope = _scope(method, url, content, headers)
        to_client, from_app = anyio.create_memory_object_stream[bytes](math.inf)
        head: dict[str, Any] = {}
        started, app_done, gone = anyio.Event(), anyio.Event(), anyio.Event()
        delivered = False

        async def receive() -> MutableMapping[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": content, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            if gone.is_set():
                return  # the client left: dropped, as a server drops them
            if message["type"] == "http.response.start":
                head.update(message)
                started.set()
            elif message["type"] == "http.response.body":
                body = message.get("body", b"")
                if body:
                    to_client.send_nowait(bytes(body))
                if not message.get("more_body", False):
                    to_client.close()

        async def run_app() -> None:
            try:
                await self.app(scope, receive, send)
            finally:
                to_client.close()
                started.set()
                app_done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_app)
            with anyio.fail_after(read_t):
                await started.wait()
            if "status" not in head:
                raise HTTPProtocolError("the app ended without a response")
            resp = ASGIResponse(
                int(head["status"]), _Headers(head.get("headers", [])), from_app, read_t
            )
            try:
                yield resp
            finally:
                gone.set()
                from_app.close()
                with anyio.move_on_after(_APP_EXIT_GRACE, shield=True):
                    await app_done.wait()
                tg.cancel_scope.cancel()

    async def request(
        self,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: RequestHeaders | None = None,
        timeout: Timeouts | float | None = None,
    ) -> _ReadResponse:
        """Send and read the whole body."""
        async with self.stream(
            method, url, content=content, headers=headers, timeout=timeout
        ) as resp:
            body = await resp.aread()
        return _ReadResponse(resp.status_code, resp.headers, body)

    async def post(
        self,
        url: str,
        *,
        content: bytes = b"",
        headers: RequestHeaders | None = None,
        timeout: Timeouts | float | None = None,
    ) -> _ReadResponse:
        return await self.request("POST", url, content=content, headers=headers, timeout=timeout)

    async def delete(
        self,
        url: str,
        *,
        headers: RequestHeaders | None = None,
        timeout: Timeouts | float | None = None,
    ) -> _ReadResponse:
        return await self.request("DELETE", url, headers=headers, timeout=timeout)


class _ReadResponse:
    """A response already read in full."""

    def __init__(self, status: int, headers: _Headers, body: bytes) -> None:
        self.status_code = status
        self.reason_phrase = ""
        self._headers = headers
        self._content = body

    @property
    def headers(self) -> _Headers:
        return self._headers

    async def aiter_bytes(self) -> AsyncGenerator[bytes, None]:
        if self._content:
            yield self._content

    async def aread(self) -> bytes:
        return self._content

    async def aclose(self) -> None:
        pass


#: The client port of each exchange: in process there are no connections, so each exchange
#: is one of its own (the app tells a connection by its client's address and port).
_ports = itertools.cycle(range(50000, 60000))


def _scope(method: str, url: str, content: bytes, headers: RequestHeaders | None) -> dict[str, Any]:
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    pairs = headers.items() if isinstance(headers, Mapping) else headers or ()
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in pairs]
    names = {k for k, _ in raw}
    if b"host" not in names:
        raw.append((b"host", parts.netloc.encode("latin-1")))
    if content and b"content-length" not in names:
        raw.append((b"content-length", str(len(content)).encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method.upper(),
        "scheme": parts.scheme or "http",
        "path": unquote(parts.path) or "/",
        "raw_path": (parts.path or "/").encode("latin-1"),
        "query_string": parts.query.encode("latin-1"),
        "root_path": "",
        "headers": raw,
        "client": ("127.0.0.1", next(_ports)),
        "server": (host, port),
    }


if TYPE_CHECKING:  # the HTTP transports' interface, checked by mypy
    _conforms: type[HTTPClient] = ASGIClient
