"""A server with two third-party extensions, for the seam tests (``mcpkit run`` serves it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit import Extension, MissingRequiredClientCapability, Server
from mcpkit.lowlevel import RequestContext


class Clock(Extension):
    """Declared in both eras; its answers are cacheable."""

    id = "com.example/clock"
    cacheable = frozenset({"clock/now"})

    def settings(self) -> dict[str, Any]:
        return {"resolution": "seconds"}

    def methods(self) -> Mapping[str, Any]:
        return {"clock/now": self.now}

    async def now(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        return {"epoch": 1_700_000_000}


class Alarm(Extension):
    """Stateless requests only, and only for clients declaring it."""

    id = "com.example/alarm"
    handshake = False

    def methods(self) -> Mapping[str, Any]:
        return {"alarm/set": self.set}

    async def set(self, rc: RequestContext, params: dict[str, Any] | None) -> Any:
        assert rc.negotiated is not None
        if self.id not in rc.negotiated.peer_capabilities.get("extensions", {}):
            raise MissingRequiredClientCapability(
                message="alarm/set needs com.example/alarm",
                data={"requiredCapabilities": {"extensions": {self.id: {}}}},
            )
        return {"set": (params or {}).get("at")}


server = Server("clock", extensions=[Clock(), Alarm()])


@server.tool()
def ping() -> str:
    """A tool, so the server has one."""
    return "pong"
