"""The client end of the legacy HTTP+SSE transport (protocol revision 2024-11-05)."""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import Any
from urllib.parse import urljoin, urlsplit

import anyio
import orjson
from anyio.abc import TaskGroup

from .._exceptions import ConnectionClosed, TransportError
from .._transports._base import Incoming, Message, RequestId
from .._transports._stream import DEFAULT_MAX_MESSAGE_SIZE
from ._client_common import (
    AuthLike,
    _client,
    _error_text,
    _is_cancel,
    _maybe_close,
    _Sink,
    send_for_status,
)
from ._errors import HTTPStatusFailure
from ._h1client import HTTPError
from ._interface import HTTPClient
from ._sse import SSEParser

logger = logging.getLogger("mcpkit.http.client")


class SSEClientTransport:
    """The client end of the legacy (2024-11-05) HTTP+SSE transport. Open with :func:`open_sse`."""

    def __init__(
        self,
        client: HTTPClient,
        endpoint: str,
        sink: _Sink,
        headers: Mapping[str, str],
        timeout: float,
    ) -> None:
        self._client = client
        self.endpoint = endpoint
        self._sink = sink
        self._headers = dict(headers)
        self.timeout = timeout
        self._scope = anyio.CancelScope()
        self._closed = False
        self.close_reason = "the SSE stream ended"

    @classmethod
    async def connect(
        cls,
        url: str,
        client: HTTPClient,
        tg: TaskGroup,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        sse_read_timeout: float = 300.0,
        sink: _Sink | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> SSEClientTransport:
        own_sink = sink is None
        sink = sink or _Sink()
        endpoint_box: list[str | BaseException] = []
        got_endpoint = anyio.Event()
        h = dict(headers or {})
        scope = anyio.CancelScope()

        async def reader() -> None:
            with scope:
                try:
                    req_h = {**h, "accept": "text/event-stream"}
                    t = (timeout, sse_read_timeout)
                    async with client.stream("GET", url, headers=req_h, timeout=t) as resp:
                        if resp.status_code >= 400:
                            raise HTTPStatusFailure(resp.status_code, await _error_text(resp))
                        parser = SSEParser(max_message_size)
                        async with aclosing(resp.aiter_bytes()) as chunks:
                            async for chunk in chunks:
                                for ev in parser.feed(chunk):
                                    if ev.event == "endpoint" and not got_endpoint.is_set():
                                        target = urljoin(url, ev.data.strip())
                                        if urlsplit(target)[:2] != urlsplit(url)[:2]:
                                            raise TransportError(
                                                f"the server's endpoint {target!r} is on another origin"
                                            )
                                        endpoint_box.append(target)
                                        got_endpoint.set()
                                    elif ev.event == "message" and ev.data:
                                        try:
                                            await sink.put(orjson.loads(ev.data))
                                        except orjson.JSONDecodeError:
                                            logger.warning("dropped an SSE event that is not JSON")
                except (TransportError, HTTPError, ValueError) as e:
                    if not got_endpoint.is_set():
                        endpoint_box.append(e)
                        got_endpoint.set()
                    else:
                        logger.debug("SSE stream ended: %s", e)
                finally:
                    if not got_endpoint.is_set():
                        endpoint_box.append(
                            TransportError("the SSE stream ended before the endpoint event")
                        )
                        got_endpoint.set()
                    if isinstance(endpoint_box[0], str):
                        # A live connection ended: the engine sees end-of-stream. (A failed
                        # connect leaves the sink open for the caller's error report.)
                        sink.end()

        tg.start_soon(reader)
        with anyio.fail_after(timeout):
            await got_endpoint.wait()
        got = endpoint_box[0]
        if isinstance(got, BaseException):
            scope.cancel()
            if own_sink:  # nobody else reads it: closed, not left to the garbage collector
                sink.close()
            if isinstance(got, TransportError):
                raise got
            raise TransportError(f"could not open the SSE stream at {url}: {got}") from got
        self = cls(client, got, sink, h, timeout)
        self._scope = scope
        return self

    async def receive(self) -> Incoming:
        return await self._sink.get()

    async def send(
        self, message: Message, /, *, related_request_id: RequestId | None = None
    ) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        try:
            status, text = await send_for_status(
                self._client,
                "POST",
                self.endpoint,
                content=orjson.dumps(message),
                headers={**self._headers, "content-type": "application/json"},
                timeout=self.timeout,
            )
        except HTTPError as e:
            if _is_cancel(message):
                return
            raise ConnectionClosed(
                f"POST to {self.endpoint} failed: {e or type(e).__name__}"
            ) from e
        if status >= 400 and not _is_cancel(message):
            raise HTTPStatusFailure(status, text)

    async def aclose(self) -> None:
        self._closed = True
        self._scope.cancel()
        self._sink.close()


@asynccontextmanager
async def open_sse(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: AuthLike = None,
    timeout: float = 30.0,
    sse_read_timeout: float = 300.0,
    http_client: Any = None,
    ssl_context: ssl.SSLContext | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[SSEClientTransport]:
    """Connect to a legacy (2024-11-05) HTTP+SSE server at its SSE ``url`` (e.g. ``.../sse``)."""
    async with (
        _maybe_close(
            _client(auth, timeout, http_client, ssl_context, url), http_client is None
        ) as client,
        anyio.create_task_group() as tg,
    ):
        t = await SSEClientTransport.connect(
            url,
            client,
            tg,
            headers=headers,
            timeout=timeout,
            sse_read_timeout=sse_read_timeout,
            max_message_size=max_message_size,
        )
        try:
            yield t
        finally:
            await t.aclose()
            tg.cancel_scope.cancel()
