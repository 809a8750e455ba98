"""Connect a ClientSession to a Server over a memory pair, with every message validated."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
from tests._schema import WireRecorder

from mcpkit import Server
from mcpkit._session import ClientSession
from mcpkit._transports import memory_pair


class Connected:
    """A connected client: the session, the recorder, and what the server sent unasked."""

    def __init__(self, client: ClientSession, recorder: WireRecorder) -> None:
        self.client = client
        self.recorder = recorder
        self.notifications: list[tuple[str, dict[str, Any] | None]] = []
        self.arrived = anyio.Event()
        #: Params of requests sent invalid on purpose: their violations are not reported.
        self.invalid: list[Any] = []

    async def bad_call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request that breaks the schema on purpose (bad-input tests)."""
        self.invalid.append(params)
        return await self.call(method, params)

    def is_deliberate(self, record: Any) -> bool:
        msg = record.message
        return (
            record.direction == "sent"
            and isinstance(msg, dict)
            and msg.get("params") in self.invalid
        )

    async def call(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        with anyio.fail_after(10):
            return await self.client.send_request(method, params, **kw)

    async def tool(self, name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> Any:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.call("tools/call", params, **kw)

    def of(self, method: str) -> list[dict[str, Any] | None]:
        return [p for m, p in self.notifications if m == method]

    async def wait_for(self, method: str, count: int = 1) -> list[dict[str, Any] | None]:
        with anyio.fail_after(5):
            while len(self.of(method)) < count:
                self.arrived = anyio.Event()
                await self.arrived.wait()
        return self.of(method)


@contextlib.asynccontextmanager
async def connect(
    server: Server,
    *,
    capabilities: Mapping[str, Any] | None = None,
    handlers: Mapping[str, Any] | None = None,
    protocol_version: str | None = None,
    check: bool = True,
) -> AsyncIterator[Connected]:
    client_end, server_end = memory_pair()
    recorder = WireRecorder(client_end, side="client")
    box: list[Connected] = []

    def listener(method: str) -> Any:
        async def on(params: dict[str, Any] | None) -> None:
            c = box[0]
            c.notifications.append((method, params))
            c.arrived.set()

        return on

    methods = [
        "notifications/message",
        "notifications/progress",
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/prompts/list_changed",
        "notifications/elicitation/complete",
    ]
    kw: dict[str, Any] = {}
    if protocol_version is not None:
        kw["protocol_version"] = protocol_version
    client = ClientSession(
        recorder,
        client_info={"name": "test-client", "version": "1.0"},
        capabilities=capabilities or {},
        handlers=handlers or {},
        notification_handlers={m: listener(m) for m in methods if m != "notifications/progress"},
        **kw,
    )
    try:
        async with anyio.create_task_group() as tg, server.running():
            session = server.create_session(server_end)
            tg.start_soon(session.run)
            async with client:
                conn = Connected(client, recorder)
                box.append(conn)
                with anyio.fail_after(10):
                    await client.initialize()
                    await session.wait_initialized()
                yield conn
            tg.cancel_scope.cancel()
    finally:
        await server_end.aclose()
        await client_end.aclose()
    if check:
        recorder.check(ignore=box[0].is_deliberate if box else None)


#: What a raw stdio client sends first: initialize (id 1) and notifications/initialized.
HANDSHAKE: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
