"""The Streamable HTTP server at the HTTP level: raw requests to the app, in process.

Each test calls the ASGI app through :class:`mcpkit.lowlevel.ASGIClient` (``in_process`` in
``_http_helpers``): the same requests and answers as over a socket, without one. What needs a
real socket (a body refused before it is all sent, and the end-to-end checks over uvicorn) is
in ``test_uvicorn_end_to_end.py``.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import orjson
import pytest
from _http_helpers import HEADERS, INIT_PARAMS, DemoServer, InProcessHTTP, Reply, in_process

from mcpkit._app import create_http_app
from mcpkit._http import InMemoryEventStore
from mcpkit._http._sse import SSEParser

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


@asynccontextmanager
async def served(demo: DemoServer, **app_kwargs: Any) -> AsyncIterator[InProcessHTTP]:
    """``create_http_app(demo, **app_kwargs)`` served in process, for raw requests."""
    async with in_process(create_http_app(demo, **app_kwargs)) as c:
        yield c


async def _init(c: InProcessHTTP, url: str, **headers: str) -> Reply:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    return await c.post(url, json=body, headers={**HEADERS, **headers})


def _events(text: str) -> list[Any]:
    return SSEParser().feed(text.encode())


def _messages(resp: Reply) -> list[dict[str, Any]]:
    if resp.headers["content-type"].startswith("application/json"):
        return [orjson.loads(resp.content)]
    return [orjson.loads(e.data) for e in _events(resp.text) if e.data]


async def _session(c: InProcessHTTP, url: str) -> dict[str, str]:
    r = await _init(c, url)
    assert r.status_code == 200
    sid = r.headers["mcp-session-id"]
    h = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    n = await c.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
    assert n.status_code == 202
    return h


async def _call(
    c: InProcessHTTP, url: str, h: dict[str, str], rid: Any, name: str, **args: Any
) -> Reply:
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": args},
    }
    return await c.post(url, json=body, headers=h)


@pytest.mark.req("HTTP-SESSION-ID-SECURE", "HTTP-SESSION-ID-ASCII", "HTTP-SSE-OR-JSON")
@pytest.mark.parametrize("json_response", [False, True])
async def test_initialize_assigns_visible_ascii_session_id(
    demo: DemoServer, json_response: bool
) -> None:
    async with served(demo, json_response=json_response) as client:
        r = await _init(client, client.url)
        assert r.status_code == 200
        sid = r.headers["mcp-session-id"]
        assert re.fullmatch(r"[\x21-\x7e]{20,}", sid)
        expected = "application/json" if json_response else "text/event-stream"
        assert r.headers["content-type"].startswith(expected)
        (msg,) = _messages(r)
        assert msg["id"] == 1 and msg["result"]["protocolVersion"] == "2025-11-25"
        # Another initialize gets another id.
        assert (await _init(client, client.url)).headers["mcp-session-id"] != sid


@pytest.mark.req("HTTP-NOTIFICATION-202")
async def test_notifications_and_responses_get_202_without_body(demo: DemoServer) -> None:
    async with served(demo) as client:
        h = await _session(client, client.url)
        r = await client.post(
            client.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h
        )
        assert r.status_code == 202 and r.content == b""
        r = await client.post(
            client.url, json={"jsonrpc": "2.0", "id": 99, "result": {}}, headers=h
        )
        assert r.status_code == 202 and r.content == b""


@pytest.mark.req("HTTP-SESSION-REQUIRED-400")
async def test_missing_session_id_is_400(demo: DemoServer) -> None:
    async with served(demo) as client:
        await _session(client, client.url)
        r = await client.post(
            client.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=HEADERS
        )
        assert r.status_code == 400
        assert r.json()["error"]["code"] == -32600
        assert r.json()["id"] is None


@pytest.mark.req("HTTP-SESSION-404")
async def test_unknown_and_deleted_sessions_are_404(demo: DemoServer) -> None:
    async with served(demo) as client:
        url, app = client.url, client.app
        h = await _session(client, url)
        bogus = {**h, "mcp-session-id": "no-such-session"}
        list_tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        assert (await client.post(url, json=list_tools, headers=bogus)).status_code == 404
        assert (await client.post(url, json=list_tools, headers=h)).status_code == 200
        assert len(app.sessions) == 1
        store = app.event_store
        assert (await _call(client, url, h, 4, "log")).status_code == 200
        assert store.session_count() == 1  # the session's events are kept for resumption...
        r = await client.delete(url, headers=h)
        assert r.status_code == 200
        assert len(app.sessions) == 0
        # ...and freed with it: DELETE answers once everything it held is gone.
        assert store.session_count() == 0
        list_tools = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
        assert (await client.post(url, json=list_tools, headers=h)).status_code == 404
        get_h = {**h, "accept": "text/event-stream"}
        assert (await client.get(url, headers=get_h)).status_code == 404
        assert (await client.delete(url, headers=h)).status_code == 404


@pytest.mark.req("HTTP-NOT-ACCEPTED-ERROR")
async def test_post_accept_and_content_type_checks(demo: DemoServer) -> None:
    async with served(demo) as client:
        url = client.url
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
        r = await client.post(
            url,
            json=body,
            headers={"accept": "application/json", "content-type": "application/json"},
        )
        assert r.status_code == 406
        r = await client.post(
            url,
            json=body,
            headers={"accept": "text/event-stream", "content-type": "application/json"},
        )
        assert r.status_code == 406
        r = await client.post(
            url, content=orjson.dumps(body), headers={**HEADERS, "content-type": "text/plain"}
        )
        assert r.status_code == 415
        # Wildcards count as listing both.
        r = await client.post(
            url, json=body, headers={"accept": "*/*", "content-type": "application/json"}
        )
        assert r.status_code == 200
        assert not client.app.sessions or len(client.app.sessions) == 1


@pytest.mark.req("HTTP-GET-SSE-OR-405", "HTTP-SINGLE-ENDPOINT")
async def test_get_stream_or_405(demo: DemoServer) -> None:
    async with served(demo, get_stream=False) as client:
        h = await _session(client, client.url)
        r = await client.get(client.url, headers={**h, "accept": "text/event-stream"})
        assert r.status_code == 405
        assert "POST" in r.headers["allow"]


@pytest.mark.req("HTTP-PROTOCOL-VERSION-INVALID-400", "HTTP-PROTOCOL-VERSION-DEFAULT")
async def test_protocol_version_header(demo: DemoServer) -> None:
    async with served(demo) as client:
        url = client.url
        h = await _session(client, url)
        list_tools = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
        r = await client.post(
            url, json=list_tools, headers={**h, "mcp-protocol-version": "1999-01-01"}
        )
        assert r.status_code == 400
        assert "1999-01-01" in r.json()["error"]["message"]
        no_version = {k: v for k, v in h.items() if k != "mcp-protocol-version"}
        r = await client.post(url, json=list_tools, headers=no_version)
        assert r.status_code == 200
        assert _messages(r)[-1]["result"]["tools"]


@pytest.mark.req("HTTP-NOT-ACCEPTED-ERROR")
@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}', -32700),  # invalid UTF-8
        (b"[]", -32600),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
        (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}', -32600),
        (b"42", -32600),
    ],
)
async def test_malformed_bodies_get_400_with_jsonrpc_error(
    demo: DemoServer, body: bytes, code: int
) -> None:
    async with served(demo) as client:
        h = await _session(client, client.url)
        r = await client.post(client.url, content=body, headers=h)
        assert r.status_code == 400
        assert r.json()["error"]["code"] == code
        # The server goes on serving the session.
        ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
        ok = await client.post(client.url, json=ping, headers=h)
        assert ok.status_code == 200
        assert _messages(ok)[-1] == {"jsonrpc": "2.0", "id": 7, "result": {}}


async def test_body_size_limit(demo: DemoServer) -> None:
    async with served(demo, max_body_size=1000) as client:
        h = await _session(client, client.url)
        big = orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": 8,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x" * 2000}},
            }
        )
        assert (await client.post(client.url, content=big, headers=h)).status_code == 413
        # No Content-Length: the limit applies while reading.
        chunked = await client.post_chunks(client.url, [big[:500], big[500:]], h)
        assert chunked.status_code == 413
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        assert (await client.post(client.url, json=ping, headers=h)).status_code == 200


@pytest.mark.req("HTTP-ORIGIN-VALIDATE", "HTTP-ORIGIN-403")
async def test_dns_rebinding_protection(demo: DemoServer) -> None:
    async with served(demo) as client:
        url = client.url
        port = 8000  # the in-process app's address: http://127.0.0.1:8000
        evil = await _init(client, url, host="evil.example.com", origin="http://evil.example.com")
        assert 400 <= evil.status_code < 500
        r = await _init(client, url, origin="http://evil.example.com")
        assert r.status_code == 403
        assert r.json()["error"] and r.json()["id"] is None
        r = await _init(client, url, host="evil.example.com")
        assert r.status_code == 421
        ok = await _init(client, url, host=f"localhost:{port}", origin=f"http://localhost:{port}")
        assert ok.status_code == 200


async def test_allow_lists_for_deployments(demo: DemoServer) -> None:
    async with served(
        demo, allowed_hosts=["mcp.example.com"], allowed_origins=["https://app.example.com"]
    ) as client:
        url = client.url
        assert (await _init(client, url)).status_code == 421  # 127.0.0.1 is not on the list now
        r = await _init(client, url, host="mcp.example.com", origin="https://app.example.com")
        assert r.status_code == 200
        r = await _init(client, url, host="mcp.example.com", origin="https://evil.example.com")
        assert r.status_code == 403


@pytest.mark.req("HTTP-SSE-PRIMING", "HTTP-EVENT-ID-UNIQUE")
async def test_sse_priming_event_and_unique_event_ids(demo: DemoServer) -> None:
    async with served(demo) as client:
        h = await _session(client, client.url)
        ids: list[str] = []
        for rid in (10, 11):
            r = await _call(client, client.url, h, rid, "log")
            evs = _events(r.text)
            assert evs[0].id and evs[0].data == "" and evs[0].retry == 1000  # priming
            msgs = [orjson.loads(e.data) for e in evs if e.data]
            assert [m.get("method") for m in msgs] == ["notifications/message"] * 3 + [None]
            assert msgs[-1]["id"] == rid and msgs[-1]["result"]["content"][0]["text"] == "logged"
            ids += [e.id for e in evs]
        assert len(ids) == len(set(ids))


async def test_no_priming_for_older_protocol_versions(demo: DemoServer) -> None:
    async with served(demo) as client:
        h = {**(await _session(client, client.url)), "mcp-protocol-version": "2025-06-18"}
        r = await _call(client, client.url, h, 12, "echo", text="a")
        evs = _events(r.text)
        assert evs[0].data  # first event is the response itself


@pytest.mark.parametrize("json_response", [False, True])
async def test_same_id_in_flight_twice_is_rejected_not_crosswired(
    demo: DemoServer, json_response: bool
) -> None:
    async with served(demo, json_response=json_response) as c:
        h = await _session(c, c.url)
        first: dict[str, Any] = {}

        async def run_first() -> None:
            first["r"] = await _call(c, c.url, h, 42, "gated")

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_first)
            # Wait until the first request is in flight on the server.
            await demo.changes.wait_for(lambda: "gated" in demo.started)
            assert any(42 in e.transport.requests for e in c.app.sessions.values())
            second = await _call(c, c.url, h, 42, "echo", text="second")
            assert second.status_code == 409
            assert second.json()["id"] == 42 and second.json()["error"]["code"] == -32600
            demo.gate.set()
        msgs = _messages(first["r"])
        assert (
            msgs[-1]["id"] == 42 and msgs[-1]["result"]["content"][0]["text"] == "through the gate"
        )


def test_session_limits_are_on_by_default(demo: DemoServer) -> None:
    app = create_http_app(demo)
    # Sessions cannot leak when clients never send DELETE; events are kept, bounded.
    assert app.options.session_idle_timeout == 1800.0 and app.options.max_sessions == 10_000
    assert app.options.max_body_size == 4 * 1024 * 1024
    assert isinstance(app.event_store, InMemoryEventStore) and app.event_store.max_events == 100_000


@pytest.mark.parametrize("json_response", [True, False])
async def test_sessionless_server_to_client_requests_fail_at_once(
    demo: DemoServer, json_response: bool
) -> None:
    async with served(demo, sessionless=True, json_response=json_response) as client:
        h = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
        t0 = time.monotonic()
        r = await _call(client, client.url, h, 4, "sample")  # the tool waits up to 10 s
        assert time.monotonic() - t0 < 2
        (msg,) = [m for m in _messages(r) if m.get("id") == 4]
        assert "error" in msg or msg["result"].get("isError")


async def test_sessionless_mode(demo: DemoServer) -> None:
    async with served(demo, sessionless=True, json_response=True) as client:
        url = client.url
        r = await _init(client, url)
        assert r.status_code == 200 and "mcp-session-id" not in r.headers
        h = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
        r = await _call(client, url, h, 3, "echo", text="no session")
        assert r.json()["result"]["content"][0]["text"] == "no session"
        # Server->client requests cannot work here: they fail at once instead of hanging.
        r = await _call(client, url, h, 4, "sample")
        assert "error" in r.json() or r.json()["result"].get("isError")
        get_h = {**h, "accept": "text/event-stream"}
        assert (await client.get(url, headers=get_h)).status_code == 405
        assert (await client.delete(url, headers=h)).status_code == 405
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await client.post(url, json=note, headers=h)).status_code == 202


async def test_sessionless_sse_mode(demo: DemoServer) -> None:
    async with served(demo, sessionless=True) as client:
        h = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
        r = await _call(client, client.url, h, 3, "log")
        msgs = _messages(r)
        assert [m.get("method") for m in msgs] == ["notifications/message"] * 3 + [None]


async def test_wrong_path_and_method(demo: DemoServer) -> None:
    async with served(demo) as client:
        assert (
            await client.post(client.base + "/other", json={}, headers=HEADERS)
        ).status_code == 404
        assert (await client.put(client.url, json={}, headers=HEADERS)).status_code == 405


async def test_sessions_bound_to_their_owner(demo: DemoServer) -> None:
    async with served(demo, session_owner=lambda h: h.get("authorization")) as client:
        url = client.url
        alice = {"authorization": "Bearer alice"}
        r = await _init(client, url, **alice)
        sid = r.headers["mcp-session-id"]
        h = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert (await client.post(url, json=ping, headers={**h, **alice})).status_code == 200
        # A stolen session id is useless to another user (and looks unknown).
        mallory = {**h, "authorization": "Bearer mallory"}
        assert (await client.post(url, json=ping, headers=mallory)).status_code == 404
        assert (await client.post(url, json=ping, headers=h)).status_code == 404
        assert (await client.delete(url, headers=mallory)).status_code == 404
        assert len(client.app.sessions) == 1


def test_allow_lists_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpkit._app._serve import options_from_env

    monkeypatch.setenv("MCPKIT_ALLOWED_HOSTS", "mcp.example.com, localhost")
    monkeypatch.setenv("MCPKIT_ALLOWED_ORIGINS", "https://app.example.com")
    assert options_from_env({"port": 1}) == {
        "port": 1,
        "allowed_hosts": ["mcp.example.com", "localhost"],
        "allowed_origins": ["https://app.example.com"],
    }
    assert options_from_env({"allowed_hosts": ["x"]})["allowed_hosts"] == ["x"]  # explicit wins


@pytest.mark.parametrize("json_response", [False, True])
async def test_batches_for_2025_03_26_sessions(demo: DemoServer, json_response: bool) -> None:
    async with served(demo, json_response=json_response) as client:
        url = client.url
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {**INIT_PARAMS, "protocolVersion": "2025-03-26"},
        }
        r = await client.post(url, json=body, headers=HEADERS)
        h = {
            **HEADERS,
            "mcp-session-id": r.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-03-26",
        }
        batch = [
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "b"}},
            },
            {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        ]
        r = await client.post(url, json=batch, headers=h)
        assert r.status_code == 200
        (answer,) = _messages(r)
        assert isinstance(answer, list)
        assert sorted(m["id"] for m in answer) == [2, 3]
        by_id = {m["id"]: m for m in answer}
        assert by_id[2]["result"]["content"][0]["text"] == "b" and by_id[3]["result"] == {}
        # Only notifications and responses: 202.
        note = [{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]
        assert (await client.post(url, json=note, headers=h)).status_code == 202
        # A bad item refuses the whole batch; initialize cannot be batched.
        bad = [*batch, {"jsonrpc": "1.0"}]
        assert (await client.post(url, json=bad, headers=h)).status_code == 400
        assert (await client.post(url, json=[body], headers=h)).status_code == 400
