"""The benchmark's server takes ``--parser h11|httptools`` (docs/performance-notes.md's same-stack
row runs it so, with ``MCPKIT_UVLOOP=0``): each serves a call over a real socket with that
parser loaded, and an unknown parser is refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests._served import Served

from mcpkit import SyncClient

SERVER = Path(__file__).resolve().parents[2] / "bench" / "servers" / "mcpkit_server.py"


@pytest.mark.parametrize("parser", ["h11", "httptools"])
def test_each_parser_serves_a_call(parser: str) -> None:
    argv = [sys.executable, str(SERVER), "--http", "0", "--json", "--parser", parser]
    env = {**os.environ, "MCPKIT_UVLOOP": "0"}
    served = Served.start(argv, env=env)
    proc = served.proc
    try:
        with SyncClient(served.url(), timeout=20) as client:
            assert client.call_tool("echo", {"text": parser}).content[0].text == parser  # type: ignore[union-attr]
        # The parser uvicorn runs: httptools' extension is loaded only when it is the one.
        maps = Path(f"/proc/{proc.pid}/maps").read_text()
        assert ("httptools" in maps) == (parser == "httptools")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        served.close()


def test_an_unknown_parser_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, str(SERVER), "--http", "0", "--parser", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "invalid choice: 'nope'" in done.stderr
