"""``server.run("sse", redis=...)``: the legacy transport keeps its sessions in the process; the
same settings that serve ``"http"`` start it, with a warning (before: a TypeError from the
SSE app). A real process, started as a user starts a server file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests._served import Served

SERVER = """
from mcpkit import Server

server = Server("legacy")

@server.tool()
def echo(text: str) -> str:
    '''Says it back.'''
    return text

if __name__ == "__main__":
    server.run("sse", host="127.0.0.1", port=0, redis="redis://127.0.0.1:1/0")
"""


def test_sse_with_redis_serves_in_process_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "legacy.py"
    path.write_text(textwrap.dedent(SERVER))
    proc = subprocess.Popen(
        [sys.executable, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    served = Served(proc)
    try:
        url = served.url()
        assert url.startswith("http://127.0.0.1:")
        assert (
            "legacy HTTP+SSE keeps its sessions in this process: Redis 127.0.0.1:1/0 is not used"
            in served.stderr()
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        served.close()
