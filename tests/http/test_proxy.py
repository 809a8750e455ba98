"""``Proxy`` / ``mcpkit proxy``: a stdio server served through the proxy, in memory and over
Streamable HTTP (in process), with every kind of message forwarded both ways."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit import Client, Proxy, create_http_app, http, stdio
from mcpkit.lowlevel import ASGIClient

EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything.py"
TIMEOUT = 60


class Seen:
    """What reached the client through the proxy."""

    def __init__(self) -> None:
        self.logs: list[Any] = []
        self.progress: list[float] = []
        self.changed: list[str] = []
        self.updated: list[str] = []
        self.update_arrived = anyio.Event()
        self.change_arrived = anyio.Event()

    def kwargs(self) -> dict[str, Any]:
        async def on_updated(params: Any) -> None:
            self.updated.append(params.uri)
            self.update_arrived.set()

        async def on_changed(kind: str) -> None:  # on the loop: it sets an anyio.Event
            self.changed.append(kind)
            self.change_arrived.set()

        return {
            "logging_handler": self.logs.append,
            "resource_updated_handler": on_updated,
            "list_changed_handler": on_changed,
            "sampling_handler": lambda params, ctx: "forty-two",
            "elicitation_handler": lambda params, ctx: {
                "action": "accept",
                "content": {"username": "ann", "email": "ann@example.com"},
            },
            "roots": ["/srv/data"],
        }


def _upstream() -> Any:
    return stdio([sys.executable, str(EVERYTHING)])


@asynccontextmanager
async def _through(where: str, seen: Seen) -> AsyncIterator[Client]:
    proxy = Proxy(_upstream())
    if where == "memory":
        async with Client(proxy, **seen.kwargs()) as client:
            yield client
        return
    app = create_http_app(proxy)
    async with (
        ASGIClient(app) as asgi,
        Client(http("http://127.0.0.1/mcp", http_client=asgi), **seen.kwargs()) as client,
    ):
        yield client


@pytest.mark.anyio
@pytest.mark.parametrize("where", ["memory", "http"])
async def test_everything_is_forwarded(where: str) -> None:
    seen = Seen()
    with anyio.fail_after(TIMEOUT):
        async with Client(_upstream()) as direct:
            expected = sorted(t.name for t in await direct.list_tools())
            name = direct.server_info.name
        async with _through(where, seen) as client:
            # The proxy is the upstream server, as far as the client can tell.
            assert client.server_info.name == name
            assert client.protocol_version == "2025-11-25"  # the handshake downstream
            assert sorted(t.name for t in await client.list_tools()) == expected
            result = await client.call_tool(
                "test_tool_with_progress",
                {},
                progress_handler=lambda p, t, m: seen.progress.append(p),
            )
            assert not result.is_error and seen.progress == [0, 50, 100]
            await client.set_logging_level("debug")
            await client.call_tool("test_tool_with_logging", {})
            assert len(seen.logs) >= 3
            sampled = await client.call_tool("test_sampling", {"prompt": "the answer?"})
            assert sampled.content[0].text == "LLM response: forty-two"  # type: ignore[union-attr]
            elicited = await client.call_tool("test_elicitation", {"message": "who?"})
            assert "ann@example.com" in elicited.content[0].text  # type: ignore[union-attr]
            roots = await client.call_tool("list_client_roots", {})
            assert roots.structured_content == {"result": ["file:///srv/data"]}
            text = await client.read_resource("test://static-text")
            assert "static text resource" in text.contents[0].text  # type: ignore[union-attr]
            prompt = await client.get_prompt(
                "test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
            )
            assert prompt.messages
            # Server notifications: a resource update and a list change.
            await client.subscribe("test://watched-resource")
            await client.call_tool("update_watched_resource", {"text": "new"})
            await seen.update_arrived.wait()
            await client.call_tool("test_trigger_tool_change", {})
            await seen.change_arrived.wait()
    assert seen.updated == ["test://watched-resource"] and "tools" in seen.changed


@pytest.mark.anyio
async def test_a_cancelled_call_ends_upstream_and_the_proxy_goes_on() -> None:
    seen = Seen()
    with anyio.fail_after(TIMEOUT):
        async with _through("memory", seen) as client:
            with anyio.move_on_after(0.5):  # a call the client gives up on
                await client.call_tool("long_running_job", {"steps": 100, "step_seconds": 1})
            # The connection and the upstream server are still fine.
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.structured_content == {"result": 5}


def test_an_upstream_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    # As a user runs it: the proxy over stdio, a client's initialize on its stdin.
    init = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
    init += '"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
    broken = f"{sys.executable} -c 'import sys; sys.exit(3)'"
    done = subprocess.run(
        [str(Path(sys.executable).with_name("mcpkit")), "proxy", broken],
        input=init,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "did not start" in lines[0] and "code 3" in lines[0], lines
