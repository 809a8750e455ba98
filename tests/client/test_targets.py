"""Target objects: ``stdio(...)`` and ``http(...)`` say where the server is; strings are sugar."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from tests.http._http_helpers import running

from mcpkit import Client, HTTPTarget, Server, StdioTarget, http, stdio
from mcpkit.types import LoggingMessageNotificationParams

pytestmark = pytest.mark.anyio

SERVER = textwrap.dedent(
    """
    import os
    from mcpkit import Context, Server

    server = Server("env-echo")

    @server.tool()
    async def env(name: str, ctx: Context) -> str:
        '''The value of an environment variable of the server.'''
        await ctx.info(f"reading {name}")
        return os.environ.get(name, "<unset>")

    if __name__ == "__main__":
        server.run()
    """
)


async def test_stdio_target_carries_its_own_settings(tmp_path: Path) -> None:
    script = tmp_path / "env server.py"  # a path is one program, spaces and all
    script.write_text(SERVER)
    target = stdio(script, env={"MCPKIT_TARGET_TEST": "from the target"}, cwd=tmp_path)
    assert isinstance(target, StdioTarget) and target.argv() == [sys.executable, str(script)]
    logs: list[str] = []

    def on_log(params: LoggingMessageNotificationParams) -> None:  # a LoggingHandler
        logs.append(str(params.data))

    with anyio.fail_after(20):
        async with Client(target, logging_handler=on_log) as client:
            result = await client.call_tool("env", {"name": "MCPKIT_TARGET_TEST"})
    assert result.content[0].text == "from the target"  # type: ignore[union-attr]
    assert logs == ["reading MCPKIT_TARGET_TEST"]


async def test_http_target_and_the_url_string_are_the_same_connection() -> None:
    server = Server("over-http")

    @server.tool()
    def ping() -> str:
        """Pong."""
        return "pong"

    with running(server.http_app()) as srv, anyio.fail_after(20):
        for target in (http(srv.url, headers={"x-test": "1"}), srv.url):
            async with Client(target) as client:
                assert client.server_info.name == "over-http"
                result = await client.call_tool("ping")
                assert result.content[0].text == "pong"  # type: ignore[union-attr]


def test_settings_go_to_the_target_not_to_both() -> None:
    with pytest.raises(TypeError, match="give env to stdio"):
        Client(stdio("server.py"), env={"A": "1"})
    with pytest.raises(TypeError, match="give headers to stdio"):
        Client(http("http://127.0.0.1:1/mcp"), headers={"a": "b"})
    with pytest.raises(ValueError, match="not an http"):
        http("ftp://example.com")
    assert isinstance(http("https://example.com/mcp"), HTTPTarget)
