"""``Client(url)`` over HTTP: our server, the official SDK's, and the reference TypeScript server.

Each server runs as a real process listening on 127.0.0.1; the client connects by URL
(Streamable HTTP, with the fallback to the legacy HTTP+SSE transport).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit import Client
from mcpkit._exceptions import TransportError

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def listening(
    argv: list[str], port: int, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Run a server process until its port accepts connections (bounded); stop it after."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"server exited with {proc.returncode}: {err[-2000:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start listening within 20 s")
            time.sleep(0.05)
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(5)
        if proc.stderr:
            proc.stderr.close()


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def sample(params: Any, ctx: Any) -> str:
    return "forty-two"


async def elicit(params: Any, ctx: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ann"}}


async def exercise(url: str, *, prefix: str = "") -> None:
    logs: list[Any] = []
    progress: list[Any] = []
    with anyio.fail_after(30):
        async with Client(
            url,
            sampling_handler=sample,
            elicitation_handler=elicit,
            roots=["file:///work"],
            logging_handler=logs.append,
        ) as client:
            assert client.server_info.name == "in-process"
            assert [t.name for t in await client.list_tools()] == [
                "add",
                "work",
                "ask",
                "who",
                "roots",
            ]
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                "result": 3
            }
            r = await client.call_tool(
                "work", {"steps": 3}, progress_handler=lambda *a: progress.append(a)
            )
            assert text(r) == "worked" and [p[0] for p in progress] == [1, 2, 3]
            assert [x.data for x in logs] == ["step 1", "step 2", "step 3"]
            assert text(await client.call_tool("ask", {"prompt": "?"})) == "model: forty-two"
            assert text(await client.call_tool("who", {})) == "Ann/30"
            assert (await client.call_tool("roots", {})).structured_content == {
                "result": ["file:///work"]
            }
            read = await client.read_resource("memo://items/5")
            assert read.contents[0].text == "item 5"  # type: ignore[union-attr]
            got = await client.get_prompt("greet", {"name": "Bo"})
            assert got.messages[0].content.text == "Hello, Bo!"  # type: ignore[union-attr]
            await client.ping()


async def test_our_server_over_streamable_http() -> None:
    port = free_port()
    with listening([sys.executable, str(HERE / "servers" / "ours.py"), "http", str(port)], port):
        await exercise(f"http://127.0.0.1:{port}/mcp")


async def test_our_server_over_legacy_sse_by_fallback() -> None:
    port = free_port()
    with listening([sys.executable, str(HERE / "servers" / "ours.py"), "sse", str(port)], port):
        await exercise(f"http://127.0.0.1:{port}/sse")


async def test_official_sdk_server_over_streamable_http() -> None:
    port = free_port()
    code = (
        f"import runpy; ns = runpy.run_path({str(HERE / 'servers' / 'official_sdk.py')!r}); "
        f"ns['server'].run('streamable-http', host='127.0.0.1', port={port})"
    )
    logs: list[Any] = []
    progress: list[Any] = []
    with listening([sys.executable, "-c", code], port):
        with anyio.fail_after(30):
            async with Client(
                f"http://127.0.0.1:{port}/mcp",
                # Its tools ask the client mid-call: the handshake era's wire.
                protocol_version="2025-11-25",
                sampling_handler=sample,
                elicitation_handler=elicit,
                logging_handler=logs.append,
            ) as client:
                assert client.server_info.name == "official-fixture"
                names = {t.name for t in await client.list_tools()}
                assert {"add", "countdown", "ask_model", "ask_user"} <= names
                assert (await client.call_tool("add", {"a": 40, "b": 2})).structured_content == {
                    "total": 42
                }
                r = await client.call_tool(
                    "countdown", {"n": 3}, progress_handler=lambda *a: progress.append(a)
                )
                assert r.structured_content == {"result": "done"}
                assert [p[0] for p in progress] == [1, 2, 3]
                assert [x.data for x in logs] == ["step 1", "step 2", "step 3"]
                r = await client.call_tool("ask_model", {"prompt": "?"})
                assert r.structured_content == {"result": "model said: forty-two"}
                r = await client.call_tool("ask_user", {})
                assert r.structured_content == {"result": "Ann (30)"}  # schema default applied
                assert [x.uri for x in await client.list_resources()] == ["memo://readme"]
                assert (await client.read_resource("memo://readme")).contents[0].text  # type: ignore[union-attr]
                templates = await client.list_resource_templates()
                assert [t.uri_template for t in templates] == ["memo://items/{item}"]
                read = await client.read_resource("memo://items/9")
                assert read.contents[0].text == "item 9"  # type: ignore[union-attr]
                assert [p.name for p in await client.list_prompts()] == ["greet"]
                got = await client.get_prompt("greet", {"name": "Bo"})
                assert got.messages[0].content.text == "Hello, Bo!"  # type: ignore[union-attr]


async def test_reference_typescript_server_over_streamable_http(everything_js: str) -> None:
    entry = everything_js
    port = free_port()
    logs: list[Any] = []
    got_log = anyio.Event()
    progress: list[Any] = []

    async def on_log(params: Any) -> None:
        # async: a plain callback runs in a worker thread, where an anyio Event cannot be set
        logs.append(params)
        got_log.set()

    async def elicit_contact(params: Any, ctx: Any) -> dict[str, Any]:
        return {
            "action": "accept",
            "content": {"name": "Ann", "email": "ann@example.com", "check": True},
        }

    with listening(["node", entry, "streamableHttp"], port, env={"PORT": str(port)}):
        with anyio.fail_after(30):
            async with Client(
                f"http://127.0.0.1:{port}/mcp",
                sampling_handler=sample,
                elicitation_handler=elicit_contact,
                logging_handler=on_log,
            ) as client:
                assert client.server_info.name == "mcp-servers/everything"
                names = {t.name for t in await client.list_tools()}
                assert {"get-sum", "trigger-long-running-operation"} <= names
                r = await client.call_tool("get-sum", {"a": 1, "b": 2})
                assert "3" in text(r)
                r = await client.call_tool(
                    "trigger-sampling-request", {"prompt": "hi", "maxTokens": 5}
                )
                assert "forty-two" in text(r)
                r = await client.call_tool("get-structured-content", {"location": "New York"})
                assert r.structured_content is not None
                r = await client.call_tool(
                    "trigger-long-running-operation",
                    {"duration": 0.3, "steps": 3},
                    progress_handler=lambda *a: progress.append(a),
                )
                assert [p[0] for p in progress] == [1, 2, 3]
                r = await client.call_tool("trigger-elicitation-request", {})
                assert "ann@example.com" in text(r)
                await client.set_logging_level("debug")
                await client.call_tool("toggle-simulated-logging", {})
                await got_log.wait()
                assert logs[0].level
                resources = await client.list_resources()
                first = next(x for x in resources if (x.mime_type or "").startswith("text/"))
                assert (await client.read_resource(first.uri)).contents[0].uri == first.uri
                templates = await client.list_resource_templates()
                assert any("{resourceId}" in t.uri_template for t in templates)
                read = await client.read_resource("demo://resource/dynamic/text/2")
                assert read.contents[0].text  # type: ignore[union-attr]
                assert "simple-prompt" in {p.name for p in await client.list_prompts()}
                got = await client.get_prompt("args-prompt", {"city": "Oslo"})
                assert "Oslo" in str(got.messages[0].content)


async def test_server_dying_is_a_clear_error() -> None:
    port = free_port()
    argv = [sys.executable, str(HERE / "servers" / "ours.py"), "http", str(port)]
    with listening(argv, port) as proc, anyio.fail_after(20):
        async with Client(f"http://127.0.0.1:{port}/mcp", timeout=5) as client:
            await client.ping()
            os.killpg(proc.pid, 9)
            proc.wait(5)
            with pytest.raises(TransportError, match="cannot reach"):
                await client.call_tool("add", {"a": 1, "b": 2})


async def test_unreachable_url_is_a_clear_error() -> None:
    port = free_port()  # nothing listens there
    with anyio.fail_after(20), pytest.raises(TransportError, match="cannot reach"):
        async with Client(f"http://127.0.0.1:{port}/mcp", timeout=5, init_timeout=5):
            pass  # pragma: no cover


async def test_group_with_an_http_server_and_a_stdio_server() -> None:
    from mcpkit import ClientGroup

    port = free_port()
    argv = [sys.executable, str(HERE / "servers" / "ours.py"), "http", str(port)]
    config = {
        "mcpServers": {
            "web": {"url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Test": "1"}},
            "local": {
                "command": sys.executable,
                "args": [str(HERE / "servers" / "session_stdio.py")],
            },
        }
    }
    with listening(argv, port), anyio.fail_after(30):
        async with ClientGroup(config) as group:
            assert set(group.clients) == {"web", "local"} and not group.errors
            names = [t.name for t in await group.list_tools()]
            assert "web_add" in names and "local_shout" in names
            assert (await group.call_tool("web_add", {"a": 1, "b": 1})).structured_content == {
                "result": 2
            }
            r = await group.call_tool("local_shout", {"text": "hi"})
            assert r.content[0].text == "HI"  # type: ignore[union-attr]


def test_sync_client_over_http() -> None:
    from mcpkit import SyncClient

    port = free_port()
    argv = [sys.executable, str(HERE / "servers" / "ours.py"), "http", str(port)]
    with listening(argv, port), SyncClient(f"http://127.0.0.1:{port}/mcp", timeout=10) as client:
        assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"result": 5}
        assert [t.name for t in client.list_tools()][:2] == ["add", "work"]
