# ruff: noqa: ASYNC220  (the server process is started from a test coroutine)
"""``mcpkit run`` options for deployments (path, JSON responses, sessionless, allowed hosts,
log level), and the same settings from ``MCPKIT_*`` variables; options win."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2 as httpx
import pytest
from tests._served import Served

from mcpkit._server._cli import run_settings

ROOT = Path(__file__).resolve().parents[2]
MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream"}


def _args(**given: object) -> argparse.Namespace:
    base: dict[str, object] = dict.fromkeys(
        ("transport", "host", "port", "path", "json_response", "sessionless", "log_level")
    )
    base.update(allowed_host=None, allowed_origin=None, redis=None, stateless=None)
    base.update(given)
    return argparse.Namespace(**base)


def test_options_win_over_the_environment() -> None:
    env = {"MCPKIT_TRANSPORT": "http", "MCPKIT_PORT": "9000", "MCPKIT_PATH": "/env"}
    settings = run_settings(_args(path="/cli", allowed_host=["api.example.com"]), env)
    assert settings == {
        "transport": "http",
        "port": 9000,
        "path": "/cli",
        "allowed_hosts": ["api.example.com"],
    }
    assert run_settings(_args(), {})["transport"] == "stdio"
    # --redis reaches the server (it was dropped here once: workers shared nothing).
    redis = run_settings(_args(transport="http", redis="redis://r:6379/0"), {})
    assert redis == {"transport": "http", "redis": "redis://r:6379/0"}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MCPKIT_PORT": "eighty"}, "MCPKIT_PORT"),
        ({"MCPKIT_SESSIONLESS": "maybe"}, "MCPKIT_SESSIONLESS"),
        ({"MCPKIT_STATELESS": "maybe"}, "MCPKIT_STATELESS"),  # the deprecated name too
        ({"MCPKIT_TRANSPORT": "carrier-pigeon"}, "MCPKIT_TRANSPORT"),
        ({"MCPKIT_MAX_SESSIONS": "0"}, "MCPKIT_MAX_SESSIONS='0': a whole number of at least 1"),
        ({"MCPKIT_MAX_SESSIONS": "many"}, "MCPKIT_MAX_SESSIONS"),
    ],
)
def test_bad_variables_name_themselves(env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_settings(_args(), env)


@pytest.mark.anyio
async def test_a_deployment_configured_from_the_environment() -> None:
    env = {
        **os.environ,
        "MCPKIT_TRANSPORT": "http",
        "MCPKIT_PORT": "0",
        "MCPKIT_JSON_RESPONSE": "true",
    }
    argv = [MCPKIT, "run", str(ROOT / "examples" / "everything.py"), "--path", "/api"]
    argv += ["--allowed-host", "mcp.example.com", "--log-level", "info"]
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    served = Served(proc)
    try:
        url = await anyio.to_thread.run_sync(served.url)
        assert url.endswith("/api"), url
        with anyio.fail_after(20):
            async with httpx.AsyncClient(timeout=10) as c:
                # The Host the deployment named is accepted; JSON answers, not a stream.
                r = await c.post(url, json=INIT, headers={**ACCEPT, "host": "mcp.example.com"})
                assert r.status_code == 200, r.text
                assert r.headers["content-type"].startswith("application/json")
                # A Host it did not name is refused (DNS rebinding protection stays on).
                r = await c.post(url, json=INIT, headers={**ACCEPT, "host": "evil.example"})
                assert r.status_code in (403, 421), r.status_code
    finally:
        proc.terminate()
        await anyio.to_thread.run_sync(proc.wait, 10)
        served.close()
    assert "Uvicorn running" in served.stderr()  # --log-level info reached uvicorn too


@pytest.mark.parametrize(
    ("given", "env", "source"),
    [
        ({"allowed_origin": ["bad origin"]}, {}, "--allowed-origin"),
        ({}, {"MCPKIT_ALLOWED_ORIGINS": "nope"}, "MCPKIT_ALLOWED_ORIGINS"),
        ({"allowed_host": ["a:b:c"]}, {}, "--allowed-host"),
        ({}, {"MCPKIT_ALLOWED_HOSTS": "a:b:c"}, "MCPKIT_ALLOWED_HOSTS"),
    ],
)
def test_a_malformed_allow_list_is_refused_with_the_settings(
    given: dict[str, object], env: dict[str, str], source: str
) -> None:
    with pytest.raises(ValueError, match=f"^{source}: ") as caught:
        run_settings(_args(transport="http", **given), env)
    assert (
        "bad origin" in str(caught.value)
        or "nope" in str(caught.value)
        or "a:b:c" in str(caught.value)
    )


def test_a_malformed_allowed_origin_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # Before: a traceback from inside the serving code, exit 1.
    (tmp_path / "app.py").write_text('from mcpkit import Server\nserver = Server("x")\n')
    argv = [MCPKIT, "run", str(tmp_path / "app.py"), "-t", "http", "--port", "0"]
    done = subprocess.run(
        [*argv, "--allowed-origin", "bad origin"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "mcpkit run: --allowed-origin: allowed origin 'bad origin' is not scheme://host[:port]"
    ]


def test_max_sessions_from_the_option_or_the_environment() -> None:
    env = {"MCPKIT_MAX_SESSIONS": "50"}
    assert run_settings(_args(transport="http"), env)["max_sessions"] == 50
    assert run_settings(_args(transport="http", max_sessions=7), env)["max_sessions"] == 7


@pytest.mark.anyio
async def test_max_sessions_bounds_the_sessions_of_the_process(tmp_path: Path) -> None:
    # One session at most: a second client's session makes room by ending the idle first.
    (tmp_path / "app.py").write_text('from mcpkit import Server\nserver = Server("x")\n')
    argv = [MCPKIT, "run", str(tmp_path / "app.py"), "-t", "http", "--port", "0"]
    argv += ["--json-response", "--max-sessions", "1"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    served = Served(proc)
    try:
        url = await anyio.to_thread.run_sync(served.url)
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        with anyio.fail_after(20):
            async with httpx.AsyncClient(timeout=10) as c:
                first = (await c.post(url, json=INIT, headers=ACCEPT)).headers["mcp-session-id"]
                old = {**ACCEPT, "mcp-session-id": first, "mcp-protocol-version": "2025-11-25"}
                assert (await c.post(url, json=ping, headers=old)).status_code == 200
                second = await c.post(url, json=INIT, headers=ACCEPT)
                assert second.status_code == 200 and second.headers["mcp-session-id"] != first
                assert (await c.post(url, json=ping, headers=old)).status_code == 404
    finally:
        proc.terminate()
        await anyio.to_thread.run_sync(proc.wait, 10)
        served.close()


def test_a_max_sessions_under_one_is_refused() -> None:
    done = subprocess.run(
        [MCPKIT, "run", "app.py", "-t", "http", "--max-sessions", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--max-sessions='0': a whole number of at least 1" in done.stderr
