"""Run the shared neutral driver (``mcpdrive.py``) with one fix to its SSE parser, and
optionally speaking revision 2026-07-28 (stateless) instead of 2025-11-25.

    python bench/drive.py HARNESS_DIR/driver/mcpdrive.py http --url ... [driver args]
    python bench/drive.py --modern HARNESS_DIR/driver/mcpdrive.py http --url ... [driver args]

The driver hands every SSE event's data to ``orjson.loads``, including events whose data is
empty. Such events are not messages: the SSE specification (HTML, "dispatch the event") drops
an event whose data buffer is empty, and MCP 2025-11-25 servers that support resumption send
one first on each stream (an event ID with empty data, to prime reconnection), as mcpkit does
by default. This wrapper skips empty events and changes nothing else; peers that never send
them are measured exactly as by the unwrapped driver.

``--modern`` (HTTP only): the driver's handshake becomes one ``server/discover`` (no session,
no ``notifications/initialized``), and every request carries what 2026-07-28 asks of a
stateless client: the protocol version, client capabilities and client info in
``params._meta``, and the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers.
Everything else (connections, timing, checks) is the driver's own code, so a modern case is
measured exactly like a 2025 one.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from typing import Any

MODERN = "2026-07-28"
_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "mcpdrive", "version": "0.1"},
}


def _modern_http(drive: Any) -> None:
    """Make the driver's HTTP connections speak 2026-07-28 (see the module docstring)."""
    conn = drive.HttpConn
    original_post = conn.post

    async def post(self: Any, obj: dict[str, Any]) -> Any:
        method = obj.get("method")
        if method is None or "id" not in obj:
            self._extra_head = b""
            return await original_post(self, obj)
        params = dict(obj.get("params") or {})
        params["_meta"] = {**params.get("_meta", {}), **_META}
        name = params.get("name") if method in ("tools/call", "prompts/get") else None
        extra = f"Mcp-Protocol-Version: {MODERN}\r\nMcp-Method: {method}\r\n"
        if name is not None:
            extra += f"Mcp-Name: {name}\r\n"
        # The driver assembles and writes the head itself; the extra headers are spliced
        # into that write (see open_ below), kept for a retry on a fresh connection.
        self._extra_head = extra.encode()
        return await original_post(self, {**obj, "params": params})

    conn.post = post
    original_open = conn._open

    async def open_(self: Any) -> None:
        await original_open(self)
        writer = self.w
        write = writer.write

        def write_with_headers(data: bytes) -> None:
            extra = getattr(self, "_extra_head", b"")
            if extra and data.startswith(b"POST "):
                head, sep, body = data.partition(b"\r\n\r\n")
                data = head + b"\r\n" + extra.rstrip(b"\r\n") + sep + body
            write(data)

        writer.write = write_with_headers

    conn._open = open_

    async def discover(c: Any) -> dict[str, Any]:
        result: dict[str, Any] = await c.request("server/discover", {})
        if MODERN not in result.get("supportedVersions", []):
            raise RuntimeError(f"the server does not offer {MODERN}: {result}")
        return result

    drive.initialize = discover


def main() -> None:
    modern = "--modern" in sys.argv
    if modern:
        sys.argv.remove("--modern")
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
    if modern:
        _modern_http(drive)
    drive.main()


if __name__ == "__main__":
    main()
