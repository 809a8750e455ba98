"""A 2026-07-28 response stream that breaks before its answer: the request is lost, and the
client sends it again as a new request with a new id (changelog.mdx, SEP-2575), a bounded
number of times. The listen stream is listened to again the same way.

The server is a real mcpkit app over Streamable HTTP (in process, through ASGIClient), with
an ASGI layer in front that drops the first streams of one method: it answers them with an
SSE stream that ends before the JSON-RPC response (after acknowledging a listen, if told to).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcpkit import Client, ProtocolError, Server, http
from mcpkit._session._client import MAX_REISSUES
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1/mcp"
REV = "2026-07-28"
#: Bound on every wait of these tests.
TIMEOUT = 20.0
ACK = "notifications/subscriptions/acknowledged"


class Dropper:
    """An ASGI app around ``app``: the first ``drops`` POSTs of ``method`` get a stream that
    ends before its answer (carrying the listen acknowledgement first when ``ack``). Keeps
    the JSON-RPC id of every POST of ``method``; ``acked`` is set when the real app's
    acknowledgement of a listen went out."""

    def __init__(self, app: Any, method: str, drops: int, *, ack: bool = False) -> None:
        self.app = app
        self.method = method
        self.drops = drops
        self.ack = ack
        self.ids: list[Any] = []
        self.acked = anyio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        msg = json.loads(body)
        if msg.get("method") == self.method:
            self.ids.append(msg["id"])
            if len(self.ids) <= self.drops:
                await self._drop(msg, send)
                return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.body" and ACK.encode() in message.get("body", b""):
                self.acked.set()
            await send(message)

        await self.app(scope, replay, watch)

    async def _drop(self, msg: dict[str, Any], send: Any) -> None:
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if self.ack:
            params = {
                "notifications": msg["params"]["notifications"],
                "_meta": {"io.modelcontextprotocol/subscriptionId": msg["id"]},
            }
            event = {"jsonrpc": "2.0", "method": ACK, "params": params}
            data = f"event: message\ndata: {json.dumps(event)}\n\n".encode()
            await send({"type": "http.response.body", "body": data, "more_body": True})
        # The stream ends here, without the response.
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _server() -> Server:
    server = Server("reissue")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
async def test_a_call_whose_stream_broke_is_sent_again_with_a_new_id() -> None:
    dropper = Dropper(_server().http_app(), "tools/call", drops=1)
    with anyio.fail_after(TIMEOUT):
        async with (
            ASGIClient(dropper) as asgi,
            Client(http(URL, http_client=asgi), protocol_version=REV) as client,
        ):
            result = await client.call_tool("echo", {"text": "again"})
            assert result.content[0].text == "again"  # type: ignore[union-attr]
    assert len(dropper.ids) == 2
    assert dropper.ids[0] != dropper.ids[1]


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
async def test_sending_again_is_bounded() -> None:
    dropper = Dropper(_server().http_app(), "tools/call", drops=100)
    with anyio.fail_after(TIMEOUT):
        async with (
            ASGIClient(dropper) as asgi,
            Client(http(URL, http_client=asgi), protocol_version=REV) as client,
        ):
            with pytest.raises(ProtocolError, match="closed the response stream") as caught:
                await client.call_tool("echo", {"text": "lost"})
            assert f"({MAX_REISSUES + 1} times)" in caught.value.message
            # The connection goes on.
            await client.list_tools()
    assert len(dropper.ids) == MAX_REISSUES + 1
    assert len(set(dropper.ids)) == MAX_REISSUES + 1


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
@pytest.mark.parametrize("acked", [False, True], ids=["before-ack", "after-ack"])
async def test_a_broken_listen_stream_is_listened_to_again(acked: bool) -> None:
    server = _server()
    dropper = Dropper(server.http_app(), "subscriptions/listen", drops=1, ack=acked)
    changed = anyio.Event()

    async def on_change(kind: str) -> None:  # async: plain callbacks run in a thread
        changed.set()

    with anyio.fail_after(TIMEOUT):
        async with (
            ASGIClient(dropper) as asgi,
            Client(
                http(URL, http_client=asgi),
                protocol_version=REV,
                list_changed_handler=on_change,
            ) as client,
        ):
            await dropper.acked.wait()  # the real server acknowledged the second listen
            sub = client.subscription
            assert sub is not None and not sub.closed
            assert len(dropper.ids) == 2 and sub.id == dropper.ids[1] != dropper.ids[0]
            server.add_tool(lambda: "late", name="late", description="Added late.")
            await changed.wait()
            assert sub.acknowledged == sub.requested
