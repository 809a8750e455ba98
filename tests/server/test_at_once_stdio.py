"""Over real stdio (a server process, our client): a short sync tool's calls are served by
the session's reader once the tool has shown itself short, each in its own task before.

The server process measures its tool's runs with a clock of its own (each reading 1 µs
later than the one before), so "short" does not depend on the machine's load.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from mcpkit import Client
from mcpkit._server import _threads

pytestmark = pytest.mark.anyio

SERVER = """
import itertools

import anyio

from mcpkit import Server
from mcpkit._server import _threads

_threads.perf_counter = itertools.count(0, 1e-6).__next__  # every run measures 1 µs

server = Server("at-once-stdio")


@server.tool()
def where() -> str:
    \"\"\"The name of the task serving the call ("thread" in a worker thread).\"\"\"
    try:
        return anyio.get_current_task().name
    except RuntimeError:
        return "thread"


if __name__ == "__main__":
    server.run()
"""


async def test_a_short_sync_tool_is_served_by_the_stdio_reader(tmp_path: Path) -> None:
    script = tmp_path / "where.py"
    script.write_text(SERVER)
    with anyio.fail_after(30):
        async with Client([sys.executable, str(script)]) as client:
            names = []
            for _ in range(_threads.INLINE_AFTER + 6):
                result = await client.call_tool("where", {})
                names.append(result.content[0].text)  # type: ignore[union-attr]
    # Threads while it shows itself short, then on the loop: in one task for every call
    # (the reader's), where a task per request would give each call a name of its own.
    assert names[: _threads.INLINE_AFTER] == ["thread"] * _threads.INLINE_AFTER
    served = names[_threads.INLINE_AFTER + 1 :]
    assert "thread" not in served and len(set(served)) == 1, names
