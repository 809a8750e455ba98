"""Server.from_openapi against a real local HTTP API (Starlette served by uvicorn on
127.0.0.1, one for the module): what the API receives, errors as results, route maps, both
eras, the listed definitions checked against the official schemas, hostile documents."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from tests._schema import schema_errors
from tests.http._http_helpers import ThreadServer, running

from mcpkit import Client, ResourceNotFound, RouteMap, Server

# One worker runs the module: its tests share one API server (the module's fixture).
pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("openapi-api")]

REVISIONS = ["2025-11-25", "2026-07-28"]

#: What the API received, newest last (appended by uvicorn's thread).
RECEIVED: list[dict[str, Any]] = []
#: Holds the slow endpoint until the module's API stops.
RELEASE = threading.Event()


async def _record(request: Request) -> dict[str, Any]:
    body = await request.body()
    seen = {
        "method": request.method,
        "path": request.url.path,
        "query": list(request.query_params.multi_items()),
        "headers": {k: v for k, v in request.headers.items() if k.startswith("x-")},
        "cookie": request.headers.get("cookie"),
        "authorization": request.headers.get("authorization"),
        "content_type": request.headers.get("content-type"),
        "body": body.decode(),
    }
    RECEIVED.append(seen)
    return seen


async def pet(request: Request) -> Response:
    await _record(request)
    pet_id = int(request.path_params["pet_id"])
    if pet_id == 404:
        return JSONResponse({"detail": "no pet 404 here"}, status_code=404)
    if pet_id == 500:
        return PlainTextResponse("boom " * 80, status_code=500)
    if pet_id == 501:
        return PlainTextResponse("x" * 2000)
    if pet_id == 7:  # breaks the documented schema (name must be a string)
        return JSONResponse({"id": 7, "name": 7})
    return JSONResponse({"id": pet_id, "name": f"pet{pet_id}", "tag": None})


async def echo(request: Request) -> Response:
    return JSONResponse(await _record(request))


async def status(request: Request) -> Response:
    return PlainTextResponse("all good")


async def slow(request: Request) -> Response:
    await anyio.to_thread.run_sync(RELEASE.wait, 20)
    return PlainTextResponse("late")


API = Starlette(
    routes=[
        Route("/pets/{pet_id}", pet),
        Route("/pets", echo, methods=["GET"]),
        Route("/pets/{pet_id}/notes", echo, methods=["POST"]),
        Route("/form", echo, methods=["POST"]),
        Route("/status", status),
        Route("/slow", slow, methods=["POST"]),
        Route("/openapi.json", lambda request: JSONResponse(DOC)),
        Route("/v1/openapi.json", lambda request: JSONResponse(DOC | {"servers": [{"url": ".."}]})),
    ]
)

PET = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "tag": {"type": "string", "nullable": True},
        "friends": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}},
    },
    "required": ["id", "name"],
}

DOC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "petstore", "version": "2.0"},
    "paths": {
        "/pets/{pet_id}": {
            "parameters": [
                {"name": "pet_id", "in": "path", "required": True, "schema": {"type": "integer"}}
            ],
            "get": {
                "operationId": "getPet",
                "summary": "One pet",
                "description": "The pet with this id.",
                "responses": {
                    "200": {
                        "description": "the pet",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}
                        },
                    }
                },
            },
        },
        "/pets": {
            "get": {
                "operationId": "listPets",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}},
                    {
                        "name": "tag",
                        "in": "query",
                        "schema": {"type": "array", "items": {"type": "string"}},
                    },
                    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                    {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                    {
                        "name": "filter",
                        "in": "query",
                        "style": "deepObject",
                        "schema": {"type": "object"},
                    },
                    {
                        "name": "ids",
                        "in": "query",
                        "style": "pipeDelimited",
                        "explode": False,
                        "schema": {"type": "array"},
                    },
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        },
        "/pets/{pet_id}/notes": {
            "post": {
                # No operationId: named from the method and the path.
                "parameters": [
                    {
                        "name": "pet_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    },
                    {"name": "urgent", "in": "query", "schema": {"type": "boolean"}},
                ],
                "requestBody": {"$ref": "#/components/requestBodies/Note"},
                "responses": {"201": {"description": "made"}},
            }
        },
        "/form": {
            "post": {
                "operationId": "sendForm",
                "requestBody": {
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {"type": "object", "properties": {"who": {"type": "string"}}}
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/status": {
            "get": {
                "operationId": "status",
                "responses": {"200": {"description": "ok", "content": {"text/plain": {}}}},
            }
        },
        "/slow": {"post": {"operationId": "slow", "responses": {"200": {"description": "late"}}}},
    },
    "components": {
        "schemas": {"Pet": PET},
        "requestBodies": {
            "Note": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                "text": {"type": "string"},
                                "pet_id": {"type": "string"},
                            },
                            "required": ["text"],
                        }
                    }
                },
            }
        },
    },
}

#: The pet GET kept a tool, so that its error statuses come back as results.
AS_TOOL = [RouteMap("tool", methods=["GET"], pattern=r"^/pets/\{pet_id\}$")]


@pytest.fixture(scope="module")
def api() -> Iterator[ThreadServer]:
    with running(API) as server:
        try:
            yield server
        finally:
            RELEASE.set()  # a call still held ends before the server stops


def _server(api: ThreadServer, **kw: Any) -> Server:
    return Server.from_openapi(DOC, base_url=api.base, **kw)


def test_operations_become_tools_with_their_schemas(api: ThreadServer) -> None:
    server = _server(api, route_maps=AS_TOOL)
    tools = {t["name"]: t for t in server.tools}
    assert list(tools) == ["getPet", "listPets", "post_pets_pet_id_notes", "sendForm", "slow"]
    get = tools["getPet"]
    assert get["title"] == "One pet" and get["description"] == "The pet with this id."
    assert get["inputSchema"]["required"] == ["pet_id"]
    out = get["outputSchema"]
    assert out["properties"]["tag"]["type"] == ["string", "null"]  # 3.0's nullable
    assert out["properties"]["friends"]["items"] == {"$ref": "#/$defs/Pet"}  # recursion kept
    assert out["$defs"]["Pet"]["properties"]["friends"]["items"] == {"$ref": "#/$defs/Pet"}
    notes = tools["post_pets_pet_id_notes"]["inputSchema"]
    # The path's pet_id keeps its name; the body's pet_id is suffixed with its place.
    assert list(notes["properties"]) == ["pet_id", "urgent", "text", "pet_id__body"]
    assert notes["required"] == ["pet_id", "text"]
    assert "outputSchema" not in tools["post_pets_pet_id_notes"]
    for rev in REVISIONS:
        for tool in server.tools:
            assert schema_errors(rev, "Tool", tool) == []


@pytest.mark.parametrize("revision", REVISIONS)
async def test_arguments_reach_the_api(api: ThreadServer, revision: str) -> None:
    server = _server(api, route_maps=AS_TOOL, headers={"Authorization": "Bearer server-own"})
    async with Client(server, protocol_version=revision) as client:
        listed = await client.list_tools_page()
        for tool in listed.to_wire()["tools"]:
            assert schema_errors(revision, "Tool", tool) == []
        result = await client.call_tool(
            "post_pets_pet_id_notes",
            {"pet_id": 3, "urgent": True, "text": "hi", "pet_id__body": "body-id"},
        )
        assert not result.is_error, result
        seen = RECEIVED[-1]
        assert (seen["method"], seen["path"]) == ("POST", "/pets/3/notes")
        assert seen["query"] == [("urgent", "true")]
        assert seen["content_type"] == "application/json"
        assert seen["body"] == '{"text":"hi","pet_id":"body-id"}'
        assert seen["authorization"] == "Bearer server-own"

        result = await client.call_tool(
            "listPets",
            {
                "limit": 5,
                "tag": ["a", "b"],
                "X-Trace": "t-1",
                "session": "s 1",
                "filter": {"kind": "cat"},
                "ids": [1, 2],
            },
        )
        assert result.structured_content is not None
        seen = result.structured_content
        assert seen["query"] == [
            ["limit", "5"],
            ["tag", "a"],
            ["tag", "b"],
            ["filter[kind]", "cat"],
            ["ids", "1|2"],
        ]
        assert seen["headers"]["x-trace"] == "t-1"
        assert seen["cookie"] == "session=s%201"

        result = await client.call_tool("getPet", {"pet_id": 12})
        assert result.structured_content == {"id": 12, "name": "pet12", "tag": None}


@pytest.mark.parametrize("revision", REVISIONS)
async def test_error_statuses_and_failures_are_error_results(
    api: ThreadServer, revision: str
) -> None:
    server = _server(api, route_maps=AS_TOOL, timeout=0.5, max_answer_bytes=1000)
    async with Client(server, protocol_version=revision) as client:
        result = await client.call_tool("getPet", {"pet_id": 404})
        assert result.is_error
        assert result.content[0].text == 'HTTP 404 Not Found: {"detail":"no pet 404 here"}'  # type: ignore[union-attr]
        result = await client.call_tool("getPet", {"pet_id": 500})
        text = result.content[0].text  # type: ignore[union-attr]
        assert result.is_error and text.startswith("HTTP 500 Internal Server Error: boom")
        assert len(text) < 400  # the body is quoted, bounded
        result = await client.call_tool("getPet", {"pet_id": 501})
        assert result.is_error
        assert result.content[0].text == "GET /pets/{pet_id}: the answer is larger than 1000 bytes"  # type: ignore[union-attr]
        result = await client.call_tool("getPet", {"pet_id": 7})
        assert result.is_error and "does not match its documented schema" in result.content[0].text  # type: ignore[union-attr]
        with anyio.fail_after(5):
            result = await client.call_tool("slow", {})
        assert result.is_error and result.content[0].text == "POST /slow: no answer within 0.5 s"  # type: ignore[union-attr]
        result = await client.call_tool("getPet", {"pet_id": "x"})
        assert result.is_error and "Invalid arguments" in result.content[0].text  # type: ignore[union-attr]


async def test_a_path_parameter_cannot_climb_out_of_its_path(api: ThreadServer) -> None:
    doc = _doc(
        {
            "/files/{name}": {
                "get": {
                    "operationId": "file",
                    "parameters": [{"name": "name", "in": "path", "schema": {"type": "string"}}],
                }
            }
        }
    )
    server = Server.from_openapi(doc, base_url=api.base, route_maps=[RouteMap("tool")])
    before = len(RECEIVED)
    async with Client(server) as client:
        for value in ("..", "."):
            result = await client.call_tool("file", {"name": value})
            assert result.is_error  # GET /files/.. would be GET / at the API
            assert (
                result.content[0].text
                == f"GET /files/{{name}}: path parameter 'name' cannot be {value!r}"
            )  # type: ignore[union-attr]
    assert len(RECEIVED) == before


async def test_a_network_failure_is_an_error_result() -> None:
    from tests.http._http_helpers import free_port

    server = Server.from_openapi(DOC, base_url=f"http://127.0.0.1:{free_port()}", timeout=5)
    async with Client(server) as client:
        result = await client.call_tool("sendForm", {"who": "me"})
    assert result.is_error
    assert result.content[0].text.startswith("POST /form: the request failed (ConnectError")  # type: ignore[union-attr]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_route_maps_make_resources_and_templates(api: ThreadServer, revision: str) -> None:
    server = _server(api)  # the default maps: GET /status a resource, GET /pets/{pet_id} a template
    async with Client(server, protocol_version=revision) as client:
        assert [t.name for t in await client.list_tools()] == [
            "listPets",
            "post_pets_pet_id_notes",
            "sendForm",
            "slow",
        ]
        resources = await client.list_resources()
        assert [(r.uri, r.mime_type) for r in resources] == [("api://status", "text/plain")]
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates] == ["api://pets/{pet_id}"]
        status = await client.read_resource("api://status")
        assert status.contents[0].text == "all good"  # type: ignore[union-attr]
        pet = await client.read_resource("api://pets/5")
        assert pet.contents[0].text == '{"id":5,"name":"pet5","tag":null}'  # type: ignore[union-attr]
        with pytest.raises(ResourceNotFound):
            await client.read_resource("api://pets/404")
    only = _server(
        api, route_maps=[RouteMap("exclude", tags=[]), RouteMap("tool")], exclude=["slow"]
    )
    assert only.tools == []


async def test_a_client_of_ones_own_and_a_uri_scheme(api: ThreadServer) -> None:
    # The documented http_client= and uri_scheme=: the given client sends every call (its
    # own headers go along) and is left open for its owner; resources are under the scheme.
    async with httpx2.AsyncClient(headers={"x-client": "mine"}) as own:
        server = _server(api, http_client=own, uri_scheme="petstore", exclude=["slow"])
        async with Client(server) as client:
            resources = await client.list_resources()
            assert [r.uri for r in resources] == ["petstore://status"]
            status = await client.read_resource("petstore://status")
            assert status.contents[0].text == "all good"  # type: ignore[union-attr]
            result = await client.call_tool("listPets", {})
            assert result.structured_content is not None
            assert result.structured_content["headers"]["x-client"] == "mine"
        assert not own.is_closed


async def test_a_request_hook_forwards_the_servers_own_token(api: ThreadServer) -> None:
    """No token passthrough: the API sees what the hook adds, never the MCP client's."""
    seen_ctx: list[Any] = []

    async def hook(request: Any, ctx: Any) -> None:
        seen_ctx.append(ctx)
        request.headers["Authorization"] = "Bearer per-user-token"

    server = _server(
        api,
        route_maps=[RouteMap("tool")],
        request_hook=hook,
        exclude=["slow"],
        headers={"x-trace": "the-servers"},
    )
    async with Client(server) as client:
        result = await client.call_tool("listPets", {"X-Trace": "the-models"})
        assert result.structured_content is not None
        assert result.structured_content["headers"]["x-trace"] == "the-servers"  # never replaced
        await client.call_tool("sendForm", {"who": "ada"})
    seen = RECEIVED[-1]
    assert seen["authorization"] == "Bearer per-user-token"
    assert seen["content_type"] == "application/x-www-form-urlencoded"
    assert seen["body"] == "who=ada"
    assert seen_ctx and seen_ctx[0] is not None


async def test_documents_from_a_yaml_file_and_a_url(api: ThreadServer, tmp_path: Path) -> None:
    path = tmp_path / "api.yaml"
    path.write_text(yaml.safe_dump(DOC, sort_keys=False))
    names = [t["name"] for t in _server(api).tools]
    from_file = Server.from_openapi(path, base_url=api.base)
    assert [t["name"] for t in from_file.tools] == names
    url = f"{api.base}/openapi.json"
    from_url = await anyio.to_thread.run_sync(lambda: Server.from_openapi(url, base_url=api.base))
    assert [t["name"] for t in from_url.tools] == names
    # A relative server URL is relative to the document's own: ".." of /v1/openapi.json is /.
    url = f"{api.base}/v1/openapi.json"
    relative = await anyio.to_thread.run_sync(lambda: Server.from_openapi(url, route_maps=AS_TOOL))
    async with Client(relative) as client:
        result = await client.call_tool("getPet", {"pet_id": 3})
    assert result.structured_content == {"id": 3, "name": "pet3", "tag": None}
    with pytest.raises(ValueError, match=r"cannot fetch the OpenAPI document .*HTTP 404"):
        await anyio.to_thread.run_sync(lambda: Server.from_openapi(f"{api.base}/nothing.json"))


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


def _doc(paths: dict[str, Any], **components: Any) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": paths,
        "components": {"schemas": components},
    }


def _get(schema: Any) -> dict[str, Any]:
    return {
        "/x": {
            "post": {
                "operationId": "x",
                "requestBody": {"content": {"application/json": {"schema": schema}}},
            }
        }
    }


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            _doc(
                _get({"$ref": "#/components/schemas/A"}),
                A={"$ref": "#/components/schemas/B"},
                B={"$ref": "#/components/schemas/A"},
            ),
            r"a \$ref cycle: #/components/schemas/A -> #/components/schemas/B -> #/components/schemas/A",
        ),
        (_doc(_get({"type": "strnig"})), r"POST /x \(x\): unknown schema type 'strnig'"),
        (
            _doc(_get({"$ref": "#/components/schemas/A"}), A={"$ref": "#/components/schemas/A"}),
            r"a \$ref cycle",
        ),
        (_doc(_get(_nested(200))), r"nested more than 64 levels deep"),
        (
            _doc(
                {
                    "/x": {
                        "get": {
                            "responses": {
                                "200": {"content": {"application/json": {"schema": {"type": 5}}}}
                            }
                        }
                    }
                }
            ),
            r"GET /x \(get_x\): unknown schema type 5",
        ),
        (
            _doc(_get({"$ref": "#/components/schemas/Nope"})),
            r"\$ref '#/components/schemas/Nope' points at nothing",
        ),
        (_doc(_get({"$ref": "https://example.com/s.json"})), r"only local references"),
        (
            _doc(
                {
                    "/x": {"get": {"operationId": "has space!"}},
                    "/y": {"get": {"operationId": "has_space_"}},
                }
            ),
            r"tool name 'has_space_' is already",
        ),
        (
            _doc({"/x": {"get": {"parameters": [{"in": "query"}]}}}),
            r"GET /x \(get_x\): a parameter has no name",
        ),
        (_doc({"/x": {"get": {"parameters": [{"name": "a", "in": "body"}]}}}), r"'in' 'body'"),
        (_doc({"/x": {"get": {"operationId": 5}}}), r"operationId must be a string"),
        ({"swagger": "2.0", "paths": {}}, r"not an OpenAPI 3.0 or 3.1 document"),
        (_doc({"/x": {"get": {"operationId": "x"}}}) | {"paths": []}, r"'paths' must be an object"),
    ],
)
def test_hostile_documents_fail_clearly(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Server.from_openapi(doc, base_url="http://127.0.0.1:1")


def test_without_httpx2_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx2", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'mcpkit\[all\]'"):
        Server.from_openapi(DOC, base_url="http://127.0.0.1:1")


def test_a_document_nested_too_deeply_fails_clearly(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"openapi": "3.1.0", "paths": {}, "x": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(ValueError, match="nested too deeply"):  # neither JSON nor YAML reads it
        Server.from_openapi(deep, base_url="http://127.0.0.1:1")


def test_a_route_map_asking_the_impossible_says_so() -> None:
    with pytest.raises(ValueError, match=r"cannot be a resource: it takes arguments \(limit"):
        Server.from_openapi(
            DOC, base_url="http://h", route_maps=[RouteMap("resource", pattern="^/pets$")]
        )
    with pytest.raises(ValueError, match="base_url is needed"):
        Server.from_openapi(DOC)
    with pytest.raises(ValueError, match="base_url must be an http:// or https:// URL"):
        Server.from_openapi(DOC, base_url="api.example.com")


async def test_over_a_real_transport(api: ThreadServer) -> None:
    """The MCP server itself served by uvicorn too: a client over Streamable HTTP."""
    server = _server(api, route_maps=AS_TOOL)
    mcp = ThreadServer(server.http_app())
    mcp.start()
    try:
        async with Client(mcp.url) as client:
            result = await client.call_tool("getPet", {"pet_id": 404})
            assert result.is_error and result.content[0].text.startswith("HTTP 404 Not Found")  # type: ignore[union-attr]
            result = await client.call_tool("getPet", {"pet_id": 2})
            assert result.structured_content == {"id": 2, "name": "pet2", "tag": None}
    finally:
        mcp.stop()
