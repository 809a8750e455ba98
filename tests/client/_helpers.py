"""Servers for the client tests: handler tables on the session layer, over a memory pair;
a small :class:`mcpkit.Server`; and the pieces of the ASGI apps the tests put in front of a
real app over Streamable HTTP (in process, through :class:`~mcpkit.lowlevel.ASGIClient`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
from tests._schema import WireRecorder

from mcpkit import Client, Server, http
from mcpkit._session import ServerSession
from mcpkit._transports import memory_pair
from mcpkit.lowlevel import ASGIClient

#: Where the in-process HTTP servers of these tests answer.
URL = "http://127.0.0.1/mcp"

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


def echo_server(name: str = "echo") -> Server:
    """A real server with one tool, ``echo(text)``."""
    server = Server(name)

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server


@contextlib.asynccontextmanager
async def asgi_client(app: Any, *, lifespan: bool = True, **kw: Any) -> AsyncIterator[Client]:
    """A :class:`Client` (``kw``: its keywords) of the ASGI ``app`` at :data:`URL`, over
    Streamable HTTP in this process."""
    async with (
        ASGIClient(app, lifespan=lifespan) as asgi,
        Client(http(URL, http_client=asgi), **kw) as client,
    ):
        yield client


async def respond(send: Any, status: int, body: bytes = b"", ctype: str = "text/plain") -> None:
    """A whole ASGI HTTP response."""
    headers = [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
