"""The ``subscriptions/listen`` stream of a stateless Client over stdio: its acknowledgement
read and checked, and its notifications correlated by subscription id.

* The acknowledgement says what the server agreed to send: kept on the subscription
  (``client.subscription``: ``acknowledged``, ``refused``), what it left out logged.
* On stdio every stream shares the channel: a notification tagged with another
  subscription's id (a foreign one, the stream being replaced) is not delivered.

A scripted server (tests/client/servers/eras_2026.py) interleaves foreign notifications; a
real mcpkit server (examples/everything.py) shows the same over its own streams, and one
under uvicorn to a SyncClient.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.client._helpers import echo_server
from tests.http._http_helpers import built_off_loop, running

from mcpkit import Client, Subscription, SyncClient, stdio
from mcpkit._client._eras import ERAS, endpoint_key
from mcpkit.types import ResourceUpdatedNotificationParams

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
SCRIPT = str(HERE / "servers" / "eras_2026.py")
EVERYTHING = str(HERE.parents[1] / "examples" / "everything.py")
#: Bound on every wait of these tests.
TIMEOUT = 20.0


class Updates:
    """The resource updates delivered, and a wait for the n-th one."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self._changed = anyio.Event()

    async def on_update(self, params: ResourceUpdatedNotificationParams) -> None:
        self.uris.append(params.uri)
        self._changed.set()
        self._changed = anyio.Event()

    async def count(self, n: int) -> list[str]:
        while len(self.uris) < n:
            await self._changed.wait()
        return self.uris


@pytest.mark.req(
    "SUBSCRIPTIONS-2026-STDIO-CORRELATE",
    "STDIO-2026-CLIENT-CORRELATE-LISTEN",
    "SUBSCRIPTIONS-2026-CLIENT-CHECK-ACK",
)
async def test_stdio_notifications_are_correlated_and_the_ack_is_checked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.client")
    lines: list[str] = []
    updates = Updates()
    target = stdio([sys.executable, SCRIPT, "listen"], on_stderr=lines.append)
    with anyio.fail_after(TIMEOUT):
        async with Client(target, resource_updated_handler=updates.on_update) as client:
            assert client.session.stateless
            assert client.subscription is None
            await client.subscribe("test://one")
            first = client.subscription
            assert first is not None and first.id is not None
            assert first.acknowledged == {"resourceSubscriptions": ["test://one"]}
            assert first.refused == {}
            # The updates tagged with subscription 999 (before and after the
            # acknowledgement) are another stream's: only the stream's own arrived.
            assert await updates.count(1) == ["test://one"]

            await client.subscribe("test://two")
            second = client.subscription
            assert second is not None and second is not first
            assert second.id != first.id
            assert first.closed and not second.closed
            # The server agreed to only part of the filter: kept, told, and handled.
            assert second.requested == {"resourceSubscriptions": ["test://one", "test://two"]}
            assert second.acknowledged == {"resourceSubscriptions": ["test://two"]}
            assert second.refused == {"resourceSubscriptions": ["test://one"]}
            # The first stream's late update came before the second's own: dropped.
            assert await updates.count(2) == ["test://one", "test://two"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("left out: {'resourceSubscriptions': ['test://one']}" in w for w in warnings)
    # The replaced stream was cancelled by its id, as stdio asks.
    assert f"got notifications/cancelled {first.id}" in lines


@pytest.mark.req("SUBSCRIPTIONS-2026-STDIO-CORRELATE", "SUBSCRIPTIONS-2026-CLIENT-CHECK-ACK")
async def test_a_real_server_acknowledges_everything_and_only_the_current_stream_counts() -> None:
    updates = Updates()
    changes: list[str] = []
    changed = anyio.Event()

    async def on_change(kind: str) -> None:  # async: plain callbacks run in a thread
        changes.append(kind)
        changed.set()

    target = stdio(EVERYTHING, on_stderr=lambda line: None)
    with anyio.fail_after(TIMEOUT):
        async with Client(
            target, resource_updated_handler=updates.on_update, list_changed_handler=on_change
        ) as client:
            assert client.session.stateless
            opened = client.subscription  # list changes are wanted: listening from connect
            assert opened is not None and opened.refused == {}
            await client.subscribe("test://watched-resource")
            sub = client.subscription
            assert sub is not None and sub is not opened and opened.closed
            assert sub.acknowledged == sub.requested
            assert sub.requested["resourceSubscriptions"] == ["test://watched-resource"]
            await client.call_tool("update_watched_resource", {"text": "one"})
            assert await updates.count(1) == ["test://watched-resource"]

            await client.unsubscribe("test://watched-resource")
            assert client.subscription is not None
            assert "resourceSubscriptions" not in client.subscription.requested
            await client.call_tool("update_watched_resource", {"text": "two"})
            await client.call_tool("add_dynamic_tool", {"name": "late"})
            await changed.wait()
            # The list change came after the second update would have: none arrived.
            assert updates.uris == ["test://watched-resource"]
            assert changes[-1] == "tools"


async def test_listen_returns_the_subscription_and_a_handshake_client_has_none() -> None:
    def on_change(kind: str) -> None:
        pass

    with anyio.fail_after(TIMEOUT):
        async with Client(
            stdio(EVERYTHING, on_stderr=lambda line: None), list_changed_handler=on_change
        ) as client:
            sub = await client.listen()
            assert isinstance(sub, Subscription) and sub is client.subscription
            assert sub is not None and sub.acknowledged == sub.requested
            assert "Subscription(id=" in repr(sub)
        args: Any = {"protocol_version": "2025-11-25", "list_changed_handler": on_change}
        async with Client(stdio(EVERYTHING, on_stderr=lambda line: None), **args) as client:
            assert await client.listen() is None
            assert client.subscription is None


def test_a_sync_client_listens_and_forgets_the_era_as_client_does() -> None:
    app = built_off_loop(lambda: echo_server().http_app())
    with (
        running(app) as srv,
        SyncClient(srv.url, list_changed_handler=lambda kind: None) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        opened = client.subscription  # list changes are wanted: listening from connect
        sub = client.listen()
        assert isinstance(sub, Subscription) and sub is client.subscription
        assert opened is not None and opened.closed and not sub.closed
        assert sub.acknowledged == sub.requested == {"toolsListChanged": True}
        assert ERAS.get(endpoint_key(srv.url)) == "2026-07-28"
        SyncClient.clear_era_cache(srv.url)
        assert ERAS.get(endpoint_key(srv.url)) is None
