"""The hand-played peer of the session tests: raw JSON-RPC over a memory pair."""

from __future__ import annotations

from typing import Any

import anyio
import orjson

from mcpkit._transports._memory import MemoryTransport


class Raw:
    """Send messages; read what the side under test sent (bounded)."""

    def __init__(self, end: MemoryTransport) -> None:
        self.end = end

    async def send(self, msg: dict[str, Any]) -> None:
        await self.end.send(msg)

    async def recv(self, timeout: float = 5) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            data = await self.end.receive()
        assert isinstance(data, bytes)
        msg: dict[str, Any] = orjson.loads(data)
        return msg
