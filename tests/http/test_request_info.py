"""``ctx.http_request``: a tool sees the HTTP request that carried its call (headers without
credentials, client address, path), under both revisions; nothing over memory or stdio."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit import Client, Context, Server, http
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio


def _server() -> Server:
    server = Server("info")

    @server.tool()
    def seen(ctx: Context) -> dict[str, Any]:
        """What the tool can see of its HTTP request."""
        req = ctx.http_request
        if req is None:
            return {"http": False}
        return {
            "http": True,
            "method": req.method,
            "path": req.path,
            "tenant": req.headers.get("x-tenant"),
            "authorization": req.headers.get("authorization"),
            "client": list(req.client) if req.client else None,
        }

    return server


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_tool_sees_its_http_request(revision: str) -> None:
    headers = {"x-tenant": "acme", "authorization": "Bearer not-for-tools"}
    with anyio.fail_after(20):
        async with (
            ASGIClient(_server().http_app()) as asgi,
            Client(
                http("http://127.0.0.1/mcp", headers=headers, http_client=asgi),
                protocol_version=revision,
            ) as client,
        ):
            result = await client.call_tool("seen", {})
    assert result.structured_content == {
        "http": True,
        "method": "POST",
        "path": "/mcp",
        "tenant": "acme",
        "authorization": None,  # credentials are not handed to tools
        "client": ["127.0.0.1", 50000],
    }


async def test_nothing_outside_http() -> None:
    with anyio.fail_after(20):
        async with Client(_server()) as client:
            result = await client.call_tool("seen", {})
    assert result.structured_content == {"http": False}


def test_credentials_are_withheld_however_the_headers_are_read() -> None:
    from mcpkit._http._request_info import from_scope

    scope = {"method": "POST", "path": "/mcp", "client": ("127.0.0.1", 5)}
    raw = {
        "x-tenant": "acme",
        "authorization": "Bearer secret",
        "cookie": "sid=secret",
        "proxy-authorization": "Basic secret",
        ":mcpkit-principal": "alice",
    }
    headers = from_scope(scope, raw).headers
    assert dict(headers) == {"x-tenant": "acme"}
    assert list(headers) == ["x-tenant"] and len(headers) == 1
    assert "authorization" not in headers and headers.get("cookie") is None
    assert "secret" not in repr(headers) and "alice" not in repr(headers)
    with pytest.raises(KeyError):
        headers["proxy-authorization"]
    assert headers == {"x-tenant": "acme"}
    assert not hasattr(headers, "__setitem__")
