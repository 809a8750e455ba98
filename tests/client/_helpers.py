"""Servers for the client tests: handler tables on the session layer, over a memory pair."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
from tests._schema import WireRecorder

from mcpkit._session import ServerSession
from mcpkit._transports import memory_pair

ADD_TOOL = {
    "name": "add",
    "description": "Add two numbers.",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    },
    "outputSchema": {
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"],
    },
}


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


class Served:
    """A running session server and the recorder on the client's end of the wire."""

    def __init__(self, session: ServerSession, wire: WireRecorder) -> None:
        self.session = session
        self.wire = wire

    def sent_methods(self) -> list[str]:
        """Methods of the messages the client sent, in order."""
        return [m["method"] for m in self.wire.sent if isinstance(m, dict) and "method" in m]


@contextlib.asynccontextmanager
async def session_server(
    handlers: Mapping[str, Any],
    capabilities: Mapping[str, Any] | None = None,
    *,
    notification_handlers: Mapping[str, Any] | None = None,
    server_info: Mapping[str, Any] | None = None,
    instructions: str | None = None,
) -> AsyncIterator[Served]:
    """A :class:`ServerSession` over a memory pair; the client uses ``served.wire`` as target."""
    client_end, server_end = memory_pair()
    session = ServerSession(
        server_end,
        server_info=server_info or {"name": "test-server", "version": "0.1"},
        capabilities=capabilities if capabilities is not None else {"tools": {}},
        handlers=dict(handlers),
        notification_handlers=notification_handlers,
        instructions=instructions,
    )
    wire = WireRecorder(client_end, side="client")
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            try:
                yield Served(session, wire)
            finally:
                tg.cancel_scope.cancel()
    finally:
        await server_end.aclose()
        await client_end.aclose()
