"""The benchmark server: the tools the shared harness (bench/README) calls, written as a user would.

python examples/servers/bench.py                                  # stdio
python examples/servers/bench.py --http 8931 [--json] [--sessionless]
... [--tools N] [--async-tools]                                   # N extra synthetic tools
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from mcpkit import Server

BIG = "x" * (1 << 20)
server = Server("bench-mcpkit", version="1.0.0")


def echo(text: str) -> str:
    """Echo the text back."""
    return text


def big_out() -> str:
    """Return 1 MiB of text."""
    return BIG


def big_in(data: str) -> str:
    """Take a large argument, return its length."""
    return str(len(data))


async def echo_async(text: str) -> str:
    """Echo the text back."""
    return text


async def big_out_async() -> str:
    """Return 1 MiB of text."""
    return BIG


async def big_in_async(data: str) -> str:
    """Take a large argument, return its length."""
    return str(len(data))


def setup(tools: int = 0, use_async: bool = False) -> Server:
    fns: tuple[Callable[..., Any], ...] = (
        (echo_async, big_out_async, big_in_async) if use_async else (echo, big_out, big_in)
    )
    for name, fn in zip(("echo", "big_out", "big_in"), fns, strict=True):
        server.add_tool(fn, name=name)
    for i in range(tools):

        def tool(x: int, y: str = "") -> str:
            return f"{x}{y}"

        server.add_tool(tool, name=f"tool_{i}", description=f"Synthetic tool number {i}.")
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    parser.add_argument("--json", action="store_true", help="HTTP: answer POSTs with JSON bodies")
    parser.add_argument("--sessionless", action="store_true", help="HTTP: no sessions")
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--async-tools", action="store_true")
    args = parser.parse_args()
    setup(args.tools, args.async_tools)
    if args.http is None:
        server.run()
        return
    server.run(
        "http",
        port=args.http,
        host="127.0.0.1",
        json_response=bool(args.json),
        sessionless=bool(args.sessionless),
    )


if __name__ == "__main__":
    main()
