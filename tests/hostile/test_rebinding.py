"""DNS rebinding: Host and Origin values a hostile page can make a browser send.

Before the strict parser, ``Host: localhost:evil@x`` and ``Origin: http://localhost:1@evil.com``
passed the loopback allow-list (the part after the last colon was taken for a port).
"""

from __future__ import annotations

import httpx2
import orjson
import pytest
from tests.http._http_helpers import HEADERS, INIT_PARAMS, running

from mcpkit import Server
from mcpkit._http._security import HostOriginPolicy

BAD_HOSTS = [
    "localhost:evil@x",
    "localhost:80@evil.com",
    "localhost@evil.com",
    "evil.com#localhost",
    "localhost:80:80",
    "localhost:-1",
    "localhost:99999",
    "localhost:\uff18\uff10",  # full-width digits
    "localhost/evil",
    "[::1]evil",
    "[::1",
    "",
]
BAD_ORIGINS = [
    "http://localhost:1@evil.com",
    "http://localhost@evil.com",
    "http://evil.com",
    "http://localhost.evil.com",
    "http://localhost:80/evil",
    "null",
    "localhost",
]


@pytest.mark.parametrize("host", BAD_HOSTS)
def test_hostile_host_is_refused(host: str) -> None:
    assert not HostOriginPolicy(None, None).host_ok(host)


@pytest.mark.parametrize("origin", BAD_ORIGINS)
def test_hostile_origin_is_refused(origin: str) -> None:
    assert not HostOriginPolicy(None, None).origin_ok(origin)


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:1", "[::1]:8080"])
def test_loopback_hosts_still_pass(host: str) -> None:
    policy = HostOriginPolicy(None, None)
    assert policy.host_ok(host)
    assert policy.origin_ok(f"http://{host}")


def test_an_invalid_allow_list_entry_is_an_error_not_a_hole() -> None:
    with pytest.raises(ValueError, match="host"):
        HostOriginPolicy(["example.com:http"], None)
    with pytest.raises(ValueError, match="scheme://host"):
        HostOriginPolicy(None, ["example.com"])


@pytest.mark.parametrize(
    ("header", "value"),
    [("host", "localhost:evil@x"), ("origin", "http://localhost:1@evil.com")],
)
def test_rebinding_request_is_refused_by_a_real_server(header: str, value: str) -> None:
    server = Server("local")
    with running(server.http_app()) as srv, httpx2.Client(timeout=10) as http:
        body = orjson.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
        )
        answer = http.post(srv.url, headers={**HEADERS, header: value}, content=body)
        assert answer.status_code in (403, 421), answer.text
        assert "mcp-session-id" not in answer.headers
        fine = http.post(srv.url, headers=HEADERS, content=body)
        assert fine.status_code == 200 and "mcp-session-id" in fine.headers


def test_remembered_host_verdicts_stay_right_and_bounded() -> None:
    """host_ok remembers its verdicts (the same Host on every request): asked again, a
    refused host stays refused and an allowed one allowed; a client sending ever new
    values only refills the bounded table."""
    from mcpkit._http._security import _SEEN_MAX, HostOriginPolicy

    policy = HostOriginPolicy(["mcp.example.com"], None)
    for _ in range(2):
        assert policy.host_ok("mcp.example.com:443") is True
        assert policy.host_ok("evil.example.com") is False
        assert policy.host_ok(None) is False
    for i in range(5 * _SEEN_MAX):
        assert policy.host_ok(f"rebind-{i}.example.com") is False
    assert len(policy._seen) <= _SEEN_MAX
    assert policy.host_ok("mcp.example.com") is True
