# ruff: noqa: ASYNC220  (the server process is started from a test coroutine)
"""``mcpkit run app.py -t http`` stopped with SIGTERM while a 2026-07-28 client has a
``subscriptions/listen`` stream open and tool calls in flight, over real uvicorn.

The listen stream ends with its completion result, a call that finishes within the drain
bound gets its result, one that would not is answered with an error (not cut off), and
the process exits 0 without a traceback or uvicorn's "timeout graceful shutdown exceeded".
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import orjson
import pytest
from tests._schema import message_errors
from tests._served import Served

from mcpkit._app._serve import DRAIN_TIMEOUT
from mcpkit._http._sse import SSEParser

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

REV = "2026-07-28"
APP = textwrap.dedent(
    '''
    import anyio
    from mcpkit import Context, Server

    server = Server("graceful", version="1.0")

    @server.tool()
    async def work(seconds: float, ctx: Context) -> str:
        """Say it started, then work for a while."""
        await ctx.report_progress(0, 1, "started")
        await anyio.sleep(seconds)
        return f"worked {seconds} s"
    '''
)
#: The short call ends well within the drain bound; the long one would not end at all.
SHORT, LONG = 1.0, 600.0


def _mcpkit() -> list[str]:
    exe = Path(sys.executable).parent / "mcpkit"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mcpkit"]


def _meta(**extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": REV,
        "io.modelcontextprotocol/clientCapabilities": {},
        **extra,
    }


def _headers(method: str, name: str | None = None) -> dict[str, str]:
    h = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": REV,
        "mcp-method": method,
    }
    if name is not None:
        h["mcp-name"] = name
    return h


async def _read(
    client: httpx.AsyncClient,
    url: str,
    body: dict[str, Any],
    headers: dict[str, str],
    first: str,
    started: anyio.Event,
    out: dict[str, list[Any]],
) -> None:
    """POST ``body`` and keep every message of its SSE answer in ``out[body["id"]]``;
    ``started`` is set once a message with method ``first`` arrived."""
    got = out.setdefault(body["id"], [])
    async with client.stream("POST", url, content=orjson.dumps(body), headers=headers) as r:
        assert r.status_code == 200
        parser = SSEParser()
        async for chunk in r.aiter_bytes():
            for event in parser.feed(chunk):
                if not event.data:
                    continue
                msg = orjson.loads(event.data)
                got.append(msg)
                if msg.get("method") == first:
                    started.set()


@pytest.mark.req("SUBSCRIPTIONS-2026-GRACEFUL-CLOSURE")
async def test_sigterm_completes_listen_streams_and_drains_calls(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP)
    argv = [*_mcpkit(), "run", str(app), "-t", "http", "--host", "127.0.0.1", "--port", "0"]
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    served = Served(proc)
    out: dict[str, list[Any]] = {}
    listen = {
        "jsonrpc": "2.0",
        "id": "listen-1",
        "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": True}, "_meta": _meta()},
    }

    def call(rid: str, seconds: float) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {
                "name": "work",
                "arguments": {"seconds": seconds},
                "_meta": _meta(progressToken=rid),
            },
        }

    try:
        url = await anyio.to_thread.run_sync(served.url)
        events = [anyio.Event() for _ in range(3)]
        with anyio.fail_after(DRAIN_TIMEOUT + 40):
            async with httpx.AsyncClient(timeout=60) as client, anyio.create_task_group() as tg:
                acked = "notifications/subscriptions/acknowledged"
                tg.start_soon(
                    _read, client, url, listen, _headers("subscriptions/listen"), acked,
                    events[0], out,
                )  # fmt: skip
                for rid, seconds, ev in (("short", SHORT, events[1]), ("long", LONG, events[2])):
                    tg.start_soon(
                        _read, client, url, call(rid, seconds), _headers("tools/call", "work"),
                        "notifications/progress", ev, out,
                    )  # fmt: skip
                for ev in events:  # the stream is acknowledged and both calls are running
                    await ev.wait()
                stopped_at = anyio.current_time()
                proc.send_signal(signal.SIGTERM)
            # Every response was complete by now (the task group waited for each stream).
            await anyio.to_thread.run_sync(proc.wait, 30)
            took = anyio.current_time() - stopped_at
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        served.close()
    stderr = served.stderr()
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert "timeout graceful shutdown exceeded" not in stderr, stderr
    # Bounded: the drain bound, and a little for the answers and the exit.
    assert took < DRAIN_TIMEOUT + 10, took

    # The listen stream: its acknowledgement, then the completion result, same id.
    ack, done = out["listen-1"]
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert done["id"] == "listen-1"
    assert done["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"
    assert done["result"]["resultType"] == "complete"
    # The short call finished during the drain; the long one was answered with an error.
    short = out["short"][-1]
    assert short["result"]["content"][0]["text"] == f"worked {SHORT} s"
    long = out["long"][-1]
    assert long["id"] == "long"
    assert long["error"]["code"] == -32603
    assert "shutting down" in long["error"]["message"]
    requests = {"listen-1": listen, "short": call("short", SHORT), "long": call("long", LONG)}
    for rid, messages in out.items():
        for msg in messages:
            errors = message_errors(msg, REV, sender="server", request=requests[rid])
            assert not errors, (msg, errors)
