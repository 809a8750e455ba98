"""The budgets of 2026-07-28 requests: calls and listen streams counted apart, each bounded
app-wide (503 past it) and per verified principal (429 past it), with Retry-After."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import anyio
import pytest
from _stateless_helpers import TIMEOUT, headers_for, post, request, stream

from mcpkit import Server
from mcpkit._app._budget import Budget
from mcpkit.auth import Principal, ResourceServer, StaticTokenVerifier
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

LISTEN = {"notifications": {"toolsListChanged": True}}


def _server() -> Server:
    server = Server("budgets")

    @server.tool()
    def echo(text: str) -> str:
        """Says it back."""
        return text

    return server


async def test_listen_streams_past_their_budget_are_refused_and_calls_go_on() -> None:
    app = _server().http_app(max_listen_streams=3)
    async with ASGIClient(app) as http, AsyncExitStack() as streams:
        for i in range(3):
            s = await streams.enter_async_context(
                stream(http, request("subscriptions/listen", LISTEN, id=i))
            )
            ack = await s.next()
            assert ack["method"] == "notifications/subscriptions/acknowledged"
        refused = await post(http, request("subscriptions/listen", LISTEN, id=9), validate=False)
        assert refused.status == 503
        assert "Too many subscriptions/listen streams on this server" in refused.error["message"]
        # A listen stream holds no call slot: calls are served all the same.
        call = request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id=10)
        answer = await post(http, call)
        assert answer.result["content"][0]["text"] == "hi"
    # Closed streams give their budget back.
    async with ASGIClient(app) as http:
        with anyio.fail_after(TIMEOUT):
            async with stream(http, request("subscriptions/listen", LISTEN, id=11)) as s:
                assert (await s.next())["method"] == "notifications/subscriptions/acknowledged"
    assert app.stateless_era.listens.held == 0


def _holding(server: Server) -> tuple[anyio.Event, anyio.Event]:
    """Give ``server`` a tool ``hold`` that sets the first event and waits for the second."""
    entered, release = anyio.Event(), anyio.Event()

    @server.tool()
    async def hold() -> str:
        """Waits for the test."""
        entered.set()
        await release.wait()
        return "done"

    return entered, release


def _authorized() -> Server:
    """The server, checking the bearer tokens ``a`` and ``b`` (principals a and b)."""
    verifier = StaticTokenVerifier(
        {t: Principal(subject=t, scopes=frozenset({"mcp"})) for t in ("a", "b")}
    )
    server = _server()
    server.auth = ResourceServer(verifier, resource="http://127.0.0.1/mcp", scopes=["mcp"])
    return server


async def test_calls_past_their_budget_are_refused_with_retry_after() -> None:
    server = _server()
    entered, release = _holding(server)
    app = server.http_app(max_stateless_requests=1, json_response=True)
    async with ASGIClient(app) as http, anyio.create_task_group() as tg:
        answers: list[int] = []

        async def first() -> None:
            got = await post(http, request("tools/call", {"name": "hold"}, id=1))
            answers.append(got.status)

        tg.start_soon(first)
        with anyio.fail_after(TIMEOUT):
            await entered.wait()
        resp = await http.post(
            "http://127.0.0.1/mcp",
            content=b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":'
            b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
            b'"io.modelcontextprotocol/clientCapabilities":{}}}}',
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/list",
            },
        )
        assert resp.status_code == 503
        assert resp.headers.get("retry-after") == "1"
        await resp.aread()
        release.set()
    assert answers == [200]
    assert app.stateless_era.calls.held == 0


def test_a_budget_bounds_each_key_and_the_whole() -> None:
    budget = Budget(total=3, per_key=2)
    assert budget.enter("alice") is None
    assert budget.enter("alice") is None
    assert budget.enter("alice") == "key"  # alice holds her share
    assert budget.enter(None) is None  # no identity: the app-wide bound only
    assert budget.enter("bob") == "total"
    budget.leave("alice")
    assert budget.held_by("alice") == 1
    assert budget.enter("bob") is None
    for key in ("alice", None, "bob"):
        budget.leave(key)
    assert budget.held == 0 and budget.held_by("alice") == 0


def test_a_budget_holds_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Budget(total=0, per_key=None)


async def test_closing_the_app_ends_each_listen_stream_with_its_result() -> None:
    app = _server().http_app()
    async with ASGIClient(app) as http:
        listen = request("subscriptions/listen", LISTEN, id="sub-1")
        async with stream(http, listen) as s:
            ack = await s.next()
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            await app.aclose()
            final = await s.next()
            # The completion result, with the client's own id (nothing renumbered).
            assert final["id"] == "sub-1"
            assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"
    assert app.stateless_era.listens.held == 0


async def test_a_principal_holds_its_share_of_listen_streams_and_no_more() -> None:
    app = _authorized().http_app(max_listen_streams_per_principal=2)

    def listen(rid: int, token: str) -> tuple[dict[str, Any], dict[str, str]]:
        msg = request("subscriptions/listen", LISTEN, id=rid)
        return msg, headers_for(msg, authorization=f"Bearer {token}")

    async with ASGIClient(app) as http, AsyncExitStack() as streams:
        for i in range(2):
            s = await streams.enter_async_context(stream(http, *listen(i, "a")))
            assert (await s.next())["method"] == "notifications/subscriptions/acknowledged"
        refused = await post(http, *listen(9, "a"), validate=False)
        assert refused.status == 429
        assert "of this caller" in refused.error["message"]
        # Another principal has a share of its own.
        async with stream(http, *listen(10, "b")) as other:
            assert (await other.next())["method"] == "notifications/subscriptions/acknowledged"
        assert app.stateless_era.listens.held_by(Principal(subject="a").key) == 2


async def test_a_principal_holds_its_share_of_calls_and_no_more() -> None:
    server = _authorized()
    entered, release = _holding(server)
    app = server.http_app(max_stateless_requests_per_principal=1, json_response=True)

    def call(rid: int, name: str, token: str) -> tuple[dict[str, Any], dict[str, str]]:
        arguments = {"text": "x"} if name == "echo" else {}  # hold() takes none
        msg = request("tools/call", {"name": name, "arguments": arguments}, id=rid)
        return msg, headers_for(msg, authorization=f"Bearer {token}")

    async with ASGIClient(app) as http, anyio.create_task_group() as tg:
        held: list[int] = []

        async def first() -> None:
            held.append((await post(http, *call(1, "hold", "a"))).status)

        tg.start_soon(first)
        with anyio.fail_after(TIMEOUT):
            await entered.wait()
        refused = await post(http, *call(2, "echo", "a"), validate=False)
        assert refused.status == 429
        assert refused.error["message"] == "Too many requests in flight of this caller; retry later"
        assert (await post(http, *call(3, "echo", "b"))).result["content"][0]["text"] == "x"
        release.set()
    assert held == [200]
