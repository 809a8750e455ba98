"""Session churn: bursts of sessions that all expire at once, and the memory they leave.

``python -m bench.session_churn [--rounds 10] [--sessions 10000]``: each round opens that many
Streamable HTTP sessions (``initialize``) against one app in this process (no socket: the
in-process ASGI client), drops them all, collects garbage and trims the C heap, then prints
the peak RSS of the round, the RSS left after it, and how many Python objects are alive. A
leak shows as a growing object count or a growing peak; see docs/performance-notes.md.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import sys

import anyio
import orjson

from mcpkit import Server, create_http_app
from mcpkit.lowlevel import ASGIClient

URL = "http://127.0.0.1/mcp"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "churn", "version": "1"},
        },
    }
)


def rss_mib() -> float:
    """This process's resident memory."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def trim() -> None:
    """Give freed C-heap memory back to the OS (glibc), so RSS shows what is still held."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:  # not glibc
        pass


async def churn(rounds: int, sessions: int) -> None:
    server = Server("churn")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    app = create_http_app(server, session_idle_timeout=3600, max_sessions=sessions)
    print("round  peak MiB  after MiB  live objects")
    async with ASGIClient(app) as http:
        for n in range(rounds):
            for _ in range(sessions):
                resp = await http.post(URL, content=INIT, headers=HEADERS)
                if resp.status_code != 200:
                    raise SystemExit(f"initialize failed: HTTP {resp.status_code}")
            peak = rss_mib()
            for entry in list(app.sessions.values()):
                await app.registry.terminate(entry)
            with anyio.fail_after(30):
                # The server forgets a session once its task has unwound.
                while server.sessions:  # noqa: ASYNC110 - no event for "all sessions ended"
                    await anyio.sleep(0.01)
            gc.collect()
            trim()
            print(
                f"{n:5d}  {peak:8.0f}  {rss_mib():9.0f}  {len(gc.get_objects()):12,d}", flush=True
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.session_churn")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=10_000)
    args = parser.parse_args(argv)
    anyio.run(churn, args.rounds, args.sessions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
