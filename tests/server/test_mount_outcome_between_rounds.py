"""Issue 33: a mounted (handshake-era) server's call that ends while the hub's 2026-07-28
client is away answering its questions -- an upstream that gave up waiting for its sampling
answer, or answered without it -- is kept for that client's retry, which gets the outcome.

Before, the hub forgot such a call at once, and the retry failed with "the mounted server's
call these input responses answer is no longer waiting". Over real processes: ``mcpkit run
hub.py --transport http`` mounting a raw stdio script; the script and the test's sampling
handler step in turn over a loopback socket (no sleeps): the client comes back only once the
hub has seen the call end.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import SocketAttribute
from anyio.streams.buffered import BufferedByteReceiveStream
from tests._rawserver import PRELUDE
from tests._served import Served

from mcpkit import Client
from mcpkit.types import TextContent

pytestmark = pytest.mark.anyio

# Speaks 2025-11-25 by hand. Inside its tool call it asks for a sampling, then (told "go" by
# the test, which holds the client's answer meanwhile) answers the call without waiting for
# the sampling answer. The hub answers the sampling request with an error once the call has
# ended there; that answer tells the test so.
UPSTREAM = (
    PRELUDE
    + """
import socket

link = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
told = link.makefile("r")

for msg in messages():
    method, rid = msg.get("method"), msg.get("id")
    if handshake(msg, "hasty", ["ask"]):
        continue
    if method == "tools/call":
        send({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage",
              "params": {"messages": [], "maxTokens": 1}})
        assert told.readline() == "go\\n"
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "content": [{"type": "text", "text": "answered without it"}]}})
    elif rid == "s1" and method is None:
        link.sendall(b"ended\\n" if "error" in msg else b"answered\\n")
    else:
        not_found(msg)
"""
)

HUB = """
import sys

from mcpkit import Client, Server

server = Server("hub")
server.mount(Client([sys.executable, {upstream!r}, {port!r}]), prefix="h")
"""


async def test_a_call_ended_between_rounds_answers_the_retry(tmp_path: Path) -> None:
    (tmp_path / "upstream.py").write_text(UPSTREAM)
    async with await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0) as links:
        port = links.extra(SocketAttribute.local_port)
        hub = tmp_path / "hub.py"
        hub.write_text(HUB.format(upstream=str(tmp_path / "upstream.py"), port=str(port)))
        command = [sys.executable, "-m", "mcpkit", "run", str(hub), "--transport", "http"]
        proc = subprocess.Popen(  # noqa: ASYNC220 - the hub's process, started from the test
            [*command, "--port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        served = Served(proc)
        try:
            with anyio.fail_after(60):
                link = await links.listeners[0].accept()  # type: ignore[attr-defined]
                lines = BufferedByteReceiveStream(link)
                url = await anyio.to_thread.run_sync(served.url)
                asked: list[str] = []

                async def sample(params: Any, ctx: Any) -> str:
                    # The hub ended its request with this question; before the client comes
                    # back with the answer, the upstream answers the call.
                    asked.append("sampling")
                    await link.send(b"go\n")
                    assert await lines.receive_until(b"\n", 100) == b"ended"
                    return "too late to matter"

                async with Client(url, sampling_handler=sample) as c:
                    assert c.protocol_version == "2026-07-28"
                    result = await c.call_tool("h_ask")
                assert asked == ["sampling"]
                [said] = result.content
                assert not result.is_error and isinstance(said, TextContent)
                assert said.text == "answered without it"
                await link.aclose()
        finally:
            proc.terminate()
            await anyio.to_thread.run_sync(proc.wait, 20)
            served.close()
    assert "no longer waiting" not in served.stderr()
