"""A 2026-07-28 response stream that breaks before its answer: the request is lost, and the
client sends it again as a new request with a new id (changelog.mdx, SEP-2575), a bounded
number of times -- only when that is safe (issue 41): a method without effects, a tool
annotated read-only or idempotent, a call marked ``idempotent=True``, or any once the
session assumes so. Any other lost request is not sent again: the caller is told it may
or may not have taken effect. The listen stream is listened to again the same way.

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

from mcpkit import Client, ProtocolError, Server, TransportError
from mcpkit._http._client_common import HTTP_TRANSPORT_ERROR
from mcpkit._middleware import MCPRequest
from mcpkit._session._client import EFFECTLESS_METHODS
from mcpkit.types import ToolAnnotations

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


def hinted_server() -> Server:
    """The echo server, plus ``look`` (annotated read-only), ``put`` (idempotent) and
    ``wipe`` (annotated, but neither: destructive)."""
    server = echo_server()

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def look(text: str) -> str:
        """Read something."""
        return text

    @server.tool(annotations=ToolAnnotations(idempotent_hint=True, read_only_hint=False))
    def put(text: str) -> str:
        """Set something: twice is the same as once."""
        return text

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def wipe(text: str) -> str:
        """Change something for good."""
        return text

    return server


async def _marks_idempotent(request: MCPRequest, call_next: Any) -> Any:
    """A middleware that knows better than the client: every request may be sent again."""
    request.state["idempotent"] = True
    return await call_next(request)


async def _call(client: Client, how: str) -> str:
    """Call a tool the way ``how`` says it is safe to send again; its text."""
    if how == "assume_idempotent":
        client.session.assume_idempotent = True
    tool = {"readOnlyHint": "look", "idempotentHint": "put"}.get(how, "echo")
    result = await client.call_tool(tool, {"text": "again"}, idempotent=how == "idempotent=True")
    return result.content[0].text  # type: ignore[union-attr]


SAFE_CALLS = [
    "readOnlyHint",
    "idempotentHint",
    "idempotent=True",
    "assume_idempotent",
    "middleware",
]


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
@pytest.mark.parametrize("how", SAFE_CALLS)
async def test_a_call_known_safe_whose_stream_broke_is_sent_again_with_a_new_id(how: str) -> None:
    dropper = Dropper(hinted_server().http_app(), "tools/call", drops=1)
    middleware = [_marks_idempotent] if how == "middleware" else []
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(dropper, protocol_version=REV, middleware=middleware) as client:
            assert await _call(client, how) == "again"
    assert len(dropper.ids) == 2
    assert dropper.ids[0] != dropper.ids[1]


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
@pytest.mark.parametrize("tool", ["echo", "wipe"], ids=["no-hints", "destructive"])
async def test_a_call_not_known_safe_is_not_sent_again(tool: str) -> None:
    dropper = Dropper(hinted_server().http_app(), "tools/call", drops=1)
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(dropper, protocol_version=REV) as client:
            assert {t.name for t in await client.list_tools()} >= {"echo", "wipe"}  # known
            with pytest.raises(TransportError) as caught:
                await client.call_tool(tool, {"text": "once"})
            said = str(caught.value)
            assert not isinstance(caught.value, ProtocolError)  # a lost answer, not the server's
            assert "may or may not have taken effect" in said and "not sent again" in said
            for way in ("readOnlyHint", "idempotentHint", "idempotent=True", "assume_idempotent"):
                assert way in said  # the ways to let the client send it again
            assert len(dropper.ids) == 1  # sent once, never behind the caller's back
            # The connection goes on; the same call made again by the caller is answered.
            assert (await client.call_tool(tool, {"text": "mine"})).content[0].text == "mine"  # type: ignore[union-attr]
    assert len(dropper.ids) == 2


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
async def test_a_tools_list_changed_forgets_the_hints_until_listed_again() -> None:
    # A changed tool may have lost its hints: until the next full listing says otherwise,
    # its calls count as unsafe (never a round trip per call to find out).
    dropper = Dropper(hinted_server().http_app(), "tools/call", drops=2)
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(dropper, protocol_version=REV) as client:
            await client.list_tools()
            client._invalidate("tools")  # what notifications/tools/list_changed does
            with pytest.raises(TransportError, match="not sent again"):
                await client.call_tool("look", {"text": "x"})
            await client.list_tools(use_cache=False)
            assert (await client.call_tool("look", {"text": "y"})).content[0].text == "y"  # type: ignore[union-attr]
    assert len(dropper.ids) == 3  # once, then twice (the second listing knew it read-only)


async def _read(client: Client, method: str) -> Any:
    """Send ``method`` (one without effects) as the client's helpers do."""
    params: dict[str, Any] = {
        "resources/read": {"uri": "note://x"},
        "prompts/get": {"name": "hello", "arguments": {"who": "w"}},
        "completion/complete": {
            "ref": {"type": "ref/prompt", "name": "hello"},
            "argument": {"name": "who", "value": "w"},
        },
    }.get(method, {})
    return await client.send_request(method, params or None)


def reads_server() -> Server:
    """The hinted server, plus a resource and a prompt to read."""
    server = hinted_server()

    @server.resource("note://x")
    def note() -> str:
        return "the note"

    @server.prompt()
    def hello(who: str) -> str:
        """Say hello."""
        return f"hello {who}"

    @server.completion()
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        return ["world"]

    return server


READS = ["tools/list", "resources/list", "resources/templates/list", "resources/read"]
READS += ["prompts/list", "prompts/get", "completion/complete", "server/discover"]


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
@pytest.mark.parametrize("method", READS)
async def test_a_method_without_effects_is_sent_again(method: str) -> None:
    assert method in EFFECTLESS_METHODS and "tools/call" not in EFFECTLESS_METHODS
    dropper = Dropper(reads_server().http_app(), method, drops=0)
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(dropper, protocol_version=REV) as client:
            dropper.ids.clear()  # connecting sent server/discover: not counted, not dropped
            dropper.drops = 1
            result = await _read(client, method)
            assert isinstance(result, dict)
    assert len(dropper.ids) == 2 and dropper.ids[0] != dropper.ids[1]


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
@pytest.mark.parametrize("max_reissues", [None, 0, 1], ids=["default", "0", "1"])
async def test_sending_again_is_bounded_by_max_reissues(max_reissues: int | None) -> None:
    dropper = Dropper(hinted_server().http_app(), "tools/call", drops=100)
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(dropper, protocol_version=REV) as client:
            assert client.session.max_reissues == 2  # "at most twice" by default
            if max_reissues is not None:
                client.session.max_reissues = max_reissues
            bound = client.session.max_reissues
            # The answer never came through: a transport failure (issue 33), not an answer.
            with pytest.raises(TransportError, match="closed the response stream") as caught:
                await client.call_tool("look", {"text": "lost"})
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


class Gateway(Dropper):
    """A gateway that loses the server under the first POSTs of ``method``: the real app
    runs each (its answer goes nowhere), and the client gets ``status`` with a text body,
    as nginx answers when its upstream dies mid-request."""

    def __init__(self, app: Any, method: str, drops: int, status: int) -> None:
        super().__init__(app, method, drops)
        self.status = status
        self.scope: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.scope = scope
        await super().__call__(scope, receive, send)

    async def _drop(self, msg: dict[str, Any], send: Any) -> None:
        async def nowhere(message: Any) -> None:
            pass

        await self.app(self.scope, replaying(json.dumps(msg).encode(), _nothing), nowhere)
        headers = [(b"content-type", b"text/plain")]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"upstream lost", "more_body": False})


async def _nothing() -> dict[str, Any]:
    return {"type": "http.disconnect"}


def counted_server(runs: list[str]) -> Server:
    """``put`` (idempotent) and ``wipe`` (destructive), each noting every run of its body."""
    server = Server("counted")

    @server.tool(annotations=ToolAnnotations(idempotent_hint=True, read_only_hint=False))
    def put(text: str) -> str:
        """Set something: twice is the same as once."""
        runs.append(f"put {text}")
        return text

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def wipe(text: str) -> str:
        """Change something for good."""
        runs.append(f"wipe {text}")
        return text

    return server


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
@pytest.mark.parametrize("status", [502, 504])
async def test_a_gateway_that_lost_the_server_is_a_lost_answer(status: int) -> None:
    # 502/504 from a load balancer whose worker died mid-call: the server may have acted.
    runs: list[str] = []
    gateway = Gateway(counted_server(runs).http_app(), "tools/call", drops=1, status=status)
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(gateway, protocol_version=REV) as client:
            await client.list_tools()
            # Known safe: sent again, and answered.
            assert (await client.call_tool("put", {"text": "a"})).content[0].text == "a"  # type: ignore[union-attr]
            assert runs == ["put a", "put a"] and len(gateway.ids) == 2
            gateway.ids.clear()
            runs.clear()
            # Not known safe: told it may have taken effect (it did), not sent again.
            with pytest.raises(TransportError) as caught:
                await client.call_tool("wipe", {"text": "b"})
            said = str(caught.value)
            assert f"HTTP {status}" in said and "upstream lost" in said
            assert "may or may not have taken effect" in said and "not sent again" in said
            assert runs == ["wipe b"] and len(gateway.ids) == 1


@pytest.mark.req("HTTP-2026-CLIENT-REISSUE-LOST-REQUEST")
@pytest.mark.parametrize(
    ("status", "rev"),
    [(503, REV), (500, REV), (502, "2025-11-25")],
    ids=["503", "500", "502-handshake-era"],
)
async def test_other_error_statuses_are_answers_not_lost_answers(status: int, rev: str) -> None:
    # A 503/500 is the server's (or a gateway's) refusal; a 2025 request has no re-sending.
    runs: list[str] = []
    gateway = Gateway(counted_server(runs).http_app(), "tools/call", drops=1, status=status)
    with anyio.fail_after(TIMEOUT):
        async with asgi_client(gateway, protocol_version=rev) as client:
            await client.list_tools()
            with pytest.raises(ProtocolError, match=f"HTTP {status}: upstream lost"):
                await client.call_tool("put", {"text": "a"})
            assert runs == ["put a"] and len(gateway.ids) == 1
