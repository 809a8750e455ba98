"""CORS for browser hosts on another origin (issue 44), over a real uvicorn with raw HTTP.

An allowed origin (``allowed_origins``) gets its preflight answered (204 and the MCP
headers) and every answer made readable (``Access-Control-Allow-Origin`` echoing it, the
session, revision and challenge headers exposed): JSON, SSE, a stream, errors, a 401, in
both eras. Another origin gets no CORS header and keeps its 403. Before, the preflight was
a 405 and no answer carried any ``Access-Control-*`` header.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import orjson
import pytest
from _http_helpers import HEADERS, INIT_PARAMS, running

from mcpkit import Server
from mcpkit.auth import ResourceServer, StaticTokenVerifier

ALLOWED = "http://host.example:5173"
OTHER = "http://evil.example:5173"
REV = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": REV,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _server(**kw: Any) -> Server:
    server = Server("cors", version="1.0", **kw)

    @server.tool()
    def echo(text: str) -> str:
        """Says the text back."""
        return text

    @server.tool()
    async def slow(text: str) -> str:
        """Says the text back, later (its answer is streamed)."""
        await anyio.sleep(0.3)
        return text

    return server


@pytest.fixture
def url() -> Iterator[str]:
    with running(_server().http_app(allowed_origins=[ALLOWED])) as srv:
        yield srv.url


def _cors(answer: httpx2.Response) -> dict[str, str]:
    return {k: v for k, v in answer.headers.items() if k.lower().startswith("access-control-")}


def _readable(answer: httpx2.Response, origin: str = ALLOWED) -> None:
    """What a browser needs to hand ``answer`` to a page of ``origin``."""
    assert answer.headers.get("access-control-allow-origin") == origin, answer.headers
    exposed = {h.strip() for h in answer.headers["access-control-expose-headers"].split(",")}
    assert {"mcp-session-id", "mcp-protocol-version", "www-authenticate"} <= exposed
    assert "origin" in answer.headers.get("vary", "").lower()
    assert "access-control-allow-credentials" not in answer.headers


def _post(http: httpx2.Client, url: str, msg: dict[str, Any], **headers: str) -> httpx2.Response:
    return http.post(url, content=orjson.dumps(msg), headers={**HEADERS, **headers})


def _body(answer: httpx2.Response) -> Any:
    """The JSON-RPC message of a JSON or SSE answer."""
    if answer.headers["content-type"].startswith("text/event-stream"):
        data = [ln[5:] for ln in answer.text.splitlines() if ln.startswith("data:") and ln[5:]]
        return orjson.loads(data[-1])
    return answer.json()


def test_a_preflight_from_an_allowed_origin_is_answered(url: str) -> None:
    asked = "content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region"
    with httpx2.Client(timeout=10) as http:
        pre = http.options(
            url,
            headers={
                "origin": ALLOWED,
                "access-control-request-method": "POST",
                "access-control-request-headers": asked + ", authorization, Mcp-Param-Bad Name",
            },
        )
    assert pre.status_code == 204, pre.text
    assert pre.headers["access-control-allow-origin"] == ALLOWED  # never "*"
    methods = {m.strip() for m in pre.headers["access-control-allow-methods"].split(",")}
    assert methods == {"GET", "POST", "DELETE", "OPTIONS"}
    allowed = {h.strip() for h in pre.headers["access-control-allow-headers"].split(",")}
    assert {
        "content-type",
        "accept",
        "authorization",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-param-region",
    } <= allowed
    assert not any(" " in h for h in allowed)  # what is no header name is not echoed
    assert int(pre.headers["access-control-max-age"]) > 0
    assert "origin" in pre.headers["vary"].lower()
    assert "access-control-allow-credentials" not in pre.headers


def test_another_origin_gets_no_cors_and_keeps_its_403(url: str) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    with httpx2.Client(timeout=10) as http:
        pre = http.options(url, headers={"origin": OTHER, "access-control-request-method": "POST"})
        post = _post(http, url, init, origin=OTHER)
        # The allowed origin's preflight is answered on the same server (not a 405).
        ok = http.options(url, headers={"origin": ALLOWED, "access-control-request-method": "POST"})
    assert pre.status_code == 403 and _cors(pre) == {}
    assert post.status_code == 403 and _cors(post) == {}
    assert "mcp-session-id" not in post.headers
    assert ok.status_code == 204


def test_the_loopback_defaults_admit_local_pages_without_opening_cors() -> None:
    """With no origin named, a loopback server admits loopback origins (DNS rebinding stays
    out) but answers none of them with CORS: a page of a local dev server cannot read it."""
    local = "http://localhost:5173"
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    with running(_server().http_app()) as srv, httpx2.Client(timeout=10) as http:
        pre = http.options(
            srv.url, headers={"origin": local, "access-control-request-method": "POST"}
        )
        post = _post(http, srv.url, init, origin=local)
    assert pre.status_code == 405 and _cors(pre) == {}
    assert post.status_code == 200 and _cors(post) == {}  # admitted, not readable by a page


def test_a_2025_session_from_an_allowed_origin_is_readable(url: str) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    with httpx2.Client(timeout=10) as http:
        opened = _post(http, url, init, origin=ALLOWED)
        assert opened.status_code == 200, opened.text
        _readable(opened)
        sid = opened.headers["mcp-session-id"]
        session = {"origin": ALLOWED, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        done = _post(
            http, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **session
        )
        assert done.status_code == 202
        _readable(done)
        listed = _post(http, url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, **session)
        _readable(listed)
        assert {t["name"] for t in _body(listed)["result"]["tools"]} == {"echo", "slow"}
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"text": "later"}},
        }
        streamed = _post(http, url, call, **session)  # an SSE answer still running at 50 ms
        assert streamed.headers["content-type"].startswith("text/event-stream")
        _readable(streamed)
        assert _body(streamed)["result"]["content"][0]["text"] == "later"
        with http.stream(
            "GET", url, headers={**session, "accept": "text/event-stream"}
        ) as listening:  # the GET stream writes its own head
            assert listening.status_code == 200
            _readable(listening)
        gone = http.post(url, content=b"{", headers={**HEADERS, **session})
        assert gone.status_code == 400  # an error, readable too
        _readable(gone)
        ended = http.delete(url, headers=session)
        assert ended.status_code == 200
        _readable(ended)
        unknown = _post(http, url, {"jsonrpc": "2.0", "id": 4, "method": "ping"}, **session)
        assert unknown.status_code == 404
        _readable(unknown)


def test_a_2026_request_from_an_allowed_origin_is_readable(url: str) -> None:
    headers = {"origin": ALLOWED, "mcp-protocol-version": REV}
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": META},
    }
    with httpx2.Client(timeout=10) as http:
        listed = _post(http, url, listing, **headers, **{"mcp-method": "tools/list"})
        assert listed.status_code == 200, listed.text
        _readable(listed)
        assert {t["name"] for t in _body(listed)["result"]["tools"]} == {"echo", "slow"}
        called = _post(
            http, url, call, **headers, **{"mcp-method": "tools/call", "mcp-name": "echo"}
        )
        _readable(called)
        assert _body(called)["result"]["content"][0]["text"] == "hi"
        mismatch = _post(http, url, call, **headers, **{"mcp-method": "tools/list"})
        assert mismatch.status_code == 400  # a HeaderMismatch: readable, as every error
        _readable(mismatch)
        no_get = http.get(url, headers={**headers, "accept": "text/event-stream"})
        assert no_get.status_code == 405
        _readable(no_get)


def test_a_protected_server_lets_a_browser_find_how_to_log_in() -> None:
    server = _server(
        auth=ResourceServer(StaticTokenVerifier({"t": []}), resource="http://127.0.0.1/mcp")
    )
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    headers = {"origin": ALLOWED, "mcp-protocol-version": REV, "mcp-method": "tools/list"}
    with (
        running(server.http_app(allowed_origins=[ALLOWED])) as srv,
        httpx2.Client(timeout=10) as http,
    ):
        # The preflight carries no token: answered all the same.
        pre = http.options(
            srv.url,
            headers={
                "origin": ALLOWED,
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type",
            },
        )
        assert pre.status_code == 204, pre.text
        assert "authorization" in pre.headers["access-control-allow-headers"]
        refused = _post(http, srv.url, listing, **headers)
        assert refused.status_code == 401
        _readable(refused)  # WWW-Authenticate exposed: the page finds the metadata
        assert "resource_metadata=" in refused.headers["www-authenticate"]
        let_in = _post(http, srv.url, listing, **headers, authorization="Bearer t")
        assert let_in.status_code == 200, let_in.text
        _readable(let_in)
        metadata = http.get(
            f"{srv.base}/.well-known/oauth-protected-resource/mcp", headers={"origin": ALLOWED}
        )
        assert metadata.status_code == 200
        assert metadata.headers["access-control-allow-origin"] == "*"  # public, no credentials
