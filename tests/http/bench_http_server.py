"""Bench peer for ../shared/bench's driver: a ServerSession over our Streamable HTTP app.

    python tests/http/bench_http_server.py --http PORT [--json] [--stateless]

Tools ``echo(text)``, ``big_out()`` (1 MiB) and ``big_in(data)``, served from dicts (the HTTP
layer is what is measured, not the high-level Server).
"""

from __future__ import annotations

import argparse
from typing import Any

from mcpkit._app import serve_http
from mcpkit._exceptions import InvalidParams
from mcpkit._session import RequestContext, ServerSession
from mcpkit._transports import Transport

BIG = "x" * (1 << 20)
TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "big_out",
        "description": "1 MiB of text.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "big_in",
        "description": "Length of data.",
        "inputSchema": {"type": "object", "properties": {"data": {"type": "string"}}},
    },
]


async def list_tools(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
    return {"tools": TOOLS}


async def call_tool(ctx: RequestContext, params: dict[str, Any] | None) -> Any:
    name = (params or {}).get("name")
    args = (params or {}).get("arguments") or {}
    if name == "echo":
        text = str(args.get("text", ""))
    elif name == "big_out":
        text = BIG
    elif name == "big_in":
        text = str(len(str(args.get("data", ""))))
    else:
        raise InvalidParams(message=f"unknown tool {name!r}")
    return {"content": [{"type": "text", "text": text}], "isError": False}


class BenchServer:
    def create_session(self, transport: Transport) -> ServerSession:
        return ServerSession(
            transport,
            server_info={"name": "mcpkit-http-bench", "version": "0"},
            capabilities={"tools": {"listChanged": False}},
            handlers={"tools/list": list_tools, "tools/call": call_tool},
        )


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--http", type=int, required=True)
    p.add_argument("--json", action="store_true")
    p.add_argument("--stateless", action="store_true")
    p.add_argument("--parser", default="h11", choices=["h11", "httptools"])
    # The shared driver's SSE parser chokes on the (legitimate) empty data of priming events.
    p.add_argument("--no-resume", action="store_true", help="no event ids / priming events")
    a = p.parse_args()
    serve_http(
        BenchServer(),
        port=a.http,
        json_response=a.json,
        sessionless=a.stateless,  # the bench harness's flag, shared with the peers
        resumable=not a.no_resume,
        max_body_size=8 << 20,
        uvicorn_options={"http": a.parser},
    )
