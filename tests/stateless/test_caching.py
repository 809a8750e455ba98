"""Caching hints (2026-07-28, caching.mdx), and the deterministic order of ``tools/list``.

Cacheable results (discovery, the lists, resource reads) carry ``ttlMs`` and ``cacheScope``:
the server's :class:`StatelessSettings` by default, a resource's own when it set some. Other
results, and the handshake revisions, carry none.
"""

from __future__ import annotations

from typing import Any

import pytest
from _stateless_helpers import URL, post, request

from mcpkit import Server, StatelessSettings
from mcpkit.lowlevel import ASGIClient, ClientSession, open_streamable_http

pytestmark = pytest.mark.anyio

HINTS = ("ttlMs", "cacheScope")


def _server(settings: StatelessSettings | None = None, page_size: int | None = None) -> Server:
    server = Server("cache", stateless=settings, page_size=page_size)
    # Registered out of name order, on purpose.
    for name in ("zeta", "alpha", "mid"):
        server.add_tool(lambda: "x", name=name, description=f"Tool {name}.")

    @server.prompt()
    def hello() -> str:
        """Say hello."""
        return "hello"

    server.add_resource("test://plain", "plain", mime_type="text/plain")
    server.add_resource(
        "test://stable",
        "stable",
        mime_type="text/plain",
        cache_ttl_ms=3_600_000,
        cache_scope="public",
    )
    server.add_resource("test://short", "short", mime_type="text/plain", cache_ttl_ms=5_000)

    @server.resource(
        "test://user/{id}", mime_type="text/plain", cache_scope="private", cache_ttl_ms=60_000
    )
    def user(id: str) -> str:
        """Someone's data."""
        return f"user {id}"

    return server


def _hints(result: dict[str, Any]) -> tuple[Any, Any]:
    return result.get("ttlMs"), result.get("cacheScope")


async def test_cacheable_results_carry_the_servers_default_hints() -> None:
    async with ASGIClient(_server().http_app()) as http:
        for method in (
            "server/discover",
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
        ):
            assert _hints((await post(http, request(method))).result) == (0, "private"), method
        read = (await post(http, request("resources/read", {"uri": "test://plain"}))).result
        assert _hints(read) == (0, "private")


async def test_settings_set_the_default_hints() -> None:
    settings = StatelessSettings(cache_ttl_ms=60_000, cache_scope="public")
    async with ASGIClient(_server(settings).http_app()) as http:
        listed = (await post(http, request("tools/list"))).result
        read = (await post(http, request("resources/read", {"uri": "test://plain"}))).result
    assert _hints(listed) == (60_000, "public")
    assert _hints(read) == (60_000, "public")


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("test://stable", (3_600_000, "public")),
        ("test://short", (5_000, "public")),  # scope left to the server's settings
        ("test://user/7", (60_000, "private")),  # a template's hints apply to its reads
    ],
)
async def test_a_resource_sets_the_hints_of_its_reads(uri: str, expected: tuple[Any, Any]) -> None:
    settings = StatelessSettings(cache_scope="public")
    async with ASGIClient(_server(settings).http_app()) as http:
        read = (await post(http, request("resources/read", {"uri": uri}))).result
    assert _hints(read) == expected


async def test_results_that_are_not_cacheable_carry_no_hints() -> None:
    async with ASGIClient(_server().http_app()) as http:
        called = (await post(http, request("tools/call", {"name": "alpha"}))).result
        prompt = (await post(http, request("prompts/get", {"name": "hello"}))).result
    for result in (called, prompt):
        assert not set(HINTS) & set(result)


def test_hint_values_are_checked() -> None:
    server = Server("bad-hints")
    with pytest.raises(ValueError, match="cache_ttl_ms"):
        server.add_resource("test://a", "a", cache_ttl_ms=-1)
    with pytest.raises(ValueError, match="cache_scope"):
        server.add_resource("test://a", "a", cache_scope="shared")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cache_scope"):
        StatelessSettings(cache_scope="everyone")
    with pytest.raises(ValueError, match="cache_ttl_ms"):
        StatelessSettings(cache_ttl_ms=-5)


async def test_removing_a_resource_forgets_its_hints() -> None:
    server = _server()
    server.remove_resource("test://stable")
    server.add_resource("test://stable", "again", mime_type="text/plain")
    async with ASGIClient(server.http_app()) as http:
        read = (await post(http, request("resources/read", {"uri": "test://stable"}))).result
    assert _hints(read) == (0, "private")


async def test_tools_are_listed_in_a_deterministic_order() -> None:
    server = _server(page_size=2)
    async with ASGIClient(server.http_app()) as http:

        async def listed() -> list[str]:
            first = (await post(http, request("tools/list"))).result
            rest = (await post(http, request("tools/list", {"cursor": first["nextCursor"]}))).result
            return [t["name"] for t in first["tools"] + rest["tools"]]

        stateless = [await listed(), await listed()]
        async with (
            open_streamable_http(URL, http_client=http) as transport,
            ClientSession(transport, client_info={"name": "old", "version": "1"}) as old,
        ):
            await old.initialize()
            legacy = await old.send_request("tools/list")
            legacy_rest = await old.send_request("tools/list", {"cursor": legacy["nextCursor"]})
            read = await old.send_request("resources/read", {"uri": "test://stable"})
    # Registration order, the same on every request and in both revisions (tools.mdx: the
    # same ordering while the set is unchanged; and the author's choice, which models weigh).
    assert stateless == [["zeta", "alpha", "mid"]] * 2
    assert [t["name"] for t in legacy["tools"] + legacy_rest["tools"]] == ["zeta", "alpha", "mid"]
    # The handshake revisions have no caching hints.
    assert not set(HINTS) & set(legacy) and not set(HINTS) & set(read)
