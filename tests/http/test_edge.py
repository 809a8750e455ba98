"""The one edge, ``serve_exchange``: an exchange in, its answer out, the era decided once.

A front end need not be ASGI: these tests build the exchange themselves (as another server's
front end would) and read the answer the edge returns, and they count how often the era is
decided per exchange (once) while the real app serves it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import orjson
import pytest
from _http_helpers import CLIENT_INFO, HEADERS, INIT_PARAMS, asgi_call

from mcpkit import Server
from mcpkit._app import _edge
from mcpkit._app._edge import Exchange, serve_exchange
from mcpkit._http._asgi import Headers

pytestmark = pytest.mark.anyio

STATELESS = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}


def _server() -> Server:
    server = Server("edge")

    @server.tool()
    async def echo(text: str) -> str:
        """Says it back."""
        return text

    return server


def _call(rid: int, text: str, meta: dict[str, Any] | None = None) -> bytes:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": text}}
    if meta is not None:
        params["_meta"] = meta
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})


def _exchange(method: str, headers: dict[str, str], body: bytes = b"") -> Exchange:
    """An exchange as a front end of its own would build it: a body given whole, then
    nothing more until the front end's client leaves."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    got = Headers({"host": "127.0.0.1", **headers})
    return Exchange(method, "/mcp", got, receive, client=("127.0.0.1", 50000))


@pytest.fixture
def eras(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """What ``stateless_era`` said, once per call (it still decides: only recorded)."""
    said: list[bool] = []
    decide = _edge.stateless_era

    def recorded(headers: Any, msg: Any = None) -> bool:
        said.append(decide(headers, msg))
        return said[-1]

    monkeypatch.setattr(_edge, "stateless_era", recorded)
    yield said


async def test_a_stateless_json_call_is_one_body_the_edge_returns(eras: list[bool]) -> None:
    app = _server().http_app(json_response=True)
    headers = {
        **HEADERS,
        "mcp-protocol-version": STATELESS,
        "mcp-method": "tools/call",
        "mcp-name": "echo",
    }
    async with app:
        answer = await serve_exchange(app, _exchange("POST", headers, _call(7, "hi", META)))
    assert answer.stream is None and answer.status == 200
    assert (b"content-type", b"application/json") in answer.headers
    reply = orjson.loads(answer.body)
    assert reply["id"] == 7 and reply["result"]["content"][0]["text"] == "hi"
    assert eras == [True]  # decided once, from header and body


async def test_a_refusal_before_the_body_is_an_answer_too(eras: list[bool]) -> None:
    app = _server().http_app()
    async with app:
        answer = await serve_exchange(
            app, _exchange("GET", {**HEADERS, "mcp-protocol-version": STATELESS})
        )
    assert answer.status == 405 and (b"allow", b"POST") in answer.headers
    assert "has no GET stream or sessions" in orjson.loads(answer.body)["error"]["message"]
    assert eras == [True]


async def test_each_exchange_decides_its_era_once_whatever_its_era(eras: list[bool]) -> None:
    app = _server().http_app(json_response=True)
    init = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
    async with app:
        status, got, _ = await asgi_call(app, "POST", HEADERS, init)
        assert status == 200
        session = {**HEADERS, "mcp-session-id": got["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-11-25"
        status, _, body = await asgi_call(app, "POST", session, _call(2, "old"))
        assert status == 200 and orjson.loads(body)["result"]["content"][0]["text"] == "old"
        # A stale session id does not make a request of the stateless era a 404.
        stale = {**session, "mcp-protocol-version": STATELESS, "mcp-method": "tools/call"}
        stale["mcp-name"] = "echo"
        status, _, body = await asgi_call(app, "POST", stale, _call(3, "new", META))
        assert status == 200 and orjson.loads(body)["result"]["content"][0]["text"] == "new"
    assert eras == [False, False, True]
