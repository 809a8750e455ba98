"""Run the shared neutral driver (``mcpdrive.py``) with one fix to its SSE parser.

    python bench/drive.py HARNESS_DIR/driver/mcpdrive.py http --url ... [driver args]

The driver hands every SSE event's data to ``orjson.loads``, including events whose data is
empty. Such events are not messages: the SSE specification (HTML, "dispatch the event") drops
an event whose data buffer is empty, and MCP 2025-11-25 servers that support resumption send
one first on each stream (an event ID with empty data, to prime reconnection), as mcpkit does
by default. This wrapper skips empty events and changes nothing else; peers that never send
them are measured exactly as by the unwrapped driver.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from typing import Any


def main() -> None:
    path = sys.argv.pop(1)
    spec = importlib.util.spec_from_file_location("mcpdrive", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the driver from {path}")
    drive: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(drive)
    parse = drive.sse_data

    def sse_data(body: bytes) -> Iterator[Any]:
        for data in parse(body):
            if len(data):
                yield data

    drive.sse_data = sse_data
    drive.main()


if __name__ == "__main__":
    main()
