"""A strict round-robin HTTP proxy: every request goes to the next upstream, in turn.

What a load balancer without sticky sessions does, at its most hostile: two requests of
one session never reach the same worker in a row. Responses (SSE included) are streamed
through as they come. Run: ``python tests/scaleout/_rrproxy.py PORT UPSTREAM...``; it
prints ``ready`` once listening.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import uvicorn

Scope = dict[str, Any]
Message = dict[str, Any]

_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"content-length", b"host"}


class RoundRobin:
    """The ASGI app of the proxy."""

    def __init__(self, upstreams: list[str]) -> None:
        self.upstreams = upstreams
        self.turn = itertools.cycle(range(len(upstreams)))
        self.client = httpx2.AsyncClient(timeout=httpx2.Timeout(60.0, read=None))
        self.count = [0] * len(upstreams)

    async def __call__(
        self,
        scope: Scope,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await self.client.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            m = await receive()
            body += m.get("body", b"")
            if not m.get("more_body"):
                break
        # Leading and trailing whitespace is not part of a field value (RFC 9110 5.5): a
        # proxy forwards the value without it, as nginx does (httpx refuses to send it).
        headers = [(k, v.strip(b" \t")) for k, v in scope["headers"] if k.lower() not in _HOP]
        response = None
        # A worker that refuses connections is skipped (nothing reached it, so the request
        # is safe to send to the next): what a load balancer's passive health check does.
        for _ in range(len(self.upstreams)):
            i = next(self.turn)
            url = self.upstreams[i] + scope["path"]
            if scope.get("query_string"):
                url += "?" + scope["query_string"].decode()
            request = self.client.build_request(scope["method"], url, headers=headers, content=body)
            try:
                response = await self.client.send(request, stream=True)
            except httpx2.ConnectError:
                continue
            except httpx2.HTTPError:
                break
            self.count[i] += 1
            break
        if response is None:
            await send({"type": "http.response.start", "status": 502, "headers": []})
            await send({"type": "http.response.body", "body": b"upstream unreachable"})
            return
        try:
            out = [
                (k.encode(), v.encode())
                for k, v in response.headers.multi_items()
                if k.encode().lower() not in _HOP
            ]
            out.append((b"x-upstream", str(i).encode()))
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": out}
            )
            try:
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except httpx2.HTTPError:
                pass  # the worker went away mid-stream: the client sees the stream end
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()


def main() -> None:
    port = int(sys.argv[1])
    app = RoundRobin(sys.argv[2:])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    print("ready", flush=True)
    server.run()


if __name__ == "__main__":
    main()
