"""Middleware sees who called: ``MCPRequest.principal`` is the verified principal, and
:class:`RateLimitMiddleware` keeps one bucket per principal (not one per session)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import Client, ProtocolError, Server, http
from mcpkit.auth import Principal, ResourceServer, StaticTokenVerifier
from mcpkit.lowlevel import ASGIClient
from mcpkit.middleware import RATE_LIMITED, MCPRequest, RateLimitMiddleware

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1/mcp"


def server_with(seen: list[Any]) -> Server:
    async def record(request: MCPRequest, call_next: Any) -> Any:
        seen.append(request.principal)
        return await call_next(request)

    verifier = StaticTokenVerifier(
        {
            "token-a": Principal(subject="a", scopes=frozenset({"mcp"})),
            "token-b": Principal(subject="b", scopes=frozenset({"mcp"})),
        }
    )
    server = Server(
        "limited",
        auth=ResourceServer(verifier, resource=URL, scopes=["mcp"]),
        middleware=[record, RateLimitMiddleware(1, 1, methods=["tools/call"], clock=lambda: 0.0)],
    )

    @server.tool()
    def ping() -> str:
        return "pong"

    return server


@pytest.mark.parametrize("version", [None, "2025-11-25"])
async def test_rate_limit_is_per_principal(version: str | None) -> None:
    seen: list[Any] = []
    server = server_with(seen)
    async with ASGIClient(server.http_app()) as h:

        def client(token: str) -> Client:
            target = http(URL, headers={"authorization": f"Bearer {token}"}, http_client=h)
            return Client(target, protocol_version=version)

        async with client("token-a") as a, client("token-b") as b:
            assert (await a.call_tool("ping", {})).content[0].text == "pong"  # type: ignore[union-attr]
            with pytest.raises(ProtocolError) as info:
                await a.call_tool("ping", {})
            assert info.value.code == RATE_LIMITED
            # Another principal has its own bucket, in either era.
            assert (await b.call_tool("ping", {})).content[0].text == "pong"  # type: ignore[union-attr]
    subjects = {p.subject for p in seen if p is not None}
    assert subjects == {"a", "b"}
