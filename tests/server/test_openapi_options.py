"""The options of ``Server.from_openapi`` and ``Server.from_fastapi`` are typed keywords: a
misspelt one is a type error under ``mypy --strict`` and a ``TypeError`` at call time, and
the keywords passed on to :class:`Server` are exactly its own."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from tests._mypy import mypy_strict

from mcpkit import RouteMap, Server
from mcpkit._server._openapi_http import ServerKeywords

DOC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "pets", "version": "1"},
    "paths": {"/pets": {"get": {"operationId": "list_pets", "responses": {"200": {}}}}},
}


def test_a_misspelt_option_is_a_type_error_at_call_time() -> None:
    # Passed as a dict of Any: what an untyped caller does (mypy would refuse them).
    misspelt: dict[str, Any] = {"base_url": "http://127.0.0.1:1", "timout": 5}
    with pytest.raises(TypeError, match="timout"):
        Server.from_openapi(DOC, **misspelt)
    misspelt = {"base_url": "http://127.0.0.1:1", "instruction": "x"}
    with pytest.raises(TypeError, match="instruction"):
        Server.from_openapi(DOC, **misspelt)
    fastapi = pytest.importorskip("fastapi")
    misspelt = {"rout_maps": []}
    with pytest.raises(TypeError, match="rout_maps"):
        Server.from_fastapi(fastapi.FastAPI(), **misspelt)
    # Spelt right, they are taken.
    server = Server.from_openapi(
        DOC, base_url="http://127.0.0.1:1", route_maps=[RouteMap("tool")], instructions="x"
    )
    assert server.instructions == "x"
    assert [t["name"] for t in server.tools] == ["list_pets"]


def test_the_server_keywords_are_the_servers_own() -> None:
    own = {
        name
        for name, p in inspect.signature(Server.__init__).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    assert set(ServerKeywords.__annotations__) == own
    for method in (Server.from_openapi, Server.from_fastapi):
        params = inspect.signature(method).parameters
        assert "options" in params and params["options"].kind is inspect.Parameter.VAR_KEYWORD
        # No keyword both explicit and passed on (one would shadow the other).
        assert not own & set(params)


SNIPPET = """
from mcpkit import Server

doc: dict[str, object] = {}
Server.from_openapi(doc, base_url="http://api.example", timout=5)
Server.from_openapi(doc, instruction="x")
Server.from_fastapi(object(), rout_maps=[])
reveal_type(Server.from_openapi(doc, timeout=5.0, instructions="x", include_tags={"a"}))
"""


@pytest.mark.xdist_group("mypy-snippets")
def test_mypy_strict_catches_a_misspelt_option(tmp_path: Path) -> None:
    out = mypy_strict(SNIPPET, tmp_path, "from_api.py")
    assert 'Unexpected keyword argument "timout"' in out, out
    assert 'Unexpected keyword argument "instruction"' in out, out
    assert 'Unexpected keyword argument "rout_maps"' in out, out
    assert 'Revealed type is "mcpkit._server._server.Server[Any]"' in out, out
    assert out.count("error:") == 3, out
