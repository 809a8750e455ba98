"""``Server.run()`` serves on uvloop when it is installed, on the standard loop when told not to."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from tests.server._harness import HANDSHAKE

from mcpkit._transports._loop import uvloop_wanted

SERVER = textwrap.dedent(
    """
    import asyncio
    from mcpkit import Server

    server = Server("loop")

    @server.tool()
    async def loop_kind() -> str:
        '''The module of the running event loop's class.'''
        return type(asyncio.get_running_loop()).__module__

    server.run()
    """
)

HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None


def _loop_of_server(tmp_path: Path, env: dict[str, str]) -> str:
    script = tmp_path / "loop_server.py"
    script.write_text(SERVER)
    messages = [
        *HANDSHAKE,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "loop_kind"}},
    ]
    proc = subprocess.run(
        [sys.executable, str(script)],
        input=b"".join(orjson.dumps(m) + b"\n" for m in messages),
        capture_output=True,
        env={**os.environ, **env},
        timeout=30,
        check=True,
    )
    answers = {m["id"]: m for m in map(orjson.loads, proc.stdout.splitlines())}
    return str(answers[2]["result"]["content"][0]["text"])


@pytest.mark.skipif(not HAVE_UVLOOP, reason="uvloop is not installed (the [http] extra brings it)")
def test_run_uses_uvloop_when_installed(tmp_path: Path) -> None:
    assert _loop_of_server(tmp_path, {"MCPKIT_UVLOOP": "1"}).startswith("uvloop")


def test_mcpkit_uvloop_0_keeps_the_standard_loop(tmp_path: Path) -> None:
    assert _loop_of_server(tmp_path, {"MCPKIT_UVLOOP": "0"}).startswith("asyncio")


def test_uvloop_wanted_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for off in ("0", "false", "off", "no"):
        monkeypatch.setenv("MCPKIT_UVLOOP", off)
        assert uvloop_wanted() is False
    monkeypatch.setenv("MCPKIT_UVLOOP", "1")
    assert uvloop_wanted() is HAVE_UVLOOP
