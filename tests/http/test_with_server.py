"""``mcpkit.Server`` served over Streamable HTTP, with our client (and the official one)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from _http_helpers import CLIENT_INFO, running

from mcpkit import Context, Server
from mcpkit._app import close_sse_stream, create_http_app
from mcpkit._http import open_streamable_http
from mcpkit._session import ClientSession

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


def make_server(events: list[str]) -> Server:
    @asynccontextmanager
    async def lifespan(server: Server) -> Any:
        events.append("start")
        yield {"greeting": "hello from the lifespan"}
        events.append("stop")

    server = Server("http-server", lifespan=lifespan)

    @server.tool()
    def greet() -> str:
        """The lifespan's greeting."""
        return str(server.lifespan_state["greeting"])

    @server.tool()
    async def steps(ctx: Context, n: int = 3) -> str:
        """Log and report progress n times."""
        for i in range(n):
            await ctx.info(f"step {i}")
            await ctx.report_progress(i + 1, n)
        return "done"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Sample the client's model."""
        r = await ctx.sample("say hi", max_tokens=5)
        return str(r.content.text)  # type: ignore[union-attr]

    @server.tool()
    async def reconnect(ctx: Context) -> str:
        """Close this call's SSE connection; the client resumes."""
        await ctx.info("before")
        await close_sse_stream(ctx.request_context, retry_ms=50)
        await anyio.sleep(0.1)
        await ctx.info("after")
        return "resumed"

    return server


@pytest.mark.parametrize("json_response", [False, True])
@pytest.mark.parametrize("sessionless", [False, True])
async def test_server_over_http(json_response: bool, sessionless: bool) -> None:
    events: list[str] = []
    server = make_server(events)
    logs: list[Any] = []
    progress: list[float] = []

    async def on_log(params: Any) -> None:
        logs.append(params["data"])

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append(p)

    async def sample(ctx: Any, params: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "hi!"}, "model": "m"}

    app = create_http_app(server, json_response=json_response, sessionless=sessionless)
    with running(app) as srv, anyio.fail_after(20):
        async with (
            open_streamable_http(srv.url) as t,
            ClientSession(
                t,
                client_info=CLIENT_INFO,
                capabilities={"sampling": {}},
                handlers={"sampling/createMessage": sample},
                notification_handlers={"notifications/message": on_log},
            ) as cs,
        ):
            await cs.initialize()
            await cs.send_request("logging/setLevel", {"level": "info"}, timeout=5)

            async def call(name: str, **kw: Any) -> Any:
                r = await cs.send_request(
                    "tools/call", {"name": name, "arguments": {}}, timeout=10, **kw
                )
                return r["content"][0]["text"]

            assert events == ["start"]
            assert await call("greet") == "hello from the lifespan"
            assert await call("steps", on_progress=on_progress) == "done"
            if not json_response:
                assert progress == [1, 2, 3]
                if not sessionless:
                    assert logs == ["step 0", "step 1", "step 2"]
            if not sessionless:
                assert await call("ask") == "hi!"
            if not json_response and not sessionless:
                logs.clear()
                assert await call("reconnect") == "resumed"
                assert logs == ["before", "after"]
    assert events == ["start", "stop"]


async def test_failing_lifespan_is_reported_to_the_asgi_server() -> None:
    @asynccontextmanager
    async def lifespan(server: Server) -> Any:
        raise RuntimeError("no database")
        yield

    app = create_http_app(Server("broken", lifespan=lifespan))
    sent: list[Any] = []
    messages = iter([{"type": "lifespan.startup"}])

    async def receive() -> Any:
        return next(messages)

    async def send(m: Any) -> None:
        sent.append(m)

    with anyio.fail_after(5):
        await app({"type": "lifespan"}, receive, send)
    assert sent[0]["type"] == "lifespan.startup.failed" and "no database" in sent[0]["message"]


async def test_server_over_legacy_sse() -> None:
    from mcpkit._app import create_sse_app
    from mcpkit._http import open_sse

    events: list[str] = []
    with running(create_sse_app(make_server(events))) as srv, anyio.fail_after(15):
        async with (
            open_sse(srv.base + "/sse") as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            r = await cs.send_request("tools/call", {"name": "greet", "arguments": {}}, timeout=10)
            assert r["content"][0]["text"] == "hello from the lifespan"
    assert events == ["start", "stop"]


async def test_http_app_method_mounts_in_starlette() -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    server = make_server([])
    mcp_app = server.http_app(path="/mcp", json_response=True)
    app = Starlette(routes=[Mount("/api", app=mcp_app)])
    with running(app) as srv, anyio.fail_after(15):
        async with (
            open_streamable_http(srv.base + "/api/mcp") as t,
            ClientSession(t, client_info=CLIENT_INFO) as cs,
        ):
            await cs.initialize()
            result = await cs.send_request("tools/call", {"name": "greet", "arguments": {}})
            assert result["content"][0]["text"] == "hello from the lifespan"
        srv.call(mcp_app.aclose)
