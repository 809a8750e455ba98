"""The ASGI lifespan of both HTTP apps, one implementation: a failure is reported as the
startup's or the shutdown's, as it happened (the legacy app called every failure a startup's)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpkit import Server, create_sse_app

pytestmark = pytest.mark.anyio


def _server(fail_at: str | None) -> Server:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[None]:
        if fail_at == "startup":
            raise RuntimeError("no database")
        yield
        if fail_at == "shutdown":
            raise RuntimeError("flush failed")

    return Server("life", lifespan=lifespan)


async def _drive(app: Any) -> list[str]:
    """Run the lifespan protocol as an ASGI server does: startup, then shutdown."""
    to_app_send, to_app = anyio.create_memory_object_stream[dict[str, Any]](4)
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])
        if message["type"] == "lifespan.startup.complete":
            await to_app_send.send({"type": "lifespan.shutdown"})

    async with to_app_send, to_app:
        await to_app_send.send({"type": "lifespan.startup"})
        with anyio.fail_after(10):
            await app({"type": "lifespan", "asgi": {"version": "3.0"}}, to_app.receive, send)
    return sent


APPS: dict[str, Callable[[Server], Any]] = {
    "streamable": lambda server: server.http_app(),
    "legacy": lambda server: create_sse_app(server),
}


@pytest.mark.parametrize("kind", list(APPS))
@pytest.mark.parametrize(
    ("fail_at", "expected"),
    [
        (None, ["lifespan.startup.complete", "lifespan.shutdown.complete"]),
        ("startup", ["lifespan.startup.failed"]),
        ("shutdown", ["lifespan.startup.complete", "lifespan.shutdown.failed"]),
    ],
)
async def test_the_lifespan_reports_what_happened(
    kind: str, fail_at: str | None, expected: list[str]
) -> None:
    assert await _drive(APPS[kind](_server(fail_at))) == expected
