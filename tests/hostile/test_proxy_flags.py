"""``mcpkit proxy`` has the options ``mcpkit run`` and ``mcpkit call`` have: ``--env`` (a
command upstream's environment), ``--header`` (an HTTP upstream's headers), ``--path``,
``--allowed-host``, ``--allowed-origin``, ``--sessionless`` (``--stateless``, its deprecated
spelling, still works for one release and says so), ``--json-response`` and
``--max-sessions`` (the HTTP side), ``--log-level``. Real ``mcpkit proxy`` processes.

Before: each of these was refused as an unknown option (exit status 2).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import orjson
import pytest
from tests._served import Served
from tests.http._http_helpers import HEADERS, INIT_PARAMS, Recorder, running

from mcpkit import Client, Server

pytestmark = pytest.mark.anyio
MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
UPSTREAM = """
import os
from mcpkit import Server

server = Server("upstream")

@server.tool()
def greeting() -> str:
    \"\"\"The GREETING of this process's environment.\"\"\"
    return os.environ.get("GREETING", "(unset)")
"""


def _start(*argv: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [MCPKIT, "proxy", *argv, "-t", "http", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


async def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    await anyio.to_thread.run_sync(proc.wait, 30)


async def test_env_path_and_allowed_host(tmp_path: Path) -> None:
    (tmp_path / "up.py").write_text(UPSTREAM)
    command = f"{sys.executable} -m mcpkit run {tmp_path / 'up.py'}"
    argv = (command, "--env", "GREETING=bonjour", "--path", "/relay")
    hosts = ("--allowed-host", "proxy.example", "--allowed-host", "127.0.0.1")
    with _start(*argv, *hosts) as proc:
        try:
            url = await anyio.to_thread.run_sync(Served(proc).url, 30)
            assert url.endswith("/relay")
            with anyio.fail_after(60):
                async with Client(url) as c:
                    said = await c.call_tool("greeting")
                    assert said.content[0].text == "bonjour"  # type: ignore[union-attr]
                async with httpx2.AsyncClient(timeout=30) as http:
                    init = orjson.dumps(
                        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
                    )
                    named = {**HEADERS, "host": "proxy.example"}
                    assert (await http.post(url, headers=named, content=init)).status_code == 200
                    evil = {**HEADERS, "host": "evil.example"}
                    assert (await http.post(url, headers=evil, content=init)).status_code == 421
        finally:
            await _stop(proc)


@pytest.mark.parametrize("flag", ["--sessionless", "--stateless"])
async def test_sessionless_keeps_no_session(tmp_path: Path, flag: str) -> None:
    (tmp_path / "up.py").write_text(UPSTREAM)
    command = f"{sys.executable} -m mcpkit run {tmp_path / 'up.py'}"
    with _start(command, flag) as proc:
        try:
            served = Served(proc)
            url = await anyio.to_thread.run_sync(served.url, 30)
            deprecated = "--stateless is deprecated, use --sessionless" in served.stderr()
            assert deprecated == (flag == "--stateless"), served.stderr()
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "greeting", "arguments": {}},
            }
            headers = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
            with anyio.fail_after(60):
                async with httpx2.AsyncClient(timeout=30) as http:
                    got = await http.post(url, headers=headers, content=orjson.dumps(call))
            assert got.status_code == 200, got.text
            assert "mcp-session-id" not in got.headers
            assert "(unset)" in got.text
        finally:
            await _stop(proc)


def _header_server() -> Server:
    server = Server("behind")

    @server.tool()
    def ping_me() -> str:
        """Answer."""
        return "pong"

    return server


async def test_header_reaches_an_http_upstream() -> None:
    recorder = Recorder(_header_server().http_app())
    with running(recorder) as upstream, _start(upstream.url, "--header", "X-Team: blue") as proc:
        try:
            url = await anyio.to_thread.run_sync(Served(proc).url, 30)
            with anyio.fail_after(60):
                async with Client(url) as c:
                    pong = await c.call_tool("ping_me")
            assert pong.content[0].text == "pong"  # type: ignore[union-attr]
            teams = {h.get("x-team") for _, m, h, _ in recorder.requests if m == "POST"}
            assert teams == {"blue"}, teams
        finally:
            await _stop(proc)


def _refused(*argv: str) -> subprocess.CompletedProcess[str]:
    """``mcpkit proxy ARGV``, expected to be refused before anything starts (exit 2)."""
    done = subprocess.run([MCPKIT, "proxy", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    return done


def test_header_and_env_refused_where_they_cannot_apply(tmp_path: Path) -> None:
    assert "--env applies to a command" in _refused("http://127.0.0.1:9/mcp", "--env", "A=1").stderr
    assert "--path" in _refused(f"{sys.executable} x.py", "--path", "/x").stderr


async def test_allowed_origin_opens_cors_to_that_origin_only(tmp_path: Path) -> None:
    # A browser host on another origin reaches a proxied stdio server (docs/http.md, CORS).
    (tmp_path / "up.py").write_text(UPSTREAM)
    command = f"{sys.executable} -m mcpkit run {tmp_path / 'up.py'}"
    with _start(command, "--allowed-origin", "https://host.example") as proc:
        try:
            url = await anyio.to_thread.run_sync(Served(proc).url, 30)
            ask = {"access-control-request-method": "POST"}
            with anyio.fail_after(60):
                async with httpx2.AsyncClient(timeout=30) as http:
                    ok = await http.options(url, headers={"origin": "https://host.example", **ask})
                    other = await http.options(
                        url, headers={"origin": "https://evil.example", **ask}
                    )
            assert ok.status_code == 204, ok.text
            assert ok.headers["access-control-allow-origin"] == "https://host.example"
            assert other.status_code == 403
            assert "access-control-allow-origin" not in other.headers
        finally:
            await _stop(proc)


def test_a_malformed_allowed_origin_is_refused_before_serving() -> None:
    command = f"{sys.executable} x.py"
    malformed = _refused(command, "-t", "http", "--allowed-origin", "bad")
    assert malformed.stderr.strip().splitlines() == [
        "mcpkit proxy: --allowed-origin: allowed origin 'bad' is not scheme://host[:port]"
    ]
    stdio = _refused(command, "--allowed-origin", "https://a.example")
    assert "--allowed-origin apply to -t http only" in stdio.stderr


async def test_json_response_and_max_sessions_reach_the_http_side(tmp_path: Path) -> None:
    # `mcpkit run`'s HTTP options, on the proxy's HTTP side: one JSON body per answer, and
    # one session held at once (a second one makes the idle first one room: it is gone).
    (tmp_path / "up.py").write_text(UPSTREAM)
    command = f"{sys.executable} -m mcpkit run {tmp_path / 'up.py'}"
    with _start(command, "--json-response", "--max-sessions", "1") as proc:
        try:
            url = await anyio.to_thread.run_sync(Served(proc).url, 30)
            init = orjson.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
            )
            ping = orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})
            headers = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
            with anyio.fail_after(60):
                async with httpx2.AsyncClient(timeout=30) as http:
                    first = await http.post(url, headers=HEADERS, content=init)
                    assert first.status_code == 200, first.text
                    assert first.headers["content-type"].startswith("application/json")
                    a = {**headers, "mcp-session-id": first.headers["mcp-session-id"]}
                    assert (await http.post(url, headers=a, content=ping)).status_code == 200
                    second = await http.post(url, headers=HEADERS, content=init)
                    assert second.status_code == 200, second.text
                    b = {**headers, "mcp-session-id": second.headers["mcp-session-id"]}
                    assert (await http.post(url, headers=b, content=ping)).status_code == 200
                    assert (await http.post(url, headers=a, content=ping)).status_code == 404
        finally:
            await _stop(proc)


async def test_log_level_shows_the_proxys_own_log(tmp_path: Path) -> None:
    # One child at most: a second client makes the proxy end the first (idle) one, which it
    # logs at info; uvicorn's own lines follow the same level.
    (tmp_path / "up.py").write_text(UPSTREAM)
    command = f"{sys.executable} -m mcpkit run {tmp_path / 'up.py'}"
    for level, shown in (("info", True), (None, False)):
        flags = ("--log-level", level) if level else ()
        argv = [MCPKIT, "proxy", command, "--max-children", "1", *flags, "-t", "http"]
        served = Served.start([*argv, "--port", "0"])
        try:
            url = await anyio.to_thread.run_sync(served.url, 30)
            with anyio.fail_after(60):
                # The first client stays open and idle: the proxy ends it for the second.
                async with Client(url), Client(url) as second:
                    await second.call_tool("greeting")
        finally:
            await _stop(served.proc)
            served.close()  # all it wrote, read to the end
        said = served.stderr()
        assert ("proxy: all 1 children in use" in said) is shown, said
        assert ("Uvicorn running" in said) is shown, said


def test_http_side_options_are_refused_elsewhere() -> None:
    command = f"{sys.executable} x.py"
    for flag in (("--json-response",), ("--max-sessions", "2")):
        assert f"{flag[0]} apply to -t http only" in _refused(command, *flag).stderr
    assert "at least 1" in _refused(command, "-t", "http", "--max-sessions", "0").stderr
