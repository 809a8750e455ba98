"""A 2026-07-28 server that declares ``tools.listChanged`` but has no
``subscriptions/listen`` (answers -32601): the client stops asking, quietly.

Before: the client logged ``the subscriptions/listen stream ended: Method not found
(-32601)`` as a warning (a hub mounting such a server printed it on stderr), and asked again
at every refresh. A real stdio process (a small script, no SDK) counts the listens it got.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import anyio
import pytest
from tests._rawserver import PRELUDE

from mcpkit import Client

pytestmark = pytest.mark.anyio

# Serves server/discover, tools/list and tools/call (whose text is how many
# subscriptions/listen requests it got); anything else is -32601.
SCRIPT = (
    PRELUDE
    + """
listens = 0

for req in messages():
    method, rid = req.get("method"), req.get("id")
    if rid is None:
        continue
    result = None
    if method == "server/discover":
        result = {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": True}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "nolisten", "version": "0"}},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "listens", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": str(listens)}]}
    if result is not None:
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", **result}})
        continue
    listens += method == "subscriptions/listen"
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
"""
)


async def test_no_listen_method_means_no_warning_and_no_second_ask(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "nolisten.py"
    script.write_text(SCRIPT)
    caplog.set_level(logging.DEBUG, logger="mcpkit.client")

    async def on_change(kind: str) -> None:
        pass

    with anyio.fail_after(30):
        async with Client([sys.executable, str(script)], list_changed_handler=on_change) as c:
            assert c.session.stateless  # the 2026-07-28 revision, which listens
            assert c.subscription is None
            # Asked again (a refresh): not sent again to a server that has no such method.
            assert await c.listen() is None
            result = await c.call_tool("listens")
            assert result.content[0].text == "1"  # type: ignore[union-attr]
    said = [r for r in caplog.records if "subscriptions/listen" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.DEBUG], [r.getMessage() for r in said]
