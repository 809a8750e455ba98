"""The official SDK's high-level server (``mcp.server.mcpserver.MCPServer``) on stdio.

Our client is tested against it in ``test_official_sdk_foundation.py``:

    python tests/interop/official_server.py

Tools: ``add(a: int, b: int) -> int`` and ``shout(text: str) -> str``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("official-interop", version="0.0.1", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


if __name__ == "__main__":
    server.run()
