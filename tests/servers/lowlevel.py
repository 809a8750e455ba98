"""A server written on the session layer alone (no high-level API), for foundation tests.

    python tests/servers/lowlevel.py [--versions 2025-06-18,2024-11-05] [--max-message-size N]

Tools: echo(text), slow(seconds) (cancellable), print_to_stdout(text) (a stray print),
spam_stderr(kib), exit(code) (dies mid-call), spawn_child() (starts a grandchild that
sleeps, returns its pid), ask_client(method) (sends a request to the client).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Any

import anyio

from mcpkit._exceptions import InvalidParams
from mcpkit._session import RequestContext, ServerSession
from mcpkit._transports import stdio_server
from mcpkit.types._revisions import SUPPORTED_PROTOCOL_VERSIONS

TOOLS = [
    {"name": n, "description": d, "inputSchema": {"type": "object", "properties": p}}
    for n, d, p in [
        ("echo", "Echo the text back.", {"text": {"type": "string"}}),
        ("slow", "Sleep, reporting progress.", {"seconds": {"type": "number"}}),
        ("print_to_stdout", "print() to stdout.", {"text": {"type": "string"}}),
        ("spam_stderr", "Write KiB to stderr.", {"kib": {"type": "integer"}}),
        ("exit", "Exit the process.", {"code": {"type": "integer"}}),
        ("spawn_child", "Start a sleeping grandchild.", {}),
        ("ask_client", "Send a request to the client.", {"method": {"type": "string"}}),
    ]
]


def text(s: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": s}]}


async def list_tools(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
    return {"tools": TOOLS}


async def call_tool(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
    assert params is not None
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "slow":
        seconds = float(args.get("seconds", 1))
        steps = 10
        for i in range(steps):
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
            await anyio.sleep(seconds / steps)
        return text("slept")
    if name == "print_to_stdout":
        print(args.get("text", "stray"))
        sys.stdout.flush()
        os.write(1, b"raw fd 1 write\n")
        return text("printed")
    if name == "spam_stderr":
        chunk = b"e" * 1023 + b"\n"
        for _ in range(int(args.get("kib", 1))):
            os.write(2, chunk)
        return text("spammed")
    if name == "exit":
        os._exit(int(args.get("code", 3)))
    if name == "spawn_child":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # noqa: ASYNC220
        return text(str(child.pid))
    if name == "ask_client":
        result = await ctx.send_request(str(args["method"]), {}, timeout=10)
        import json

        return text(json.dumps(result))
    raise InvalidParams(message=f"Unknown tool: {name}")


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--versions", default=",".join(SUPPORTED_PROTOCOL_VERSIONS))
    ap.add_argument("--max-message-size", type=int, default=64 * 1024 * 1024)
    ap.add_argument("--backend", default="asyncio")
    return ap.parse_args()


async def main(ns: argparse.Namespace) -> None:
    async with stdio_server(max_message_size=ns.max_message_size) as transport:
        session = ServerSession(
            transport,
            server_info={"name": "lowlevel", "version": "0.1"},
            capabilities={"tools": {}},
            handlers={"tools/list": list_tools, "tools/call": call_tool},
            supported_versions=tuple(ns.versions.split(",")),
        )
        await session.run()


if __name__ == "__main__":
    args = parse()
    anyio.run(main, args, backend=args.backend)
