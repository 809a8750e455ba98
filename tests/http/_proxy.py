"""A real forward proxy on 127.0.0.1 for the tests of proxies from the environment: it pipes
each connection to the host named by the absolute URL of its first request line."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import anyio
import anyio.abc
from anyio.abc import SocketStream


class ForwardProxy:
    """Pipes each connection to the host named by its first request line."""

    def __init__(self) -> None:
        self.requests: list[str] = []

    async def handle(self, client: SocketStream) -> None:
        async with client:
            head = b""
            while b"\r\n" not in head:
                chunk = await client.receive()
                if not chunk:
                    return
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode()
            self.requests.append(line)
            target = urlsplit(line.split(" ")[1])
            async with await anyio.connect_tcp(target.hostname or "", target.port or 80) as up:
                await up.send(head)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._pipe, client, up)
                    tg.start_soon(self._pipe, up, client)

    @staticmethod
    async def _pipe(src: SocketStream, dst: SocketStream) -> None:
        try:
            async for chunk in src:
                await dst.send(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
            pass
        finally:
            # The other side may have hung up already (trio then reports ENOTCONN on shutdown).
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await dst.send_eof()


@asynccontextmanager
async def forward_proxy() -> AsyncIterator[tuple[ForwardProxy, str]]:
    """A :class:`ForwardProxy` serving on 127.0.0.1 while the block runs, and its URL."""
    proxy = ForwardProxy()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, proxy.handle)
        try:
            yield proxy, f"http://127.0.0.1:{port}"
        finally:
            tg.cancel_scope.cancel()
