"""Which era a Client speaks: server/discover first, initialize when the server is older."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from tests._schema import WireRecorder

from mcpkit import Client, VersionError
from mcpkit._session import ServerSession
from mcpkit._transports import memory_pair
from mcpkit.types._revisions import HANDSHAKE_PROTOCOL_VERSIONS

pytestmark = pytest.mark.anyio


async def _tools(ctx: Any, params: Any) -> Any:
    return {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}


@contextlib.asynccontextmanager
async def serving(versions: tuple[str, ...] | None) -> AsyncIterator[WireRecorder]:
    """A session server speaking ``versions`` (None: every revision mcpkit speaks)."""
    client_end, server_end = memory_pair()
    kw: dict[str, Any] = {} if versions is None else {"supported_versions": versions}
    session = ServerSession(
        server_end,
        server_info={"name": "eras", "version": "1"},
        capabilities={"tools": {}},
        handlers={"tools/list": _tools},
        **kw,
    )
    wire = WireRecorder(client_end, side="client")
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        try:
            yield wire
        finally:
            tg.cancel_scope.cancel()
            await server_end.aclose()
            await client_end.aclose()


def methods(wire: WireRecorder) -> list[str]:
    return [m["method"] for m in wire.sent if isinstance(m, dict) and "method" in m]


async def test_a_modern_server_is_spoken_to_without_a_handshake() -> None:
    with anyio.fail_after(10):
        async with serving(None) as wire:
            async with Client(wire) as client:
                assert client.protocol_version == "2026-07-28"
                assert client.server_info.name == "eras"
                assert [t.name for t in await client.list_tools()] == ["t"]
            assert methods(wire) == ["server/discover", "tools/list"]
            assert wire.check() == "2026-07-28"


async def test_a_handshake_only_server_gets_initialize_after_the_probe() -> None:
    with anyio.fail_after(10):
        async with serving(HANDSHAKE_PROTOCOL_VERSIONS) as wire:
            async with Client(wire) as client:
                assert client.protocol_version == "2025-11-25"
                assert [t.name for t in await client.list_tools()] == ["t"]
            # The probe was refused (UnsupportedProtocolVersion naming only handshake
            # revisions): the client fell back, on the same connection.
            assert methods(wire) == [
                "server/discover",
                "initialize",
                "notifications/initialized",
                "tools/list",
            ]


async def test_forcing_the_stateless_revision_fails_on_a_handshake_only_server() -> None:
    with anyio.fail_after(10):
        async with serving(HANDSHAKE_PROTOCOL_VERSIONS) as wire:
            with pytest.raises(VersionError, match="2026-07-28"):
                async with Client(wire, protocol_version="2026-07-28"):
                    pass


async def test_forcing_a_handshake_revision_skips_the_probe() -> None:
    with anyio.fail_after(10):
        async with serving(None) as wire:
            async with Client(wire, protocol_version="2025-06-18") as client:
                assert client.protocol_version == "2025-06-18"
            assert methods(wire)[:2] == ["initialize", "notifications/initialized"]
