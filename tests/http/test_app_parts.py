"""The HTTP app's seams: one options object, a session registry behind a protocol."""

from __future__ import annotations

import orjson
import pytest
from _http_helpers import HEADERS, INIT_PARAMS, DemoServer, asgi_call

from mcpkit import HTTPAppOptions, Server, create_http_app
from mcpkit.lowlevel import MemorySessionRegistry, SessionRegistry, StreamableHTTPApp

pytestmark = pytest.mark.anyio
INIT = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})


async def test_one_options_object_configures_the_app() -> None:
    opts = HTTPAppOptions(json_response=True, max_sessions=1)
    app = create_http_app(DemoServer(), options=opts)
    assert app.options is opts
    async with app:
        status, headers, body = await asgi_call(app, "POST", HEADERS, INIT)
        assert status == 200 and headers["content-type"] == "application/json"
        assert orjson.loads(body)["result"]["serverInfo"]
        # Read live: raising the cap on a running app takes effect at once.
        opts.max_sessions = 3
        for _ in range(2):
            assert (await asgi_call(app, "POST", HEADERS, INIT))[0] == 200
        assert len(app.sessions) == 3


def test_options_and_keywords_are_not_mixed() -> None:
    with pytest.raises(TypeError, match=r"either options= or keywords.*json_response"):
        create_http_app(Server("x"), options=HTTPAppOptions(), json_response=True)


def test_server_http_app_takes_the_same_settings() -> None:
    app = Server("x").http_app(sessionless=True, max_body_size=1024)
    assert isinstance(app, StreamableHTTPApp)
    assert app.options.sessionless and app.options.max_body_size == 1024
    assert app.event_store is None  # sessionless: nothing to resume


async def test_the_registry_is_the_seam_sessions_live_behind() -> None:
    app = create_http_app(DemoServer())
    registry: SessionRegistry = app.registry  # the protocol a shared store implements
    assert isinstance(app.registry, MemorySessionRegistry)
    async with app:
        status, headers, _ = await asgi_call(app, "POST", HEADERS, INIT)
        sid = headers["mcp-session-id"]
        assert status == 200 and len(registry) == 1
        entry = await registry.lookup(sid, {})
        assert entry is not None and entry.id == sid
        await registry.terminate(entry)
        assert await registry.lookup(sid, {}) is None and len(registry) == 0
        ping = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
        status, _, _ = await asgi_call(app, "POST", {**HEADERS, "mcp-session-id": sid}, ping)
        assert status == 404
