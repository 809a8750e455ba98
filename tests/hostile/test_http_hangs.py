"""Server-to-client requests that can never be answered end, over real uvicorn."""

from __future__ import annotations

import httpx2
import orjson
from tests.http._http_helpers import CLIENT_INFO, HEADERS, running

from mcpkit import Context, Server


def test_sample_in_json_mode_without_a_get_stream_times_out() -> None:
    """JSON responses and no GET stream: the sampling request has no way to the client.

    Before: the tool waited forever (no default timeout), holding the POST open.
    """
    server = Server("asks")
    server.client_request_timeout = 0.5

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks the client's model."""
        reply = await ctx.sample("hello?")
        return str(reply)

    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"sampling": {}},
        "clientInfo": CLIENT_INFO,
    }
    with running(server.http_app(json_response=True)) as srv, httpx2.Client(timeout=20) as http:
        first = http.post(
            srv.url,
            headers=HEADERS,
            content=orjson.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
            ),
        )
        session = {**HEADERS, "mcp-session-id": first.headers["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-11-25"
        http.post(
            srv.url,
            headers=session,
            content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        )
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask"}}
        answer = http.post(srv.url, headers=session, content=orjson.dumps(call))
        assert answer.status_code == 200
        result = answer.json()["result"]
        assert result["isError"] is True
        # Now it fails sooner still, saying why (tests/hostile/test_json_mode_sampling.py).
        assert "no GET stream open" in result["content"][0]["text"]
