"""Standard MCP headers sent twice.

ASGI servers hand repeated headers over one by one, and ``header_map`` joins their values
with ", ". Joined, ``Mcp-Name: test://template/a`` and ``Mcp-Name: b/data`` matched a body
URI ``test://template/a, b/data``, while a gateway reading the first header routed (and
authorized) a request for another resource. A request repeating ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name``, an ``Mcp-Param-*`` or ``Mcp-Session-Id`` is refused with
400 and a JSON-RPC error naming the header, before anything compares or routes by it: in
``StreamableHTTPApp.__call__``, which the tests below reach through the app in process and
through uvicorn.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import orjson
import pytest
from tests.http._http_helpers import running
from tests.server._harness import HANDSHAKE
from tests.stateless._stateless_helpers import TIMEOUT, URL, headers_for, request

from mcpkit import Server
from mcpkit._app._edge import stateless_era
from mcpkit._http._asgi import header_map, repeated_header_answer
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

REPEATABLE = [
    ("mcp-protocol-version", "MCP-Protocol-Version"),
    ("Mcp-Method", "Mcp-Method"),
    ("MCP-NAME", "Mcp-Name"),
    ("mcp-session-id", "Mcp-Session-Id"),
    ("Mcp-Param-Region", "Mcp-Param-Region"),
]


def _scope(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in pairs]
    return {"type": "http", "headers": raw}


def _server() -> Server:
    server = Server("repeated")

    @server.resource("test://template/{part}/data", mime_type="text/plain")
    def data(part: str) -> str:
        """One resource per part."""
        return f"data of {part}"

    @server.resource("test://template/a", mime_type="text/plain")
    def a() -> str:
        """The resource a gateway reading the first Mcp-Name would route to."""
        return "a"

    return server


def _split_name(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The headers a conforming client sends with ``body``, its ``Mcp-Name`` split in two."""
    pairs = [(k, v) for k, v in headers_for(body).items() if k != "mcp-name"]
    return [*pairs, ("Mcp-Name", "test://template/a"), ("Mcp-Name", "b/data")]


@pytest.mark.parametrize(("sent", "named"), REPEATABLE)
def test_header_map_names_a_repeated_standard_header(sent: str, named: str) -> None:
    headers = header_map(_scope([("accept", "a"), (sent, "one"), ("accept", "b"), (sent, "two")]))
    assert headers.repeated == named
    assert headers[sent.lower()] == "one, two"  # still joined, as any repeated header is


def test_other_repeated_headers_are_joined_as_before() -> None:
    headers = header_map(_scope([("accept", "a"), ("Accept", "b"), ("mcp-name", "x")]))
    assert headers == {"accept": "a, b", "mcp-name": "x"}
    assert headers.repeated is None


@pytest.mark.parametrize(("version", "code"), [("2026-07-28", -32020), ("2025-11-25", -32600)])
async def test_the_refusal_names_the_header_in_the_revisions_code(version: str, code: int) -> None:
    headers = header_map(
        _scope([("mcp-protocol-version", version), ("mcp-name", "a"), ("mcp-name", "b")])
    )
    assert header_map(_scope([("mcp-name", "a")])).repeated is None
    # The era is the edge's to decide (once, from the header here: no body is read).
    answer = repeated_header_answer(headers, stateless_era(headers))
    assert answer.status == 400
    error = orjson.loads(answer.body)["error"]
    assert error["code"] == code
    assert error["data"] == {"header": "Mcp-Name"}
    assert "Mcp-Name" in error["message"]


@pytest.mark.req("HTTP-2026-REJECT-HEADER-BODY-MISMATCH")
async def test_two_mcp_name_headers_cannot_match_a_joined_uri() -> None:
    body = request("resources/read", {"uri": "test://template/a, b/data"})
    async with ASGIClient(_server().http_app()) as http:
        with anyio.fail_after(TIMEOUT):
            resp = await http.post(URL, content=orjson.dumps(body), headers=_split_name(body))
            raw = await resp.aread()
    assert resp.status_code == 400  # not served (it was: 200, the joined URI's contents)
    answer = orjson.loads(raw)
    assert answer["error"]["code"] == -32020
    assert answer["error"]["data"] == {"header": "Mcp-Name"}


async def test_a_repeated_session_header_of_the_handshake_era_is_refused() -> None:
    init = HANDSHAKE[0]  # initialize at 2025-11-25
    h = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    async with ASGIClient(_server().http_app()) as http:
        with anyio.fail_after(TIMEOUT):
            first = await http.post(URL, content=orjson.dumps(init), headers=h)
            sid = first.headers.get("mcp-session-id")
            assert sid is not None
            listed = {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}
            pairs = [*h.items(), ("mcp-protocol-version", "2025-11-25")]
            pairs += [("mcp-session-id", sid), ("mcp-session-id", sid)]
            resp = await http.post(URL, content=orjson.dumps(listed), headers=pairs)
            raw = await resp.aread()
    assert resp.status_code == 400
    answer = orjson.loads(raw)
    assert answer["error"]["code"] == -32600
    assert answer["error"]["data"] == {"header": "Mcp-Session-Id"}


@pytest.mark.req("HTTP-2026-REJECT-HEADER-BODY-MISMATCH")
def test_uvicorn_passes_the_repeats_through_and_they_are_refused() -> None:
    body = request("resources/read", {"uri": "test://template/a, b/data"})
    with running(_server().http_app()) as srv, httpx2.Client(timeout=TIMEOUT) as http:
        resp = http.post(srv.url, content=orjson.dumps(body), headers=_split_name(body))
    assert resp.status_code == 400
    assert resp.json()["error"]["data"] == {"header": "Mcp-Name"}
