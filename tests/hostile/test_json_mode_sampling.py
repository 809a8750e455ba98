"""JSON responses: a server-to-client request needs the client's GET stream. Without one it
fails after a short wait, saying why, instead of holding the call's POST for the client
request timeout (600 s). Over real uvicorn, with raw HTTP requests.

Before: the sampling request sat in the standalone backlog and the POST got no answer until
``client_request_timeout`` passed.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import orjson
import pytest
from tests.http._http_helpers import CLIENT_INFO, HEADERS, running

from mcpkit import Context, Server
from mcpkit._http import _transport

pytestmark = pytest.mark.anyio
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"sampling": {}},
    "clientInfo": CLIENT_INFO,
}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask"}}


def _server() -> Server:
    server = Server("asks")

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks the client's model."""
        reply = await ctx.sample("hello?")
        return f"model said: {reply.content.text}"  # type: ignore[union-attr]

    return server


async def _session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    first = await http.post(
        url,
        headers=HEADERS,
        content=orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}),
    )
    assert first.status_code == 200, first.text
    session = {**HEADERS, "mcp-session-id": first.headers["mcp-session-id"]}
    session["mcp-protocol-version"] = "2025-11-25"
    await http.post(
        url, headers=session, content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    )
    return session


async def test_sampling_without_a_get_stream_fails_at_once_saying_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_transport, "GET_STREAM_WAIT", 0.2)
    # The client request timeout stays at its default (600 s): only the fix answers in time.
    with running(_server().http_app(json_response=True)) as srv:
        async with httpx2.AsyncClient(timeout=30) as http:
            session = await _session(http, srv.url)
            with anyio.fail_after(20):
                answer = await http.post(srv.url, headers=session, content=orjson.dumps(CALL))
    assert answer.status_code == 200
    result = answer.json()["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "no GET stream open" in text and "SSE responses" in text, text


async def test_a_get_stream_opened_meanwhile_carries_the_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_transport, "GET_STREAM_WAIT", 15.0)
    answers: list[Any] = []
    with running(_server().http_app(json_response=True)) as srv:
        async with httpx2.AsyncClient(timeout=30) as http:
            session = await _session(http, srv.url)

            async def call() -> None:
                got = await http.post(srv.url, headers=session, content=orjson.dumps(CALL))
                answers.append(got.json())

            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call)
                    get = {**session, "accept": "text/event-stream"}
                    async with http.stream("GET", srv.url, headers=get) as stream:
                        assert stream.status_code == 200
                        async for line in stream.aiter_lines():
                            if line.startswith("data:") and "sampling/createMessage" in line:
                                asked = orjson.loads(line[5:])
                                break
                    reply = {
                        "jsonrpc": "2.0",
                        "id": asked["id"],
                        "result": {
                            "role": "assistant",
                            "content": {"type": "text", "text": "hi"},
                            "model": "m",
                        },
                    }
                    sent = await http.post(srv.url, headers=session, content=orjson.dumps(reply))
                    assert sent.status_code == 202
    result = answers[0]["result"]
    assert not result.get("isError") and result["content"][0]["text"] == "model said: hi"
