"""One Peer under both roles: what either side sends is adapted, checked and bounded the same way.

Before the Peer, each role had its own copy of send_request / notify / ping and they had
drifted: only the server's notify fitted params to an older revision, only the client's ping
was bounded. Each test here runs the same case on both roles, against a peer played by hand.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from tests.session._raw import Raw

from mcpkit import CapabilityError, RequestTimeout
from mcpkit._session import ClientSession, ServerSession
from mcpkit._session._peer import Peer
from mcpkit._transports import memory_pair

pytestmark = pytest.mark.anyio
INFO = {"name": "t", "version": "1"}
OLD = "2024-11-05"  # progress notifications had no `message` then


@asynccontextmanager
async def client_at(version: str) -> AsyncIterator[tuple[ClientSession, Raw]]:
    a, b = memory_pair()
    raw = Raw(b)
    async with ClientSession(a, client_info=INFO, protocol_version=version) as client:
        async with anyio.create_task_group() as tg:

            async def handshake() -> None:
                init = await raw.recv()
                result = {"protocolVersion": version, "capabilities": {}, "serverInfo": INFO}
                await raw.send({"jsonrpc": "2.0", "id": init["id"], "result": result})
                assert (await raw.recv())["method"] == "notifications/initialized"

            tg.start_soon(handshake)
            await client.initialize()
        try:
            yield client, raw
        finally:
            a.close()
            b.close()


@asynccontextmanager
async def server_at(version: str) -> AsyncIterator[tuple[ServerSession, Raw]]:
    a, b = memory_pair()
    raw = Raw(b)
    server = ServerSession(a, server_info=INFO, capabilities={}, handlers={})
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run)
        init = {"protocolVersion": version, "capabilities": {}, "clientInfo": INFO}
        await raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        assert (await raw.recv())["result"]["protocolVersion"] == version
        await raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        with anyio.fail_after(5):
            await server.wait_initialized()
        try:
            yield server, raw
        finally:
            a.close()
            b.close()
            tg.cancel_scope.cancel()


def _roles() -> Any:
    return pytest.mark.parametrize("role", ["client", "server"])


@asynccontextmanager
async def session_at(role: str, version: str) -> AsyncIterator[tuple[Any, Raw]]:
    opener = client_at if role == "client" else server_at
    async with opener(version) as pair:
        yield pair


@_roles()
async def test_both_roles_send_through_one_peer(role: str) -> None:
    async with session_at(role, OLD) as (session, _):
        assert isinstance(session.peer, Peer)
        assert session.engine is session.peer.engine
        assert session.protocol_version == OLD


@_roles()
async def test_notify_is_fitted_to_the_negotiated_revision(role: str) -> None:
    """2024-11-05 has no progress `message`: it is left out on the wire, by either side."""
    async with session_at(role, OLD) as (session, raw):
        params = {"progressToken": "t", "progress": 1, "message": "half"}
        await session.notify("notifications/progress", params)
        sent = await raw.recv()
        assert sent["method"] == "notifications/progress"
        assert sent["params"] == {"progressToken": "t", "progress": 1}
        assert params["message"] == "half"  # the caller's dict is not touched


@_roles()
async def test_ping_is_bounded_on_both_sides(role: str) -> None:
    async with session_at(role, "2025-11-25") as (session, raw):
        with anyio.fail_after(3), pytest.raises(RequestTimeout):
            await session.ping(timeout=0.2)
        assert (await raw.recv())["method"] == "ping"  # it was sent, and never answered


@_roles()
async def test_a_method_the_other_side_did_not_declare_is_refused_before_sending(
    role: str,
) -> None:
    method = "tools/list" if role == "client" else "sampling/createMessage"
    async with session_at(role, "2025-11-25") as (session, raw):
        other = "server" if role == "client" else "client"
        with pytest.raises(CapabilityError, match=f"the {other} did not declare"):
            await session.send_request(method, {})
        await session.notify("notifications/marker")
        assert (await raw.recv())["method"] == "notifications/marker"  # nothing went before


async def test_notification_handlers_are_registered_through_the_public_seam() -> None:
    got: list[Any] = []

    async def on_roots(params: dict[str, Any] | None) -> None:
        got.append(params)

    async with server_at("2025-11-25") as (server, raw):
        server.set_notification_handler("notifications/roots/list_changed", on_roots)
        await raw.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        await raw.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
        assert (await raw.recv())["id"] == 7  # notifications run in order, before the ping
        assert got == [None]
