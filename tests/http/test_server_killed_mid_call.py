"""A server process killed while a call is in flight: the client raises TransportError, as
docs/client.md promises for a server that cannot be reached "at connect or later", on both
eras (issue 33) -- not a ProtocolError about resuming a stream."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from tests._served import Served

from mcpkit import Client, ProtocolError, TransportError
from mcpkit._client._util import answer_lost
from mcpkit._http._client_common import lost_server_error
from mcpkit._transports._base import ANSWER_LOST, LOST

pytestmark = pytest.mark.anyio

SERVER = """
import anyio
from mcpkit import Context, Server

server = Server("doomed")


@server.tool()
async def wait(ctx: Context) -> str:
    await ctx.report_progress(1, 2)  # tells the test the call is under way
    await anyio.sleep(60)
    return "never"
"""


@pytest.mark.slow  # 2025: the client retries resuming the stream a few times first
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_killed_server_is_a_transport_error(tmp_path: Path, revision: str) -> None:
    (tmp_path / "doomed.py").write_text(SERVER)
    served = Served.start(  # started once, before any await
        [sys.executable, "-m", "mcpkit", "run", "doomed.py", "-t", "http", "--port", "0"],
        cwd=tmp_path,
    )
    proc = served.proc
    try:
        url = served.url()
        started = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            started.set()

        async def kill_once_started() -> None:
            await started.wait()
            proc.kill()

        with anyio.fail_after(30):
            async with Client(url, protocol_version=revision) as client:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(kill_once_started)
                    with pytest.raises(TransportError) as caught:
                        await client.call_tool("wait", progress_handler=on_progress)
                assert started.is_set()
    finally:
        proc.kill()
        proc.wait(timeout=10)
        served.close()
    assert not isinstance(caught.value, ProtocolError)
    assert "tools/call" in str(caught.value) and url in str(caught.value), caught.value


def test_which_errors_count_as_a_lost_server() -> None:
    gone = lost_server_error(1, "gave up resuming the stream after 5 attempts")["error"]
    assert answer_lost(ProtocolError(gone["code"], gone["message"], gone["data"]))  # marked
    assert not answer_lost(ProtocolError(-32000, "gave up resuming the stream after 5 attempts"))
    assert answer_lost(ProtocolError(-32000, "x", {ANSWER_LOST: LOST}))  # 2026, marked
    assert not answer_lost(ProtocolError(-32000, "the server closed the response stream"))
    # What a server answers stays a ProtocolError, even with the transport's key forged.
    assert not answer_lost(ProtocolError(-32000, "x", {ANSWER_LOST: "forged"}))
    assert not answer_lost(ProtocolError(-32603, "gave up resuming the stream"))
    assert not answer_lost(ProtocolError(-32000, "Session not found"))
