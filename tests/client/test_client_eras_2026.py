"""Which era and revision a Client settles on when the server answers the 2026-07-28 probe,
and what it remembers of an HTTP server's era.

* A modern server refusing our revision (UnsupportedProtocolVersion) is answered in a
  revision of its list we speak, or the user gets a clear VersionError: never a fall back
  to ``initialize`` or to HTTP+SSE (stdio.mdx, streamable-http.mdx, versioning.mdx).
* A server of the handshake era gets ``initialize`` whatever error it answers the probe
  with (the fallback is not keyed to one code).
* The era of an HTTP server is cached per endpoint: the next connection to a handshake-era
  server skips the probe; a cached assumption that fails is probed afresh; the cache is
  bounded and can be cleared.

Real transports: scripted servers over stdio (tests/client/servers/eras_2026.py), and
servers in this process over Streamable HTTP (ASGIClient), a real mcpkit app where one fits.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.client._helpers import URL, asgi_client, echo_server, respond
from tests.http._http_helpers import built_off_loop, read_body, replaying, running

from mcpkit import (
    Client,
    HeaderMismatch,
    MissingRequiredClientCapability,
    ProtocolError,
    VersionError,
    http,
    stdio,
)
from mcpkit._client._eras import ERAS, EraCache, endpoint_key
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

SCRIPT = str(Path(__file__).parent / "servers" / "eras_2026.py")
#: Bound on every wait of these tests.
TIMEOUT = 20.0


def scripted(lines: list[str], *args: str) -> Any:
    return stdio([sys.executable, SCRIPT, *args], on_stderr=lines.append)


def received(lines: list[str]) -> list[str]:
    """The methods the scripted server got, in order."""
    return [line.split()[1] for line in lines if line.startswith("got ")]


# ---------------------------------------------------------------- no common version


@pytest.mark.req("VERSIONING-2026-CLIENT-RETRY-OR-SURFACE")
async def test_a_modern_server_sharing_no_revision_is_a_clear_error_without_initialize() -> None:
    lines: list[str] = []
    with anyio.fail_after(TIMEOUT):
        with pytest.raises(VersionError) as caught:
            async with Client(scripted(lines, "versions", "2099-01-01", "2098-06-30")):
                pass
    message = str(caught.value)
    assert "no common protocol version" in message
    assert "the server supports 2099-01-01, 2098-06-30" in message
    assert "this client speaks 2026-07-28, 2025-11-25" in message
    assert caught.value.supported == ("2099-01-01", "2098-06-30")
    # The server is modern (it answered with a modern error): no initialize followed.
    assert received(lines) == ["server/discover"]


@pytest.mark.req("VERSIONING-2026-CLIENT-RETRY-OR-SURFACE")
async def test_a_handshake_revision_the_server_lists_is_spoken_through_initialize() -> None:
    lines: list[str] = []
    target = scripted(lines, "versions", "2099-01-01", "2025-06-18")
    with anyio.fail_after(TIMEOUT):
        async with Client(target) as client:
            assert client.protocol_version == "2025-06-18"
            assert [t.name for t in await client.list_tools()] == ["t"]
    # The mutually supported revision was asked for, not our newest.
    assert [line for line in lines if line.startswith("got initialize")] == [
        "got initialize 2 2025-06-18"
    ]
    assert received(lines)[:2] == ["server/discover", "initialize"]


class FutureServer:
    """A modern server of a later revision only, over HTTP: each POST is refused with
    400 and UnsupportedProtocolVersion; GET (the HTTP+SSE fallback) with 405."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body = await read_body(receive)
        msg = json.loads(body) if body else {}
        self.seen.append((scope["method"], msg.get("method")))
        if scope["method"] != "POST":
            await respond(send, 405)
            return
        error = {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2099-01-01"], "requested": "2026-07-28"},
        }
        answer = {"jsonrpc": "2.0", "id": msg.get("id"), "error": error}
        await respond(send, 400, json.dumps(answer).encode(), "application/json")


@pytest.mark.req("VERSIONING-2026-CLIENT-RETRY-OR-SURFACE", "HTTP-2026-CLIENT-INSPECT-400-BODY")
async def test_over_http_the_400_body_is_read_and_neither_initialize_nor_sse_follow() -> None:
    app = FutureServer()
    with anyio.fail_after(TIMEOUT):
        with pytest.raises(VersionError, match="no common protocol version") as caught:
            async with asgi_client(app, lifespan=False):
                pass
    assert "the server supports 2099-01-01" in str(caught.value)
    assert str(caught.value).startswith(URL)
    assert app.seen == [("POST", "server/discover")]
    assert ERAS.get(endpoint_key(URL)) is None  # nothing learnt to remember


# ---------------------------------------------------------------- a legacy server's errors


@pytest.mark.req("STDIO-2026-CLIENT-PROBE-DISCOVER", "STDIO-2026-CLIENT-FALLBACK-ANY-ERROR")
@pytest.mark.parametrize("code", ["-32601", "-32602", "-32600", "-32000", "1"])
async def test_a_legacy_server_gets_initialize_whatever_error_it_answers_the_probe(
    code: str,
) -> None:
    lines: list[str] = []
    with anyio.fail_after(TIMEOUT):
        async with Client(scripted(lines, "legacy", code)) as client:
            assert client.protocol_version == "2025-11-25"
            assert not client.session.stateless
            assert [t.name for t in await client.list_tools()] == ["t"]
    assert received(lines) == ["server/discover", "initialize", "tools/list"]


@pytest.mark.parametrize(
    "error", [HeaderMismatch, MissingRequiredClientCapability], ids=["-32020", "-32021"]
)
async def test_an_error_only_a_modern_server_sends_is_raised_without_initialize(
    error: type[ProtocolError],
) -> None:
    lines: list[str] = []
    code = str(error().code)
    with anyio.fail_after(TIMEOUT):
        with pytest.raises(error):
            async with Client(scripted(lines, "legacy", code)):
                pass
    assert received(lines) == ["server/discover"]


# ---------------------------------------------------------------- the era cache (HTTP)


class Gate:
    """An ASGI app around a real mcpkit app, shaped like a server of one era: ``legacy``
    refuses a 2026-07-28 POST as a 2025 SDK does (400, a JSON-RPC error without our id);
    otherwise ``initialize`` is refused (400, plain text) and GET gets 405. Records the
    JSON-RPC method of every request."""

    def __init__(self, app: Any, *, legacy: bool) -> None:
        self.app = app
        self.legacy = legacy
        self.methods: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] != "POST":
            self.methods.append(scope["method"])
            if self.legacy:
                await self.app(scope, receive, send)
            else:
                await respond(send, 405)
            return
        body = await read_body(receive)
        msg = json.loads(body)
        method = msg.get("method", "(answer)")
        self.methods.append(method)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        modern = headers.get("mcp-protocol-version") == "2026-07-28" and "id" in msg
        if self.legacy and modern:
            refusal = {
                "jsonrpc": "2.0",
                "id": "server-error",
                "error": {"code": -32600, "message": "Bad Request: No valid session ID provided"},
            }
            await respond(send, 400, json.dumps(refusal).encode(), "application/json")
            return
        if not self.legacy and method == "initialize":
            await respond(send, 400, b"Bad Request")
            return
        await self.app(scope, replaying(body, receive), send)


@pytest.mark.req("VERSIONING-2026-CLIENT-CACHE-ERA")
async def test_a_legacy_http_server_is_probed_once_then_spoken_to_directly() -> None:
    gate = Gate(echo_server().http_app(), legacy=True)
    with anyio.fail_after(TIMEOUT):
        async with ASGIClient(gate) as asgi:
            async with Client(http(URL, http_client=asgi)) as client:
                assert client.protocol_version == "2025-11-25"
            assert gate.methods[:2] == ["server/discover", "initialize"]
            assert ERAS.get(endpoint_key(URL)) == "2025-11-25"
            # The same endpoint again (another spelling of it): no probe.
            gate.methods.clear()
            async with Client(http("HTTP://127.0.0.1:80/mcp", http_client=asgi)) as client:
                assert client.protocol_version == "2025-11-25"
                assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"  # type: ignore[union-attr]
            assert "server/discover" not in gate.methods
            assert gate.methods[0] == "initialize"
            # Forgotten: probed again.
            Client.clear_era_cache(URL)
            assert ERAS.get(endpoint_key(URL)) is None
            gate.methods.clear()
            async with Client(http(URL, http_client=asgi)) as client:
                assert client.protocol_version == "2025-11-25"
            assert gate.methods[:2] == ["server/discover", "initialize"]


@pytest.mark.req("VERSIONING-2026-CLIENT-CACHE-ERA")
async def test_a_cached_era_that_no_longer_holds_is_probed_afresh() -> None:
    # Real uvicorn: the failed initialize is followed by the HTTP+SSE attempt on a socket.
    gate = built_off_loop(lambda: Gate(echo_server().http_app(), legacy=True))
    with running(gate) as srv, anyio.fail_after(TIMEOUT):
        url = srv.url
        async with Client(url):
            pass
        assert ERAS.get(endpoint_key(url)) == "2025-11-25"
        # The server was upgraded: it speaks 2026-07-28 only now.
        gate.legacy = False
        gate.methods.clear()
        async with Client(url) as client:
            assert client.protocol_version == "2026-07-28"
            assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"  # type: ignore[union-attr]
        # initialize (refused, and no HTTP+SSE either), then the probe, then modern.
        assert gate.methods[:3] == ["initialize", "GET", "server/discover"]
        assert ERAS.get(endpoint_key(url)) == "2026-07-28"
        # And from then on the server is probed at the revision it spoke.
        gate.methods.clear()
        async with Client(url) as client:
            assert client.protocol_version == "2026-07-28"
        assert gate.methods[0] == "server/discover"
        assert "initialize" not in gate.methods


@pytest.mark.req("VERSIONING-2026-CLIENT-CACHE-ERA")
async def test_what_a_forced_revision_finds_is_not_remembered() -> None:
    app = echo_server().http_app()
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(app, protocol_version="2025-11-25"):
            pass
        assert ERAS.get(endpoint_key(URL)) is None
        async with asgi_client(app) as client:
            assert client.protocol_version == "2026-07-28"
        assert ERAS.get(endpoint_key(URL)) == "2026-07-28"
        Client.clear_era_cache()
        assert len(ERAS) == 0


def test_the_era_cache_is_bounded_and_keyed_by_endpoint() -> None:
    assert ERAS.max_entries == 256  # "the 256 used last"
    cache = EraCache(max_entries=2)
    cache.put(endpoint_key("http://a.example/mcp"), "2025-11-25")
    cache.put(endpoint_key("http://b.example/mcp"), "2026-07-28")
    assert cache.get(endpoint_key("http://A.EXAMPLE:80/mcp")) == "2025-11-25"  # now the newest
    cache.put(endpoint_key("https://a.example/mcp"), "2026-07-28")  # another origin
    assert len(cache) == 2
    assert cache.get(endpoint_key("http://b.example/mcp")) is None  # least recently used
    assert cache.get(endpoint_key("http://a.example/mcp")) == "2025-11-25"
    assert endpoint_key("http://a.example/other") != endpoint_key("http://a.example/mcp")
    assert endpoint_key("http://[::1]:8000/mcp") == "http://[::1]:8000/mcp"
    cache.clear()
    assert len(cache) == 0
