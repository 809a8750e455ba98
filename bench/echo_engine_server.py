"""Bench peer: a bare JSON-RPC engine on stdio that answers every request with its params.

python bench/echo_engine_server.py
"""

from __future__ import annotations

from typing import Any

import anyio

from mcpkit._incoming import IncomingRequest
from mcpkit._jsonrpc import JSONRPCEngine
from mcpkit._transports import stdio_server


async def echo(req: IncomingRequest) -> Any:
    return req.params or {}


async def main() -> None:
    async with stdio_server() as transport:
        await JSONRPCEngine(transport, on_request=echo, name="echo-server").run()


if __name__ == "__main__":
    anyio.run(main)
