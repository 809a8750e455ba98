"""The Streamable HTTP server at the HTTP level: raw requests against a real uvicorn."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx2 as httpx
import orjson
import pytest
from _http_helpers import HEADERS, INIT_PARAMS

from mcpkit._http import InMemoryEventStore
from mcpkit._http._sse import SSEParser

pytestmark = pytest.mark.timeout(30)


def _init(c: httpx.Client, url: str, **headers: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    return c.post(url, json=body, headers={**HEADERS, **headers})


def _events(text: str) -> list[Any]:
    return SSEParser().feed(text.encode())


def _messages(resp: httpx.Response) -> list[dict[str, Any]]:
    if resp.headers["content-type"].startswith("application/json"):
        return [orjson.loads(resp.content)]
    return [orjson.loads(e.data) for e in _events(resp.text) if e.data]


def _session(c: httpx.Client, url: str) -> dict[str, str]:
    r = _init(c, url)
    assert r.status_code == 200
    sid = r.headers["mcp-session-id"]
    h = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    n = c.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
    assert n.status_code == 202
    return h


def _call(
    c: httpx.Client, url: str, h: dict[str, str], rid: Any, name: str, **args: Any
) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": args},
    }
    return c.post(url, json=body, headers=h)


@pytest.fixture
def client() -> Any:
    with httpx.Client(timeout=10) as c:
        yield c


@pytest.mark.req("HTTP-SESSION-ID-SECURE", "HTTP-SESSION-ID-ASCII", "HTTP-SSE-OR-JSON")
@pytest.mark.parametrize("json_response", [False, True])
def test_initialize_assigns_visible_ascii_session_id(
    serve: Any, client: httpx.Client, json_response: bool
) -> None:
    srv = serve(json_response=json_response)
    r = _init(client, srv.url)
    assert r.status_code == 200
    sid = r.headers["mcp-session-id"]
    assert re.fullmatch(r"[\x21-\x7e]{20,}", sid)
    expected = "application/json" if json_response else "text/event-stream"
    assert r.headers["content-type"].startswith(expected)
    (msg,) = _messages(r)
    assert msg["id"] == 1 and msg["result"]["protocolVersion"] == "2025-11-25"
    # Another initialize gets another id.
    assert _init(client, srv.url).headers["mcp-session-id"] != sid


@pytest.mark.req("HTTP-NOTIFICATION-202")
def test_notifications_and_responses_get_202_without_body(serve: Any, client: httpx.Client) -> None:
    srv = serve()
    h = _session(client, srv.url)
    r = client.post(
        srv.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h
    )
    assert r.status_code == 202 and r.content == b""
    r = client.post(srv.url, json={"jsonrpc": "2.0", "id": 99, "result": {}}, headers=h)
    assert r.status_code == 202 and r.content == b""


@pytest.mark.req("HTTP-SESSION-REQUIRED-400")
def test_missing_session_id_is_400(serve: Any, client: httpx.Client) -> None:
    srv = serve()
    _session(client, srv.url)
    r = client.post(
        srv.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=HEADERS
    )
    assert r.status_code == 400
    assert r.json()["error"]["code"] == -32600
    assert r.json()["id"] is None


@pytest.mark.req("HTTP-SESSION-404")
def test_unknown_and_deleted_sessions_are_404(serve: Any, client: httpx.Client) -> None:
    srv = serve()
    h = _session(client, srv.url)
    bogus = {**h, "mcp-session-id": "no-such-session"}
    assert (
        client.post(
            srv.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=bogus
        ).status_code
        == 404
    )
    assert (
        client.post(
            srv.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=h
        ).status_code
        == 200
    )
    assert len(srv.app.sessions) == 1
    store = srv.app.event_store
    assert _call(client, srv.url, h, 4, "log").status_code == 200
    assert store.session_count() == 1  # the session's events are kept for resumption...
    r = client.delete(srv.url, headers=h)
    assert r.status_code == 200
    assert len(srv.app.sessions) == 0
    deadline = time.monotonic() + 5
    while store.session_count():  # ...and freed with it (DELETE frees everything it held)
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert (
        client.post(
            srv.url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=h
        ).status_code
        == 404
    )
    assert client.get(srv.url, headers={**h, "accept": "text/event-stream"}).status_code == 404
    assert client.delete(srv.url, headers=h).status_code == 404


@pytest.mark.req("HTTP-NOT-ACCEPTED-ERROR")
def test_post_accept_and_content_type_checks(serve: Any, client: httpx.Client) -> None:
    srv = serve()
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    r = client.post(
        srv.url,
        json=body,
        headers={"accept": "application/json", "content-type": "application/json"},
    )
    assert r.status_code == 406
    r = client.post(
        srv.url,
        json=body,
        headers={"accept": "text/event-stream", "content-type": "application/json"},
    )
    assert r.status_code == 406
    r = client.post(
        srv.url, content=orjson.dumps(body), headers={**HEADERS, "content-type": "text/plain"}
    )
    assert r.status_code == 415
    # Wildcards count as listing both.
    r = client.post(
        srv.url, json=body, headers={"accept": "*/*", "content-type": "application/json"}
    )
    assert r.status_code == 200
    assert not srv.app.sessions or len(srv.app.sessions) == 1


@pytest.mark.req("HTTP-GET-SSE-OR-405", "HTTP-SINGLE-ENDPOINT")
def test_get_stream_or_405(serve: Any, client: httpx.Client) -> None:
    srv = serve(get_stream=False)
    h = _session(client, srv.url)
    r = client.get(srv.url, headers={**h, "accept": "text/event-stream"})
    assert r.status_code == 405
    assert "POST" in r.headers["allow"]


@pytest.mark.req("HTTP-PROTOCOL-VERSION-INVALID-400", "HTTP-PROTOCOL-VERSION-DEFAULT")
def test_protocol_version_header(serve: Any, client: httpx.Client) -> None:
    srv = serve()
    h = _session(client, srv.url)
    list_tools = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
    r = client.post(srv.url, json=list_tools, headers={**h, "mcp-protocol-version": "1999-01-01"})
    assert r.status_code == 400
    assert "1999-01-01" in r.json()["error"]["message"]
    no_version = {k: v for k, v in h.items() if k != "mcp-protocol-version"}
    r = client.post(srv.url, json=list_tools, headers=no_version)
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
def test_malformed_bodies_get_400_with_jsonrpc_error(
    serve: Any, client: httpx.Client, body: bytes, code: int
) -> None:
    srv = serve()
    h = _session(client, srv.url)
    r = client.post(srv.url, content=body, headers=h)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == code
    # The server goes on serving the session.
    ok = client.post(srv.url, json={"jsonrpc": "2.0", "id": 7, "method": "ping"}, headers=h)
    assert ok.status_code == 200 and _messages(ok)[-1] == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_body_size_limit(serve: Any, client: httpx.Client) -> None:
    srv = serve(max_body_size=1000)
    h = _session(client, srv.url)
    big = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x" * 2000}},
        }
    )
    assert client.post(srv.url, content=big, headers=h).status_code == 413

    def chunks() -> Any:  # no Content-Length: the limit applies while reading
        yield big[:500]
        yield big[500:]

    assert client.post(srv.url, content=chunks(), headers=h).status_code == 413
    assert (
        client.post(
            srv.url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=h
        ).status_code
        == 200
    )


def _raw_post(port: int, head_extra: str, body_chunks: Any) -> tuple[int, int]:
    """POST over a raw socket; returns (status, bytes of body sent before the answer)."""
    import socket

    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\n{head_extra}\r\n"
        )
        sock.sendall(head.encode())
        sock.setblocking(False)
        answer = b""
        for chunk in body_chunks:
            try:
                answer += sock.recv(65536)
            except BlockingIOError:
                pass
            if answer:
                break
            try:
                sock.setblocking(True)
                sock.sendall(chunk)
                sent += len(chunk)
                sock.setblocking(False)
            except OSError:
                break
        sock.setblocking(True)
        sock.settimeout(10)
        while b"\r\n" not in answer:
            more = sock.recv(65536)
            if not more:
                break
            answer += more
    return int(answer.split(b" ", 2)[1]), sent


def test_100mb_body_rejected_early(serve: Any) -> None:
    srv = serve()  # default limit: 4 MiB
    mb = b"x" * (1024 * 1024)
    # Declared size over the limit: refused before a single body byte is read.
    status, sent = _raw_post(srv.port, f"Content-Length: {100 * 1024 * 1024}\r\n", iter(()))
    assert status == 413 and sent == 0
    # Chunked (no declared size): refused once the limit is crossed, long before 100 MB.
    chunks = (b"%x\r\n" % len(mb) + mb + b"\r\n" for _ in range(100))
    status, sent = _raw_post(srv.port, "Transfer-Encoding: chunked\r\n", chunks)
    assert status == 413
    assert sent < 20 * 1024 * 1024


@pytest.mark.req("HTTP-ORIGIN-VALIDATE", "HTTP-ORIGIN-403")
def test_dns_rebinding_protection(serve: Any, client: httpx.Client) -> None:
    srv = serve()
    port = srv.port
    evil = _init(client, srv.url, host="evil.example.com", origin="http://evil.example.com")
    assert 400 <= evil.status_code < 500
    r = _init(client, srv.url, origin="http://evil.example.com")
    assert r.status_code == 403
    assert r.json()["error"] and r.json()["id"] is None
    r = _init(client, srv.url, host="evil.example.com")
    assert r.status_code == 421
    ok = _init(client, srv.url, host=f"localhost:{port}", origin=f"http://localhost:{port}")
    assert ok.status_code == 200


def test_allow_lists_for_deployments(serve: Any, client: httpx.Client) -> None:
    srv = serve(allowed_hosts=["mcp.example.com"], allowed_origins=["https://app.example.com"])
    assert _init(client, srv.url).status_code == 421  # 127.0.0.1 is not on the list now
    r = _init(client, srv.url, host="mcp.example.com", origin="https://app.example.com")
    assert r.status_code == 200
    r = _init(client, srv.url, host="mcp.example.com", origin="https://evil.example.com")
    assert r.status_code == 403


@pytest.mark.req("HTTP-SSE-PRIMING", "HTTP-EVENT-ID-UNIQUE")
def test_sse_priming_event_and_unique_event_ids(serve: Any, client: httpx.Client) -> None:
    srv = serve()
    h = _session(client, srv.url)
    ids: list[str] = []
    for rid in (10, 11):
        r = _call(client, srv.url, h, rid, "log")
        evs = _events(r.text)
        assert evs[0].id and evs[0].data == "" and evs[0].retry == 1000  # priming
        msgs = [orjson.loads(e.data) for e in evs if e.data]
        assert [m.get("method") for m in msgs] == ["notifications/message"] * 3 + [None]
        assert msgs[-1]["id"] == rid and msgs[-1]["result"]["content"][0]["text"] == "logged"
        ids += [e.id for e in evs]
    assert len(ids) == len(set(ids))


def test_no_priming_for_older_protocol_versions(serve: Any, client: httpx.Client) -> None:
    srv = serve()
    h = {**_session(client, srv.url), "mcp-protocol-version": "2025-06-18"}
    r = _call(client, srv.url, h, 12, "echo", text="a")
    evs = _events(r.text)
    assert evs[0].data  # first event is the response itself


@pytest.mark.parametrize("json_response", [False, True])
def test_same_id_in_flight_twice_is_rejected_not_crosswired(
    serve: Any, demo: Any, json_response: bool
) -> None:
    srv = serve(json_response=json_response)
    import threading

    with httpx.Client(timeout=10) as c:
        h = _session(c, srv.url)
        first: dict[str, Any] = {}

        def run_first() -> None:
            first["r"] = _call(c, srv.url, h, 42, "gated")

        t = threading.Thread(target=run_first)
        t.start()
        # Wait until the first request is in flight on the server.
        deadline = time.monotonic() + 5
        while not any(42 in e.transport.requests for e in srv.app.sessions.values()):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        with httpx.Client(timeout=10) as c2:
            second = _call(c2, srv.url, h, 42, "echo", text="second")
        assert second.status_code == 409
        assert second.json()["id"] == 42 and second.json()["error"]["code"] == -32600
        demo.gate.set()
        t.join(10)
        msgs = _messages(first["r"])
        assert (
            msgs[-1]["id"] == 42 and msgs[-1]["result"]["content"][0]["text"] == "through the gate"
        )


def test_session_limits_are_on_by_default(serve: Any) -> None:
    app = serve().app
    # Sessions cannot leak when clients never send DELETE; events are kept, bounded.
    assert app.options.session_idle_timeout == 1800.0 and app.options.max_sessions == 10_000
    assert app.options.max_body_size == 4 * 1024 * 1024
    assert isinstance(app.event_store, InMemoryEventStore) and app.event_store.max_events == 100_000


@pytest.mark.parametrize("json_response", [True, False])
def test_stateless_server_to_client_requests_fail_at_once(
    serve: Any, client: httpx.Client, json_response: bool
) -> None:
    srv = serve(stateless=True, json_response=json_response)
    h = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
    t0 = time.monotonic()
    r = _call(client, srv.url, h, 4, "sample")  # the tool waits up to 10 s for an answer
    assert time.monotonic() - t0 < 2
    (msg,) = [m for m in _messages(r) if m.get("id") == 4]
    assert "error" in msg or msg["result"].get("isError")


def test_stateless_mode(serve: Any, client: httpx.Client) -> None:
    srv = serve(stateless=True, json_response=True)
    r = _init(client, srv.url)
    assert r.status_code == 200 and "mcp-session-id" not in r.headers
    h = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
    r = _call(client, srv.url, h, 3, "echo", text="no session")
    assert r.json()["result"]["content"][0]["text"] == "no session"
    # Server->client requests cannot work here: they fail at once instead of hanging.
    r = _call(client, srv.url, h, 4, "sample")
    assert "error" in r.json() or r.json()["result"].get("isError")
    assert client.get(srv.url, headers={**h, "accept": "text/event-stream"}).status_code == 405
    assert client.delete(srv.url, headers=h).status_code == 405
    assert (
        client.post(
            srv.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h
        ).status_code
        == 202
    )


def test_stateless_sse_mode(serve: Any, client: httpx.Client) -> None:
    srv = serve(stateless=True)
    h = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
    r = _call(client, srv.url, h, 3, "log")
    msgs = _messages(r)
    assert [m.get("method") for m in msgs] == ["notifications/message"] * 3 + [None]


def test_wrong_path_and_method(serve: Any, client: httpx.Client) -> None:
    srv = serve()
    assert client.post(srv.base + "/other", json={}, headers=HEADERS).status_code == 404
    assert client.put(srv.url, json={}, headers=HEADERS).status_code == 405


def test_sessions_bound_to_their_owner(serve: Any, client: httpx.Client) -> None:
    srv = serve(session_owner=lambda h: h.get("authorization"))
    alice = {"authorization": "Bearer alice"}
    r = _init(client, srv.url, **alice)
    sid = r.headers["mcp-session-id"]
    h = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert client.post(srv.url, json=ping, headers={**h, **alice}).status_code == 200
    # A stolen session id is useless to another user (and looks unknown).
    assert (
        client.post(
            srv.url, json=ping, headers={**h, "authorization": "Bearer mallory"}
        ).status_code
        == 404
    )
    assert client.post(srv.url, json=ping, headers=h).status_code == 404
    assert (
        client.delete(srv.url, headers={**h, "authorization": "Bearer mallory"}).status_code == 404
    )
    assert len(srv.app.sessions) == 1


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
def test_batches_for_2025_03_26_sessions(
    serve: Any, client: httpx.Client, json_response: bool
) -> None:
    srv = serve(json_response=json_response)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {**INIT_PARAMS, "protocolVersion": "2025-03-26"},
    }
    r = client.post(srv.url, json=body, headers=HEADERS)
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
    r = client.post(srv.url, json=batch, headers=h)
    assert r.status_code == 200
    (answer,) = _messages(r)
    assert isinstance(answer, list)
    assert sorted(m["id"] for m in answer) == [2, 3]
    by_id = {m["id"]: m for m in answer}
    assert by_id[2]["result"]["content"][0]["text"] == "b" and by_id[3]["result"] == {}
    # Only notifications and responses: 202.
    note = [{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]
    assert client.post(srv.url, json=note, headers=h).status_code == 202
    # A bad item refuses the whole batch; initialize cannot be batched.
    assert client.post(srv.url, json=[*batch, {"jsonrpc": "1.0"}], headers=h).status_code == 400
    assert client.post(srv.url, json=[body], headers=h).status_code == 400
