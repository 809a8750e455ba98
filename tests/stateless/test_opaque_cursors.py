"""List cursors are opaque, in process over Streamable HTTP: a position sealed with the
server's key, so a client that computes one from the page size it saw (or edits one) is
refused with -32602, and our client follows them only verbatim.

Workers sharing the server's key (``MCPKIT_STATE_KEY``, ``StatelessSettings.state_key``,
or Redis) accept each other's cursors; a server with another key does not.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio
import pytest
from _stateless_helpers import TIMEOUT, URL, post, request
from tests.http._http_helpers import Recorder

from mcpkit import Client, Server, StatelessSettings, http
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

NAMES = [f"tool{i}" for i in range(5)]


def _server(key: bytes | None = None) -> Server:
    server = Server("paged", page_size=2, stateless=StatelessSettings(state_key=key))
    for name in NAMES:

        def fn(text: str) -> str:
            return text

        server.tool(name=name, description=f"{name}.")(fn)

    @server.prompt()
    def hello() -> str:
        """Say hello."""
        return "hello"

    return server


async def _pages(http_client: ASGIClient) -> tuple[list[str], list[str]]:
    """Walk ``tools/list`` by its cursors: (tool names, cursors issued)."""
    names: list[str] = []
    cursors: list[str] = []
    params: dict[str, Any] = {}
    while True:
        result = (await post(http_client, request("tools/list", params))).result
        names += [t["name"] for t in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            return names, cursors
        cursors.append(cursor)
        params = {"cursor": cursor}


def _computed(offset: int) -> list[str]:
    """Cursors a client could make up from what it saw: offsets, plain or encoded."""
    return [
        str(offset),
        base64.urlsafe_b64encode(f"tools:{offset}".encode()).decode(),
        base64.b64encode(f'{{"page": {offset // 2}}}'.encode()).decode(),
    ]


@pytest.mark.req("PAGINATION-CLIENT-OPAQUE-CURSOR")
async def test_a_computed_or_edited_cursor_is_invalid_params() -> None:
    async with ASGIClient(_server().http_app()) as http_client:
        names, cursors = await _pages(http_client)
        assert names == NAMES and len(cursors) == 2
        # Not the offset in any readable form.
        for cursor in cursors:
            assert cursor not in ("2", "4") and "tools:" not in cursor
        forged = [*_computed(2), *_computed(4)]
        # One character of a real cursor changed (inside its tag: the last character
        # may hold only padding bits).
        real = cursors[0]
        forged.append(real[:-5] + ("A" if real[-5] != "A" else "B") + real[-4:])
        for cursor in forged:
            answer = await post(http_client, request("tools/list", {"cursor": cursor}, id=9))
            assert answer.error["code"] == -32602, cursor
            assert answer.response["id"] == 9
        # A cursor of one list is no cursor of another.
        other = await post(http_client, request("prompts/list", {"cursor": real}))
        assert other.error["code"] == -32602


@pytest.mark.req("PAGINATION-CLIENT-OPAQUE-CURSOR")
async def test_our_client_sends_back_the_cursors_it_was_given() -> None:
    rec = Recorder(_server().http_app())
    with anyio.fail_after(TIMEOUT):
        async with (
            ASGIClient(rec) as asgi,
            Client(http(URL, http_client=asgi), protocol_version="2026-07-28") as client,
        ):
            assert [t.name for t in await client.list_tools()] == NAMES
            page = await client.list_tools_page()
            assert page.next_cursor is not None
            second = await client.list_tools_page(page.next_cursor)
            assert [t.name for t in second.tools] == NAMES[2:4]
    sent = [b for b in rec.bodies() if b.get("method") == "tools/list"]
    asked = [b["params"].get("cursor") for b in sent]
    # Every cursor the client sent is one the server issued, unchanged.
    assert asked.count(None) == 2 and len(asked) == 5
    assert asked[1] == asked[4] == page.next_cursor
    assert all(c is None or (isinstance(c, str) and c != "2") for c in asked)


async def test_workers_sharing_the_key_accept_each_others_cursors() -> None:
    key = b"k" * 32
    async with (
        ASGIClient(_server(key).http_app()) as one,
        ASGIClient(_server(key).http_app()) as two,
        ASGIClient(_server(b"x" * 32).http_app()) as stranger,
    ):
        cursor = (await post(one, request("tools/list"))).result["nextCursor"]
        page = (await post(two, request("tools/list", {"cursor": cursor}))).result
        assert [t["name"] for t in page["tools"]] == NAMES[2:4]
        refused = await post(stranger, request("tools/list", {"cursor": cursor}))
        assert refused.error["code"] == -32602
