"""Shared helpers of the task tests: a task-capable Server and a validated Client on it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
from tests._schema import WireRecorder

from mcpkit import Client, Context, ProtocolError, Server
from mcpkit._transports import memory_pair


@contextlib.asynccontextmanager
async def served(
    server: Server, ignore: Any = None, wrap: Any = None, **client_kw: Any
) -> AsyncIterator[tuple[Client, WireRecorder]]:
    """A Client talking to ``server`` (served by ``Server.serve``) through a WireRecorder."""
    client_end, server_end = memory_pair()
    recorder = WireRecorder(client_end, side="client")
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, server_end)
            transport = wrap(recorder) if wrap is not None else recorder
            # Tasks are a 2025-11-25 core feature (2026-07-28 moved them to an extension).
            client_kw.setdefault("protocol_version", "2025-11-25")
            async with Client(transport, **client_kw) as client:
                yield client, recorder
            tg.cancel_scope.cancel()
    finally:
        await client_end.aclose()
        await server_end.aclose()
    recorder.check(ignore=ignore)


def make_server(**kw: Any) -> tuple[Server, dict[str, Any]]:
    server = Server("tasks-test", task_poll_interval=20, **kw)
    state: dict[str, Any] = {
        "gate": anyio.Event(),
        "started": anyio.Event(),
        "stopped": anyio.Event(),
    }

    @server.tool(task_support="optional")
    async def job(n: int, ctx: Context) -> str:
        """Waits for the gate, reporting progress."""
        await ctx.report_progress(1, 3)
        await ctx.info("job started")
        state["started"].set()
        try:
            await state["gate"].wait()
        except BaseException:
            state["stopped"].set()
            raise
        await ctx.report_progress(2, 3)
        return f"job {n} done"

    @server.tool(task_support="required")
    def must() -> str:
        return "ok"

    @server.tool(task_support="optional")
    def broken() -> str:
        raise RuntimeError("boom")

    @server.tool(task_support="optional")
    def rpc_error() -> str:
        raise ProtocolError(-32050, "custom failure", {"why": "test"})

    @server.tool()
    def plain() -> str:
        return "plain"

    @server.tool(task_support="optional")
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Proceed?", {"type": "object", "properties": {}})
        return f"answer: {answer.action}"

    return server, state


class SendSpy:
    """A transport wrapper that sets ``events[method]`` when the client sends ``method``."""

    def __init__(self, inner: Any, *methods: str) -> None:
        self.inner = inner
        self.events = {m: anyio.Event() for m in methods}

    async def send(self, message: Any, /, *, related_request_id: Any = None) -> None:
        await self.inner.send(message, related_request_id=related_request_id)
        if isinstance(message, dict) and message.get("method") in self.events:
            self.events[message["method"]].set()

    async def receive(self) -> Any:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()
