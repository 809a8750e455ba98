"""A Streamable HTTP server under real uvicorn on 127.0.0.1, in its own process, for memory tests.

Usage: ``python _memory_server.py PORT IDLE_TIMEOUT``. Serves ``DemoServer`` at ``/mcp`` with
``create_http_app(session_idle_timeout=IDLE_TIMEOUT)`` and, beside it, a few test-only routes
(the test reads the process's RSS itself, from ``/proc/<pid>/status``):

- ``GET /_test/count``: ``{"sessions": n}`` (the app's session table; cheap);
- ``GET /_test/measure``: after ``gc.collect()``: sessions, sessions in the event store,
  gc-tracked objects, pymalloc blocks and glibc heap bytes in use;
- ``POST /_test/advance`` (body: seconds): moves the registry's clock on. It is a fake one,
  still unless moved, so sessions go idle only when the test says so (the reaper, which
  looks every ``IDLE_TIMEOUT / 4`` seconds, then ends them);
- ``POST /_test/trim``: ``malloc_trim(0)``, so RSS shows what is in use rather than what the
  C allocator keeps cached.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import sys
from typing import Any

import uvicorn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _http_helpers import DemoServer

from mcpkit._app import create_http_app


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


try:
    _libc: Any = ctypes.CDLL(None)
    _libc.mallinfo2.restype = _MallInfo2
    _libc.malloc_trim.argtypes = [ctypes.c_size_t]
except (OSError, AttributeError):  # not glibc >= 2.33
    _libc = None


def heap_in_use() -> int | None:
    """Bytes handed out by malloc (small-block heap + mmapped chunks), or None without glibc."""
    if _libc is None:
        return None
    m = _libc.mallinfo2()
    return int(m.uordblks + m.hblkhd)


def main() -> None:
    port, idle_timeout = int(sys.argv[1]), float(sys.argv[2])
    demo = DemoServer()
    demo.keep_sessions = False  # the demo's own list would hold every session
    app = create_http_app(demo, session_idle_timeout=idle_timeout)
    now = [1000.0]
    app.registry.clock = lambda: now[0]
    store = app.event_store
    assert store is not None

    async def reply(send: Any, data: dict[str, Any]) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": json.dumps(data).encode()})

    async def shim(scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith("/_test/"):
            await app(scope, receive, send)
            return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        if path == "/_test/advance":
            now[0] += float(body)
        elif path == "/_test/trim" and _libc is not None:
            _libc.malloc_trim(0)
        elif path == "/_test/measure":
            gc.collect()
            await reply(
                send,
                {
                    "sessions": len(app.sessions),
                    "stored": store.session_count(),
                    "objects": len(gc.get_objects()),
                    "blocks": sys.getallocatedblocks(),
                    "heap": heap_in_use(),
                },
            )
            return
        await reply(send, {"sessions": len(app.sessions)})

    uvicorn.run(
        shim,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )


if __name__ == "__main__":
    main()
