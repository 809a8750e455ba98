"""Our client reading an SSE answer: streamed (chunked) or sent whole (``Content-Length``).

A 2026-07-28 server that answers before saying anything else sends its stream whole (ours
does); the client reads such a body at once instead of draining a stream. Both ways must
hand the engine the same messages in the same order, over a real socket.
"""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest
from tests.http._http_helpers import read_body, running

from mcpkit.lowlevel import open_streamable_http

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

REV = "2026-07-28"


def _events(rid: Any) -> list[bytes]:
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "t", "progress": 1, "total": 2},
    }
    answer = {"jsonrpc": "2.0", "id": rid, "result": {"content": [], "resultType": "complete"}}
    return [
        b"retry: 2500\nid: e1\nevent: message\ndata: " + orjson.dumps(progress) + b"\n\n",
        b": a comment\n\n",
        b"id: e2\ndata: " + orjson.dumps(answer) + b"\n\n",
    ]


def _app(whole: bool) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        events = _events(orjson.loads(await read_body(receive))["id"])
        headers = [(b"content-type", b"text/event-stream")]
        if whole:
            headers.append((b"content-length", str(len(b"".join(events))).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for i, event in enumerate(events):
            last = i == len(events) - 1
            await send({"type": "http.response.body", "body": event, "more_body": not last})

    return app


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "streamed"])
async def test_an_sse_answer_gives_the_same_messages_either_way(whole: bool) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "x",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": REV,
                "io.modelcontextprotocol/clientCapabilities": {},
                "progressToken": "t",
            },
        },
    }
    with running(_app(whole)) as srv, anyio.fail_after(20):
        async with open_streamable_http(srv.url) as t:
            await t.send(request)
            got = [await t.receive(), await t.receive()]
    assert [m.get("method") for m in got] == ["notifications/progress", None]
    assert got[0]["params"]["progress"] == 1
    assert got[1]["id"] == 7 and got[1]["result"]["resultType"] == "complete"
