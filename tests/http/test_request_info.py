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
    content = result.structured_content
    assert content is not None
    # In process each exchange is as if on a connection of its own: its own client port.
    host, port = content.pop("client")
    assert host == "127.0.0.1" and 50000 <= port < 60000
    assert content == {
        "http": True,
        "method": "POST",
        "path": "/mcp",
        "tenant": "acme",
        "authorization": None,  # credentials are not handed to tools
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


def test_the_info_made_for_each_request_is_the_public_dataclass() -> None:
    # from_scope fills the frozen dataclass without its __init__ (the hot path): the
    # instance must be indistinguishable from one made the ordinary way.
    from mcpkit._http._request_info import HTTPRequestInfo, from_scope

    scope = {
        "method": "POST",
        "path": "/mcp",
        "query_string": b"a=1",
        "client": ("127.0.0.1", 5),
        "scheme": "https",
    }
    info = from_scope(scope, {"x-tenant": "acme"})
    made = HTTPRequestInfo(
        method="POST",
        path="/mcp",
        query="a=1",
        headers=info.headers,
        client=("127.0.0.1", 5),
        scheme="https",
    )
    assert info == made and repr(info) == repr(made)
    with pytest.raises(AttributeError):
        info.method = "GET"  # type: ignore[misc]  # still frozen


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_tool_sees_its_http_request_over_a_real_socket(revision: str) -> None:
    # Served by uvicorn with mcpkit's HTTP/1.1 protocol (what serve_http runs): a 2026-07-28
    # call takes the protocol's direct way to the kernel, a 2025 one the ASGI app (uvicorn in
    # a thread of its own: on either backend of the test).
    from tests.http._http_helpers import running

    headers = {"x-tenant": "acme", "authorization": "Bearer not-for-tools"}
    with running(_server().http_app()) as srv, anyio.fail_after(20):
        async with Client(http(srv.url, headers=headers), protocol_version=revision) as client:
            result = await client.call_tool("seen", {})
    seen = result.structured_content
    assert seen is not None
    assert seen["client"][0] == "127.0.0.1" and seen["client"][1] != srv.port
    assert {k: v for k, v in seen.items() if k != "client"} == {
        "http": True,
        "method": "POST",
        "path": "/mcp",
        "tenant": "acme",
        "authorization": None,
    }


def test_the_request_info_path_counts_the_root_path_once() -> None:
    """uvicorn (``--root-path``) and Starlette's Mount put root_path in path already; an
    older server gave the path below it. ctx.http_request.path is the full path either way."""
    from mcpkit._http._request_info import from_scope

    full = {"method": "POST", "root_path": "/api", "path": "/api/mcp"}
    below = {"method": "POST", "root_path": "/api", "path": "/mcp"}
    assert from_scope(full, {}).path == from_scope(below, {}).path == "/api/mcp"
