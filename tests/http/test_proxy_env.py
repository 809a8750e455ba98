"""Proxies from the environment: with ``HTTP_PROXY`` set, the client goes through the proxy
(httpx2 carries it), and ``NO_PROXY`` exempts a host. The proxy is a real forward proxy on
127.0.0.1 (``_proxy.py``: it pipes each connection to the absolute URL's host)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _http_helpers import running
from _proxy import ForwardProxy

from mcpkit import Client, Server
from mcpkit._http._client_common import proxy_for

pytestmark = pytest.mark.anyio


def _server() -> Any:
    server = Server("behind")

    @server.tool()
    def ping_me() -> str:
        """Answer."""
        return "pong"

    return server.http_app()


async def _call(url: str) -> str:
    async with Client(url, protocol_version="2025-11-25") as client:
        result = await client.call_tool("ping_me", {})
    return str(result.content[0].text)  # type: ignore[union-attr]


async def test_http_proxy_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = ForwardProxy()
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with running(_server()) as srv, anyio.fail_after(30):
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, proxy.handle)
            url = f"http://127.0.0.1:{srv.port}/mcp"
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
            assert proxy_for(url) == f"http://127.0.0.1:{port}"
            assert await _call(url) == "pong"
            assert proxy.requests and all(f"127.0.0.1:{srv.port}/mcp" in r for r in proxy.requests)
            # NO_PROXY names the host: straight there.
            seen = len(proxy.requests)
            monkeypatch.setenv("NO_PROXY", "127.0.0.1")
            assert proxy_for(url) is None
            assert await _call(url) == "pong"
            assert len(proxy.requests) == seen
            tg.cancel_scope.cancel()
