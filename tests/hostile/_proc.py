"""A real stdio server process (``mcpkit run FILE``), driven with raw JSON-RPC lines.

Raw lines, not our client: hostile tests send what a well-behaved client never would, and
read exactly what the server answered. Every wait is bounded.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import orjson
from tests.server._harness import HANDSHAKE

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))


class StdioServer:
    """``mcpkit run`` on a server source, with line-level access to its stdin and stdout."""

    def __init__(self, tmp_path: Path, source: str, *, env: dict[str, str] | None = None) -> None:
        path = tmp_path / "hostile_server.py"
        path.write_text(textwrap.dedent(source))
        self.proc = subprocess.Popen(
            [MCPKIT, "run", str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self._buf = b""
        self.answers: dict[Any, dict[str, Any]] = {}

    def __enter__(self) -> StdioServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, *messages: dict[str, Any]) -> None:
        self.send_raw(b"".join(orjson.dumps(m) + b"\n" for m in messages))

    def handshake(self) -> None:
        self.send(*HANDSHAKE)
        assert "result" in self.answer(1)

    def call(self, rid: Any, name: str, arguments: dict[str, Any] | None = None) -> None:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})

    def answer(self, rid: Any, timeout: float = 10.0) -> dict[str, Any]:
        """The server's answer to request ``rid``, waiting at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while rid not in self.answers:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no answer to {rid!r} within {timeout}s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise AssertionError(f"the server closed stdout before answering {rid!r}")
            self._buf += chunk
            *lines, self._buf = self._buf.split(b"\n")
            for line in lines:
                if line.strip():
                    msg = orjson.loads(line)
                    if "id" in msg and "method" not in msg:
                        self.answers[msg["id"]] = msg
        return self.answers[rid]

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def exit_status(self, timeout: float) -> int:
        """Wait at most ``timeout`` seconds for the process to exit on its own."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the server did not exit within {timeout}s") from None
