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
from tests.client._helpers import asgi_client, echo_server
from tests.http._http_helpers import read_body, replaying

from mcpkit import ProtocolError, TransportError
from mcpkit._http._client_common import HTTP_TRANSPORT_ERROR

pytestmark = pytest.mark.anyio

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
        body = await read_body(receive)
        msg = json.loads(body)
        if msg.get("method") == self.method:
            self.ids.append(msg["id"])
            if len(self.ids) <= self.drops:
                await self._drop(msg, send)
                return

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.body" and ACK.encode() in message.get("body", b""):
                self.acked.set()
            await send(message)

        await self.app(scope, replaying(body, receive), watch)

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


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
async def test_a_call_whose_stream_broke_is_sent_again_with_a_new_id() -> None:
    dropper = Dropper(echo_server().http_app(), "tools/call", drops=1)
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(dropper, protocol_version=REV) as client:
            result = await client.call_tool("echo", {"text": "again"})
            assert result.content[0].text == "again"  # type: ignore[union-attr]
    assert len(dropper.ids) == 2
    assert dropper.ids[0] != dropper.ids[1]


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
@pytest.mark.parametrize("max_reissues", [None, 0, 1], ids=["default", "0", "1"])
async def test_sending_again_is_bounded_by_max_reissues(max_reissues: int | None) -> None:
    dropper = Dropper(echo_server().http_app(), "tools/call", drops=100)
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(dropper, protocol_version=REV) as client:
            assert client.session.max_reissues == 2  # "at most twice" by default
            if max_reissues is not None:
                client.session.max_reissues = max_reissues
            bound = client.session.max_reissues
            # The answer never came through: a transport failure (issue 33), not an answer.
            with pytest.raises(TransportError, match="closed the response stream") as caught:
                await client.call_tool("echo", {"text": "lost"})
            assert not isinstance(caught.value, ProtocolError)
            assert (f"({bound + 1} times)" in str(caught.value)) == (bound > 0)
            # The connection goes on.
            await client.list_tools()
    assert len(dropper.ids) == len(set(dropper.ids)) == bound + 1


def _on_change(changed: anyio.Event) -> Any:
    async def on_change(kind: str) -> None:  # async: plain callbacks run in a thread
        changed.set()

    return on_change


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
@pytest.mark.parametrize("acked", [False, True], ids=["before-ack", "after-ack"])
async def test_a_broken_listen_stream_is_listened_to_again(acked: bool) -> None:
    server = echo_server()
    dropper = Dropper(server.http_app(), "subscriptions/listen", drops=1, ack=acked)
    changed = anyio.Event()
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(
            dropper, protocol_version=REV, list_changed_handler=_on_change(changed)
        ) as client:
            await dropper.acked.wait()  # the real server acknowledged the second listen
            sub = client.subscription
            assert sub is not None and not sub.closed
            assert len(dropper.ids) == 2 and sub.id == dropper.ids[1] != dropper.ids[0]
            server.add_tool(lambda: "late", name="late", description="Added late.")
            await changed.wait()
            assert sub.acknowledged == sub.requested


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
async def test_a_listen_stream_breaking_before_its_acknowledgement_is_given_up() -> None:
    dropper = Dropper(echo_server().http_app(), "subscriptions/listen", drops=100)
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(
            dropper, protocol_version=REV, list_changed_handler=_on_change(anyio.Event())
        ) as client:
            sub = client.subscription
            assert sub is not None and sub.closed and sub.acknowledged is None
            assert len(dropper.ids) == len(set(dropper.ids)) == client.session.max_reissues + 1
            assert (await client.call_tool("echo", {"text": "on"})).content[0].text == "on"  # type: ignore[union-attr]


class Forger(Dropper):
    """The first POSTs of ``method`` are answered, in full, with an error whose ``data``
    carries the transport's mark of a lost answer, as a hostile server could send it."""

    async def _drop(self, msg: dict[str, Any], send: Any) -> None:
        error = {
            "code": HTTP_TRANSPORT_ERROR,
            "message": "the server closed the response stream before answering",
            "data": {"streamBroken": True},
        }
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
async def test_a_server_cannot_forge_the_mark_that_sends_a_request_again() -> None:
    forger = Forger(echo_server().http_app(), "tools/call", drops=100)
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(forger, protocol_version=REV) as client:
            with pytest.raises(ProtocolError, match="closed the response stream"):
                await client.call_tool("echo", {"text": "once"})
    assert len(forger.ids) == 1  # an error the server sent is its answer: sent once
