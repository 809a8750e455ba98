"""Server.from_openapi's ``credentials`` applied per the document's security (and the
server URL's variables), against a real local HTTP API (Starlette on uvicorn, one for the
module): what the API received, a missing credential as an error naming its scheme, a 401
naming 401, the MCP client's own token never forwarded, both eras."""

from __future__ import annotations

import base64
import copy
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import anyio
import pytest
from fastapi import Depends, FastAPI
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from tests.http._http_helpers import ThreadServer, running

from mcpkit import Client, RouteMap, Server

# One worker runs the module: its tests share one API server (the module's fixture).
pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("openapi-security-api")]

REVISIONS = ["2025-11-25", "2026-07-28"]

#: What the API received, newest last (appended by uvicorn's thread).
RECEIVED: list[dict[str, Any]] = []


async def echo(request: Request) -> Response:
    seen = {
        "path": request.url.path,
        "query": list(request.query_params.multi_items()),
        "authorization": request.headers.get("authorization"),
        "x-api-key": request.headers.get("x-api-key"),
        "x-admin": request.headers.get("x-admin"),
        "cookie": request.headers.get("cookie"),
    }
    RECEIVED.append(seen)
    if seen["authorization"] == "Bearer wrong":
        return JSONResponse({"detail": "bad token"}, status_code=401)
    return JSONResponse(seen)


async def drip(request: Request) -> Response:
    """An OpenAPI document a byte at a time, each well within a read timeout."""

    async def body() -> AsyncIterator[bytes]:
        yield b"{"
        for _ in range(200):
            await anyio.sleep(0.05)
            yield b" "

    return StreamingResponse(body(), media_type="application/json")


API = Starlette(routes=[Route("/drip.json", drip), Route("/{rest:path}", echo)])


def _op(name: str, security: Any = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"operationId": name, "responses": {"200": {"description": "ok"}}}
    if security is not None:
        spec["security"] = security
    return {"get": spec | extra}


DOC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "secured", "version": "1"},
    "security": [{"bearer": []}],  # the document's: every operation not saying otherwise
    "paths": {
        "/echo/inherited": _op("inherited"),
        "/echo/header": _op("by_header", [{"key_header": []}]),
        "/echo/query": _op(
            "by_query",
            [{"key_query": []}],
            parameters=[{"name": "api_key", "in": "query", "schema": {"type": "string"}}],
        ),
        "/echo/cookie": _op("by_cookie", [{"key_cookie": []}]),
        "/echo/basic": _op("by_basic", [{"basic": []}]),
        "/echo/oauth": _op("by_oauth", [{"oauth": ["read"]}]),
        "/echo/public": _op("public", []),  # an empty list: no security at all
        "/echo/optional": _op("optional", [{}, {"bearer": []}]),
        "/echo/either": _op("either", [{"nowhere": []}, {"key_header": [], "key_query": []}]),
        "/echo/admin": _op("admin", [{"admin": []}]),
    },
    "components": {
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer"},
            "basic": {"type": "http", "scheme": "basic"},
            "key_header": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "key_query": {"type": "apiKey", "in": "query", "name": "api_key"},
            "key_cookie": {"type": "apiKey", "in": "cookie", "name": "sid"},
            "oauth": {
                "type": "oauth2",
                "flows": {"clientCredentials": {"tokenUrl": "/token", "scopes": {"read": "r"}}},
            },
            "admin": {"type": "apiKey", "in": "header", "name": "X-Admin"},
        }
    },
}

CREDENTIALS: dict[str, str | tuple[str, str]] = {
    "bearer": "the-token",
    "basic": ("ada", "s3cret"),
    "key_header": "hk",
    "key_query": "qk",
    "key_cookie": "ck 1",
    "oauth": "oauth-token",
}


@pytest.fixture(scope="module")
def api() -> Iterator[ThreadServer]:
    with running(API) as server:
        yield server


def _server(api: ThreadServer, **kw: Any) -> Server:
    return Server.from_openapi(DOC, base_url=api.base, route_maps=[RouteMap("tool")], **kw)


async def _call(client: Client, name: str, args: dict[str, Any] | None = None) -> Any:
    before = len(RECEIVED)
    result = await client.call_tool(name, args or {})
    assert not result.is_error, result
    assert len(RECEIVED) == before + 1
    return RECEIVED[-1]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_each_operation_gets_the_credential_its_security_names(
    api: ThreadServer, revision: str
) -> None:
    server = _server(api, credentials=CREDENTIALS)
    async with Client(server, protocol_version=revision) as client:
        seen = await _call(client, "inherited")
        assert seen["authorization"] == "Bearer the-token"
        seen = await _call(client, "by_header")
        assert (seen["x-api-key"], seen["authorization"]) == ("hk", None)
        # The model's own api_key argument never replaces the credential.
        seen = await _call(client, "by_query", {"api_key": "the-models"})
        assert seen["query"] == [("api_key", "qk")]
        seen = await _call(client, "by_cookie")
        assert seen["cookie"] == "sid=ck%201"
        seen = await _call(client, "by_basic")
        assert seen["authorization"] == "Basic " + base64.b64encode(b"ada:s3cret").decode()
        seen = await _call(client, "by_oauth")
        assert seen["authorization"] == "Bearer oauth-token"
        seen = await _call(client, "public")  # its empty security overrides the document's
        assert (seen["authorization"], seen["x-api-key"], seen["cookie"]) == (None, None, None)
        seen = await _call(client, "optional")  # optional: sent when the server has it
        assert seen["authorization"] == "Bearer the-token"
        seen = await _call(client, "either")  # the covered alternative, both its schemes
        assert (seen["x-api-key"], seen["query"]) == ("hk", [("api_key", "qk")])


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_missing_credential_or_a_401_is_an_error_naming_it(
    api: ThreadServer, revision: str
) -> None:
    server = _server(api, credentials={"bearer": "wrong", "key_query": "qk"})
    before = len(RECEIVED)
    async with Client(server, protocol_version=revision) as client:
        result = await client.call_tool("admin", {})
        assert result.is_error
        assert result.content[0].text == (  # type: ignore[union-attr]
            "GET /echo/admin: needs a credential for security scheme 'admin'; "
            "give it as credentials={...} when the server is built"
        )
        result = await client.call_tool("either", {})
        text = result.content[0].text  # type: ignore[union-attr]
        assert result.is_error and "one of the security schemes" in text
        assert "'nowhere' (not defined in the document's securitySchemes) or 'key_header'" in text
        assert len(RECEIVED) == before  # nothing was sent for either
        result = await client.call_tool("inherited", {})
        assert result.is_error
        assert result.content[0].text == 'HTTP 401 Unauthorized: {"detail":"bad token"}'  # type: ignore[union-attr]
        assert RECEIVED[-1]["authorization"] == "Bearer wrong"


async def test_without_credentials_headers_and_the_hook_carry_them(api: ThreadServer) -> None:
    """No ``credentials``: the document's security is not applied, as before the option."""

    def hook(request: Any, ctx: Any) -> None:
        request.headers["X-API-Key"] = "from-the-hook"

    server = _server(api, headers={"Authorization": "Bearer static"}, request_hook=hook)
    async with Client(server) as client:
        seen = await _call(client, "admin")  # served: nothing is enforced
        assert (seen["authorization"], seen["x-api-key"]) == ("Bearer static", "from-the-hook")
    # With credentials, a static header counts as its scheme's credential.
    server = _server(api, credentials={"bearer": "t"}, headers={"X-Admin": "static-admin"})
    async with Client(server) as client:
        seen = await _call(client, "admin")
        assert seen["x-admin"] == "static-admin"


async def test_the_mcp_clients_own_token_is_never_forwarded(api: ThreadServer) -> None:
    """Over Streamable HTTP (uvicorn): the client's Authorization stays at the MCP server."""
    mcp = ThreadServer(_server(api, credentials={"bearer": "the-token"}).http_app())
    mcp.start()
    try:
        headers = {"Authorization": "Bearer the-mcp-clients"}
        async with Client(mcp.url, headers=headers) as client:
            seen = await _call(client, "inherited")
            assert seen["authorization"] == "Bearer the-token"
            seen = await _call(client, "public")
            assert seen["authorization"] is None
    finally:
        mcp.stop()


async def test_a_scheme_given_by_ref_follows_json_pointer_rules(api: ThreadServer) -> None:
    # A $ref'd scheme resolves as a schema's $ref does: an escaped name ("~1" is "/"), a
    # chain of bare refs, and a clear error for a ref into another file.
    doc = copy.deepcopy(DOC)
    doc["components"]["x-shared"] = {
        "admin/v1": {"type": "apiKey", "in": "header", "name": "X-Admin"},
        "alias": {"$ref": "#/components/x-shared/admin~1v1"},
    }
    doc["components"]["securitySchemes"]["admin"] = {"$ref": "#/components/x-shared/alias"}
    server = Server.from_openapi(
        doc, base_url=api.base, route_maps=[RouteMap("tool")], credentials={"admin": "adm"}
    )
    async with Client(server) as client:
        seen = await _call(client, "admin")
        assert seen["x-admin"] == "adm"
    doc["components"]["securitySchemes"]["admin"] = {"$ref": "shared.yaml#/admin"}
    with pytest.raises(ValueError, match=r"scheme 'admin': only local references"):
        Server.from_openapi(doc, base_url=api.base, credentials={"admin": "adm"})


@pytest.mark.parametrize(
    ("credentials", "error", "message"),
    [
        ({"bearr": "t"}, ValueError, r"'bearr': the document has no such security scheme"),
        ({"basic": "ada:s3cret"}, TypeError, r"\(http basic\): a \(user, password\) tuple"),
        ({"bearer": ("a", "b")}, TypeError, r"'bearer' \(http\): a string"),
    ],
)
def test_bad_credentials_fail_when_built(credentials: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        Server.from_openapi(DOC, base_url="http://127.0.0.1:1", credentials=credentials)


def _with_server(url: str, variables: dict[str, Any]) -> dict[str, Any]:
    return DOC | {"servers": [{"url": url, "variables": variables}]}


async def test_server_url_variables_take_their_defaults_or_the_given_values(
    api: ThreadServer,
) -> None:
    variables = {
        "port": {"default": str(api.port)},
        "base": {"default": "v1", "enum": ["v1", "echo"]},
    }
    doc = _with_server("http://127.0.0.1:{port}/{base}", variables)
    public = [RouteMap("tool", pattern="public"), RouteMap("exclude")]
    by_default = Server.from_openapi(doc, route_maps=public)
    given = Server.from_openapi(doc, route_maps=public, server_variables={"base": "echo"})
    async with Client(by_default) as client:
        seen = await _call(client, "public")
    assert seen["path"] == "/v1/echo/public"
    async with Client(given) as client:
        seen = await _call(client, "public")
    assert seen["path"] == "/echo/echo/public"
    with pytest.raises(ValueError, match=r"server variable 'base' is 'v2', not one of \['v1'"):
        Server.from_openapi(doc, server_variables={"base": "v2"})
    with pytest.raises(ValueError, match=r"server_variables \['prot'\]"):
        Server.from_openapi(doc, server_variables={"prot": "1"})
    with pytest.raises(ValueError, match=r"names \{host\} without a default"):
        Server.from_openapi(_with_server("https://{host}/api", {"host": {}}))
    with pytest.raises(ValueError, match="not base_url"):
        Server.from_openapi(doc, base_url=api.base, server_variables={"base": "echo"})


async def test_a_document_url_is_fetched_within_the_timeout(api: ThreadServer) -> None:
    url = f"{api.base}/drip.json"
    with anyio.fail_after(5), pytest.raises(ValueError) as caught:
        await anyio.to_thread.run_sync(lambda: Server.from_openapi(url, timeout=0.3))
    assert str(caught.value) == f"cannot fetch the OpenAPI document {url}: not read within 0.3 s"


shop = FastAPI()


@shop.get("/me", operation_id="me")
def me(token: Annotated[HTTPAuthorizationCredentials, Depends(HTTPBearer())]) -> dict[str, str]:
    return {"token": token.credentials}


@shop.get("/stock", operation_id="stock")
def stock(key: Annotated[str, Depends(APIKeyHeader(name="X-API-Key"))]) -> dict[str, str]:
    return {"key": key}


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_fastapi_apps_own_security_schemes(revision: str) -> None:
    server = Server.from_fastapi(
        shop, route_maps=[RouteMap("tool")], credentials={"HTTPBearer": "fa-token"}
    )
    async with Client(server, protocol_version=revision) as client:
        result = await client.call_tool("me", {})
        assert result.structured_content == {"token": "fa-token"}
        result = await client.call_tool("stock", {})
        assert result.is_error
        assert "security scheme 'APIKeyHeader'" in result.content[0].text  # type: ignore[union-attr]
