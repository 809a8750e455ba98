"""The floor of the front-end comparison on granian (``python -m bench.frontends``): the
shared harness's floor handler (``floor/core.py``: JSON-RPC with orjson, no MCP SDK) as a
bare RSGI application with JSON answers, what ``floor/asgi_server.py`` is on uvicorn.

    python bench/servers/rsgi_floor.py --port 8941

granian's embeddable server, one worker, on the standard asyncio loop (the ASGI floor runs
uvicorn with ``loop="asyncio"`` too).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
from pathlib import Path
from typing import Any

HARNESS = Path(
    os.environ.get(
        "MCP_BENCH_HARNESS", Path(__file__).resolve().parents[2].parent / "shared" / "bench"
    )
)
sys.path.insert(0, str(HARNESS / "floor"))

from core import Handler  # noqa: E402  (the harness's floor, found on the path above)


def make_app(handler: Any) -> Any:
    async def app(scope: Any, proto: Any) -> None:
        body = await proto()
        out = handler.handle_bytes(body)
        if out is None:
            proto.response_bytes(202, [], b"")
            return
        headers = [("content-type", "application/json")]
        if b'"initialize"' in body[:200]:
            headers.append(("mcp-session-id", uuid.uuid4().hex))
        proto.response_bytes(200, headers, out)

    return app


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=8941)
    p.add_argument("--tools", type=int, default=0)
    a = p.parse_args()
    from granian.constants import HTTPModes, Interfaces
    from granian.log import LogLevels
    from granian.server.embed import Server

    server = Server(
        make_app(Handler(a.tools)),
        address="127.0.0.1",
        port=a.port,
        interface=Interfaces.RSGI,
        http=HTTPModes.http1,
        websockets=False,
        log_level=LogLevels.error,
    )
    asyncio.run(server.serve())


if __name__ == "__main__":
    main()
