"""mcpkit's server for the benchmark workload, written the way a user would write it.

    python bench/servers/mcpkit_server.py                                  # stdio
    python bench/servers/mcpkit_server.py --http 18950 [--json] [--stateless] [--server granian]
    ... [--tools N] [--async-tools]                                        # N extra synthetic tools

Same tools and command line as the peers' servers of the shared harness: ``echo(text) -> str``,
``big_out() -> str`` (1 MiB), ``big_in(data: str) -> str`` (its length). Plain typed ``def``
functions and SDK defaults, as in the peers (``--async-tools`` registers ``async def`` ones).
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
    """Register the three bench tools (plain or ``async def``) and ``tools`` synthetic ones."""
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
    # The harness gives every peer this flag (the official SDK's stateless_http): for us it
    # is sessionless HTTP, not the stateless era (that is the driver's --modern).
    parser.add_argument("--stateless", action="store_true", help="HTTP: no sessions")
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--async-tools", action="store_true")
    parser.add_argument(
        "--parser",
        choices=["h11", "httptools"],
        default=None,
        help="HTTP: uvicorn's HTTP parser (default: uvicorn's choice, httptools when installed)",
    )
    parser.add_argument(
        "--server",
        choices=["uvicorn", "granian"],
        default=None,
        help="HTTP: the server under the app (default: uvicorn; granian: its RSGI interface)",
    )
    args = parser.parse_args()
    setup(args.tools, args.async_tools)
    if args.http is None:
        server.run()
        return
    options: dict[str, object] = {"port": args.http, "host": "127.0.0.1"}
    if args.json:
        options["json_response"] = True
    if args.stateless:
        options["sessionless"] = True
    if args.parser is not None:
        options["uvicorn_options"] = {"http": args.parser}
    if args.server is not None:
        options["http_server"] = args.server
    server.run("http", **options)


if __name__ == "__main__":
    main()
