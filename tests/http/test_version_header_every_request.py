"""The client names the negotiated revision in ``MCP-Protocol-Version`` on every request
after ``initialize``: the POSTs, the standalone GET stream and the closing DELETE alike."""

from __future__ import annotations

import anyio
import pytest
from _http_helpers import CLIENT_INFO, IN_PROCESS_BASE, DemoServer, Recorder

from mcpkit._app import create_http_app
from mcpkit._http import open_streamable_http
from mcpkit._session import ClientSession
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

URL = IN_PROCESS_BASE + "/mcp"


@pytest.mark.req("LIFECYCLE-HTTP-PROTOCOL-VERSION-HEADER")
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_get_and_delete_carry_the_negotiated_version(demo: DemoServer, version: str) -> None:
    rec = Recorder(create_http_app(demo))
    with anyio.fail_after(15):
        async with ASGIClient(rec) as http:
            async with (
                open_streamable_http(URL, http_client=http) as t,
                ClientSession(t, client_info=CLIENT_INFO, protocol_version=version) as cs,
            ):
                await cs.initialize()
                assert cs.protocol_version == version
                await cs.send_request("tools/list", timeout=10)
                # The GET stream is opened after initialized; wait until it was asked for.
                await rec.wait_for(lambda: any(m == "GET" for _, m, _, _ in rec.requests))
            assert len(rec.app.sessions) == 0  # the DELETE ended the session
    after_init = rec.requests[1:]
    methods = {m for _, m, _, _ in after_init}
    assert {"POST", "GET", "DELETE"} <= methods
    for _, method, headers, _ in after_init:
        assert headers.get("mcp-protocol-version") == version, (method, headers)
