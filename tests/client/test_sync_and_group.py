"""The blocking facade and multi-server groups."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit import ClientGroup, SyncClient
from mcpkit._client._group import load_config
from mcpkit._exceptions import ConnectionClosed, InvalidResponse, MCPError, RequestTimeout

HERE = Path(__file__).parent
SERVER = [sys.executable, str(HERE / "servers" / "session_stdio.py")]
BAD = str(HERE / "servers" / "misbehaving.py")


# ---------------------------------------------------------------- SyncClient


def test_sync_client_same_api_without_await() -> None:
    t0 = time.monotonic()
    with SyncClient(SERVER) as client:
        assert client.server_info.name == "session-stdio"
        assert client.protocol_version == "2026-07-28"  # our server: the stateless revision
        assert [t.name for t in client.list_tools()] == ["add", "shout", "fail", "picture"]
        page = client.list_tools_page()
        assert page.next_cursor == "2"
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"sum": 3}
        assert client.call_tool("fail").is_error is True
        assert client.list_resources()[0].uri == "mem://hello"
        assert client.read_resource("mem://hello").contents[0].text == "hello"  # type: ignore[union-attr]
        assert client.list_resource_templates()[0].uri_template == "mem://items/{id}"
        assert client.list_prompts()[0].name == "greet"
        assert client.get_prompt("greet", {"who": "Ann"}).messages[0].content.text == "Hello, Ann!"  # type: ignore[union-attr]
        client.ping()
        assert client.send_request("tools/list", {"cursor": "2"})["tools"][0]["name"] == "fail"
    assert time.monotonic() - t0 < 20
    # The background loop thread is gone.
    assert not [t for t in threading.enumerate() if "portal" in t.name.lower() or "AnyIO" in t.name]


def test_sync_client_errors_and_reuse() -> None:
    client = SyncClient([sys.executable, BAD, "no-answer"], timeout=0.3).open()
    try:
        with pytest.raises(RequestTimeout):
            client.call_tool("get")
    finally:
        client.close()
    client.close()  # twice is fine
    with pytest.raises(ConnectionClosed, match="not open"):
        client.ping()
    with SyncClient([sys.executable, BAD, "bad-output"]) as c2, pytest.raises(InvalidResponse):
        c2.call_tool("get")


def test_sync_client_connect_failure_leaves_no_thread() -> None:
    before = set(threading.enumerate())
    with pytest.raises(ConnectionClosed):
        SyncClient([sys.executable, "-c", "pass"]).open()
    # Compared by identity, not by count: the suite's own background runner (tests/_early.py,
    # threads named "early") may start its worker meanwhile; it is not the client's.
    left = [t for t in set(threading.enumerate()) - before if not t.name.startswith("early")]
    # Before 3.12 asyncio reaps each child from a thread of its own (the stdlib's
    # ThreadedChildWatcher, named "waitpid-N" on 3.10, "asyncio-waitpid-N" on 3.11); it hands the exit status to the loop and only then returns, so it
    # may still be finishing when the client is done. It must end, bounded; anything else left
    # behind is the client's and fails at once.
    for t in left:
        if t.name.startswith(("waitpid-", "asyncio-waitpid-")):
            t.join(timeout=10)
    assert [t for t in left if t.is_alive()] == []


def test_sync_client_with_sync_callbacks() -> None:
    # The official SDK fixture asks for sampling; a plain function answers it.
    official = [sys.executable, str(HERE / "servers" / "official_sdk.py")]
    with SyncClient(
        official,
        # Its tool asks the client mid-call: the handshake era's wire.
        protocol_version="2025-11-25",
        sampling_handler=lambda p, ctx: "forty-two",
        on_stderr=lambda line: None,
    ) as c:
        r = c.call_tool("ask_model", {"prompt": "?"})
        assert r.structured_content == {"result": "model said: forty-two"}


# ---------------------------------------------------------------- ClientGroup


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_load_config_forms(tmp_path: Path) -> None:
    cfg = {
        "mcpServers": {
            "a": {"command": "python", "args": ["a.py"], "env": {"X": "1"}},
            "b": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t"}},
            "off": {"command": "x", "disabled": True},
            "c": {"serverUrl": "https://example.com/c", "type": "http"},
        }
    }
    assert set(load_config(cfg)) == {"a", "b", "c"}
    assert load_config(cfg)["c"]["url"] == "https://example.com/c"
    f = tmp_path / "mcp.json"
    f.write_text(json.dumps(cfg))
    assert load_config(f) == load_config(str(f)) == load_config(json.dumps(cfg))
    for bad in ({"mcpServers": {"x": {}}}, {"mcpServers": {"x": 1}}, {"mcpServers": []}):
        with pytest.raises(ValueError):
            load_config(bad)


@pytest.mark.anyio
async def test_group_prefixes_routes_and_survives_a_failing_server() -> None:
    config = {
        "mcpServers": {
            "calc": {"command": sys.executable, "args": SERVER[1:]},
            "bad": {"command": sys.executable, "args": [BAD, "ok"]},
            "dead": {"command": "/nonexistent/server"},
            "crashy": {"command": sys.executable, "args": [BAD, "exit-mid-call"]},
        }
    }
    with anyio.fail_after(30):
        async with ClientGroup(config, on_stderr=lambda line: None) as group:
            assert set(group.clients) == {"calc", "bad", "crashy"}
            assert "cannot start" in str(group.errors["dead"])
            names = [t.name for t in await group.list_tools()]
            assert names == [
                "calc_add",
                "calc_shout",
                "calc_fail",
                "calc_picture",
                "bad_get",
                "crashy_get",
            ]
            r = await group.call_tool("calc_add", {"a": 2, "b": 2})
            assert r.structured_content == {"sum": 4}
            r = await group.call_tool("bad_get")
            assert r.structured_content == {"n": 1}
            # One server dying mid-call does not take the others down.
            with pytest.raises(ConnectionClosed):
                await group.call_tool("crashy_get")
            r = await group.call_tool("calc_shout", {"text": "still here"})
            assert r.content[0].text == "STILL HERE"  # type: ignore[union-attr]
            names = [t.name for t in await group.list_tools()]
            assert "crashy_get" not in names and "calc_add" in names
            assert "crashy" in group.errors
            with pytest.raises(MCPError, match="no server"):
                await group.call_tool("unknown_tool")
            with pytest.raises(MCPError, match="not connected"):
                group.client("dead")
            assert group.client("calc").name == "calc"
            pids = [c.session.engine.transport.process.pid for c in group.clients.values()]  # type: ignore[attr-defined]
    # Leaving the group stops every server it started.
    assert pids and all(gone(pid) for pid in pids)


@pytest.mark.anyio
async def test_group_callbacks_know_which_server_asks() -> None:
    official = str(HERE / "servers" / "official_sdk.py")
    asked: list[str | None] = []

    async def sample(params: Any, ctx: Any) -> str:
        asked.append(ctx.name)
        return "ok"

    config = {"mcpServers": {"py": {"command": sys.executable, "args": [official]}}}
    with anyio.fail_after(30):
        async with ClientGroup(
            config,
            protocol_version="2025-11-25",
            sampling_handler=sample,
            on_stderr=lambda line: None,
        ) as group:
            r = await group.call_tool("py_ask_model", {"prompt": "x"})
            assert r.structured_content == {"result": "model said: ok"}
    assert asked == ["py"]


def resolved(path: Path) -> str:
    return str(path.resolve())


@pytest.mark.anyio
async def test_group_entries_pass_env_cwd_and_headers(tmp_path: Path) -> None:
    from tests.client.servers.ours import make_server
    from tests.http._http_helpers import Recorder, running

    from mcpkit._app import create_http_app

    # A stdio server that reports its environment variable and working folder as its name
    # (a handshake-era server: any other request is a method it does not know, at once, so
    # the client's server/discover probe is not left to time out).
    code = (
        "import os, sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'initialize':\n"
        "        name = os.environ.get('GREETING', '-') + '|' + os.getcwd()\n"
        "        r = {'protocolVersion': m['params']['protocolVersion'], 'capabilities': {},\n"
        "             'serverInfo': {'name': name, 'version': '0'}}\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
        "    elif 'id' in m and 'method' in m:\n"
        "        e = {'code': -32601, 'message': 'Method not found'}\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': e}), flush=True)\n"
    )
    app = Recorder(create_http_app(make_server()))
    with running(app) as srv, anyio.fail_after(30):
        config = {
            "mcpServers": {
                "env": {
                    "command": sys.executable,
                    "args": ["-c", code],
                    "env": {"GREETING": "hello"},
                    "cwd": str(tmp_path),
                },
                "web": {"url": srv.url, "headers": {"X-Team": "blue"}},
            }
        }
        async with ClientGroup(json.dumps(config)) as group:
            assert not group.errors
            info = group.client("env").server_info.name
            assert info == f"hello|{resolved(tmp_path)}"
            assert group.client("web").server_info.name == "in-process"
    posts = [headers for _, method, headers, _ in app.requests if method == "POST"]
    assert posts and all(h.get("x-team") == "blue" for h in posts)


@pytest.mark.anyio
async def test_group_prompts_and_resources_are_routed_too() -> None:
    everything = str(HERE.parents[1] / "examples" / "everything.py")
    config = {
        "mcpServers": {
            "a": {"command": sys.executable, "args": [everything]},
            "b": {"command": sys.executable, "args": [*SERVER[1:]]},
        }
    }
    with anyio.fail_after(60):
        async with ClientGroup(config, on_stderr=lambda line: None) as group:
            prompts = [p.name for p in await group.list_prompts()]
            assert "a_test_simple_prompt" in prompts
            got = await group.get_prompt("a_test_prompt_with_arguments", {"arg1": "x", "arg2": "y"})
            assert got.messages
            resources = await group.list_resources()
            names = {r.name for r in resources}
            assert "a_static_text" in names and any(n.startswith("b_") for n in names)
            # A listed URI is read from the server that listed it.
            read = await group.read_resource("mem://hello")
            assert read.contents[0].text == "hello"  # type: ignore[union-attr]
            read = await group.read_resource("test://static-text")
            assert "static text" in read.contents[0].text  # type: ignore[union-attr]
            templates = {t.name for t in await group.list_resource_templates()}
            assert any(n.startswith("a_") for n in templates) and any(
                n.startswith("b_") for n in templates
            )
            # An unlisted URI with two servers offering resources: say which.
            with pytest.raises(MCPError, match="server=NAME"):
                await group.read_resource("mem://items/7")
            read = await group.read_resource("mem://items/7", server="b")
            assert read.contents
            with pytest.raises(MCPError, match="no server"):
                await group.get_prompt("zzz_nothing")
