"""Server.from_fastapi: a FastAPI app's own OpenAPI document, its operations called in
process through ASGI (no socket); both eras, the listed definitions checked against the
official schemas, and one client over a real transport (the MCP server under uvicorn)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

import pytest
from fastapi import FastAPI, Form, Header, HTTPException, Request, UploadFile
from pydantic import BaseModel
from tests._schema import schema_errors
from tests.http._http_helpers import running

from mcpkit import Client, Context, ResourceNotFound, RouteMap, Server

pytestmark = pytest.mark.anyio

REVISIONS = ["2025-11-25", "2026-07-28"]


class NewItem(BaseModel):
    name: str
    price: float = 0.0


class Item(BaseModel):
    id: int
    name: str
    price: float


app = FastAPI(title="shop", version="3.1")


@app.get("/items/{item_id}", operation_id="get_item", summary="One item")
def get_item(item_id: int) -> Item:
    if item_id == 404:
        raise HTTPException(404, "no item 404")
    return Item(id=item_id, name=f"item{item_id}", price=1.5)


@app.put("/items/{item_id}", operation_id="put_item")
def put_item(
    item_id: int,
    item: NewItem,
    request: Request,
    dry_run: bool = False,
    x_shop_token: Annotated[str | None, Header()] = None,
) -> dict[str, Any]:
    """Store an item."""
    assert request.client is not None
    return {
        "id": item_id,
        "item": item.model_dump(),
        "dry_run": dry_run,
        "token": x_shop_token,
        "authorization": request.headers.get("authorization"),
        "client": list(request.client),
    }


@app.get("/health", operation_id="health")
def health() -> dict[str, bool]:
    return {"ok": True}


@app.post("/upload", operation_id="upload")
async def upload(file: UploadFile, note: Annotated[str, Form()]) -> dict[str, Any]:
    """A multipart body: a file and a field."""
    return {"filename": file.filename, "content": (await file.read()).decode(), "note": note}


@app.post("/crash", operation_id="crash")
def crash() -> None:
    raise RuntimeError("the app failed")


def test_operations_are_listed_with_valid_schemas() -> None:
    server = Server.from_fastapi(app, route_maps=[RouteMap("tool")])
    assert (server.name, server.version) == ("shop", "3.1")
    tools = {t["name"]: t for t in server.tools}
    assert list(tools) == ["get_item", "put_item", "health", "upload", "crash"]
    put = tools["put_item"]["inputSchema"]
    assert put["required"] == ["item_id", "name"]
    assert set(put["properties"]) == {"item_id", "dry_run", "x-shop-token", "name", "price"}
    assert tools["get_item"]["outputSchema"]["properties"]["price"]["type"] == "number"
    assert tools["get_item"]["annotations"] == {"readOnlyHint": True}
    for rev in REVISIONS:
        for tool in server.tools:
            assert schema_errors(rev, "Tool", tool) == []


@pytest.mark.parametrize("revision", REVISIONS)
async def test_calls_reach_the_app_in_process(revision: str) -> None:
    async def hook(request: Any, ctx: Context | None) -> None:
        assert ctx is not None  # the tool's context: a server may look up its user's token
        request.headers["Authorization"] = "Bearer kept-by-the-server"

    server = Server.from_fastapi(app, request_hook=hook)
    async with Client(server, protocol_version=revision) as client:
        listed = await client.list_tools_page()
        for tool in listed.to_wire()["tools"]:
            assert schema_errors(revision, "Tool", tool) == []
        result = await client.call_tool(
            "put_item",
            {"item_id": 9, "name": "lamp", "price": 3, "dry_run": True, "x-shop-token": "t"},
        )
        assert not result.is_error, result
        assert result.structured_content == {
            "id": 9,
            "item": {"name": "lamp", "price": 3.0},
            "dry_run": True,
            "token": "t",
            "authorization": "Bearer kept-by-the-server",
            "client": ["127.0.0.1", 123],  # httpx2's ASGI transport: no socket was opened
        }
        result = await client.call_tool("upload", {"file": "hello", "note": "n"})
        assert result.structured_content == {"filename": "file", "content": "hello", "note": "n"}
        result = await client.call_tool("crash", {})
        assert result.is_error
        assert result.content[0].text.startswith("HTTP 500 Internal Server Error")  # type: ignore[union-attr]
        # The default route maps: GET /health a resource, GET /items/{item_id} a template.
        assert [r.uri for r in await client.list_resources()] == ["api://health"]
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates] == ["api://items/{item_id}"]
        read = await client.read_resource("api://items/4")
        assert read.contents[0].text == '{"id":4,"name":"item4","price":1.5}'  # type: ignore[union-attr]
        with pytest.raises(ResourceNotFound):
            await client.read_resource("api://items/404")


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_404_is_an_error_result_naming_it(revision: str) -> None:
    server = Server.from_fastapi(app, route_maps=[RouteMap("tool", methods=["GET"])])
    async with Client(server, protocol_version=revision) as client:
        result = await client.call_tool("get_item", {"item_id": 404})
        assert result.is_error
        assert result.content[0].text == 'HTTP 404 Not Found: {"detail":"no item 404"}'  # type: ignore[union-attr]
        result = await client.call_tool("get_item", {"item_id": 1})
        assert result.structured_content == {"id": 1, "name": "item1", "price": 1.5}


async def test_the_apps_lifespan_entered_with_the_servers() -> None:
    """As docs/server.md says: the app's startup done by the MCP server's ``lifespan``."""

    @contextlib.asynccontextmanager
    async def life(booted: FastAPI) -> AsyncIterator[None]:
        booted.state.ready = "yes"
        yield
        booted.state.ready = "shut down"

    booted = FastAPI(lifespan=life)

    @booted.get("/ready", operation_id="ready")
    def ready(request: Request) -> dict[str, str]:
        return {"ready": request.app.state.ready}

    server = Server.from_fastapi(
        booted,
        route_maps=[RouteMap("tool")],
        lifespan=lambda _server: booted.router.lifespan_context(booted),
    )
    async with Client(server) as client:
        result = await client.call_tool("ready", {})
        assert result.structured_content == {"ready": "yes"}
    assert booted.state.ready == "shut down"


def test_from_fastapi_needs_an_app() -> None:
    with pytest.raises(TypeError, match="needs a FastAPI app"):
        Server.from_fastapi(object())


async def test_over_a_real_transport() -> None:
    """The MCP server under uvicorn on 127.0.0.1; the app it fronts still called in process."""
    with running(Server.from_fastapi(app).http_app()) as mcp:
        async with Client(mcp.url) as client:
            result = await client.call_tool("put_item", {"item_id": 2, "name": "cup"})
            assert result.structured_content is not None
            assert result.structured_content["item"] == {"name": "cup", "price": 0.0}
            read = await client.read_resource("api://health")
            assert read.contents[0].text == '{"ok":true}'  # type: ignore[union-attr]
