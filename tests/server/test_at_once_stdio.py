"""Over real stdio (a server process, our client): the calls of a sync tool its author
runs on the loop (``inline=True``) are served by the session's reader, each call of a sync
tool left to a worker thread in its own task.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from mcpkit import Client

pytestmark = pytest.mark.anyio

SERVER = """
import anyio

from mcpkit import Server

server = Server("at-once-stdio")


def where() -> str:
    \"\"\"The name of the task serving the call ("thread" in a worker thread).\"\"\"
    try:
        return anyio.get_current_task().name
    except RuntimeError:
        return "thread"


server.add_tool(where, name="on_loop", inline=True)
server.add_tool(where, name="in_thread")


if __name__ == "__main__":
    server.run()
"""


async def test_an_inline_sync_tool_is_served_by_the_stdio_reader(tmp_path: Path) -> None:
    script = tmp_path / "where.py"
    script.write_text(SERVER)
    with anyio.fail_after(30):
        async with Client([sys.executable, str(script)]) as client:
            names, threads = [], []
            for _ in range(12):
                result = await client.call_tool("on_loop", {})
                names.append(result.content[0].text)  # type: ignore[union-attr]
                result = await client.call_tool("in_thread", {})
                threads.append(result.content[0].text)  # type: ignore[union-attr]
    # On the loop from the first call: in one task for every call (the reader's), where a
    # task per request would give each call a name of its own. The other, always a thread.
    assert "thread" not in names and len(set(names)) == 1, names
    assert threads == ["thread"] * 12
