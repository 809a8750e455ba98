"""``mcpkit proxy "<command>" -t http --share-child``: one upstream process serves every
client of the proxy. Requests of five sessions go out on its one connection; what the
upstream sends back reaches the session it is meant for (a sampling request during one
session's call reaches that session's client only), every session (list changes) or the
sessions subscribed (resource updates, subscriptions counted per resource). A child that
dies fails the calls it was serving with an error saying so, and is started again.

Before: every session spawned its own child (issue 32: 40 POSTs, 40 processes). A real
``mcpkit proxy`` process over the stdio server of examples/everything.py; its children are
counted in /proc.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests._served import Served, wait_gone
from tests.hostile.test_proxy_children import _children

from mcpkit import Client, MCPError

pytestmark = pytest.mark.anyio
MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything.py"
WATCHED = "test://watched-resource"
TIMEOUT = 90


def _start(*flags: str) -> subprocess.Popen[bytes]:
    command = f"{sys.executable} {EVERYTHING}"
    return subprocess.Popen(
        [MCPKIT, "proxy", command, "-t", "http", "--port", "0", *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@asynccontextmanager
async def _proxy(*flags: str) -> AsyncIterator[tuple[subprocess.Popen[bytes], str]]:
    with _start(*flags) as proc:
        served = Served(proc)
        try:
            url = await anyio.to_thread.run_sync(served.url, 30)
            yield proc, url
        finally:
            proc.terminate()
            await anyio.to_thread.run_sync(proc.wait, 30)
            # Its stderr read to the end before the pipe closes with the Popen.
            await anyio.to_thread.run_sync(served._thread.join, 30)


class Seen:
    """What reached one client through the proxy."""

    def __init__(self, index: int, sampled: list[int]) -> None:
        self.index = index
        self.sampled = sampled
        self.changed = anyio.Event()
        self.updated: list[str] = []
        self.update_arrived = anyio.Event()

    def kwargs(self) -> dict[str, Any]:
        async def sample(params: Any, ctx: Any) -> str:
            self.sampled.append(self.index)
            return f"client {self.index}"

        async def on_changed(kind: str) -> None:
            if kind == "tools":
                self.changed.set()

        async def on_updated(params: Any) -> None:
            self.updated.append(params.uri)
            self.update_arrived.set()

        return {
            "sampling_handler": sample,
            "list_changed_handler": on_changed,
            "resource_updated_handler": on_updated,
        }


async def test_five_sessions_share_one_child() -> None:
    # --max-children 1: five sessions are served all the same, as they need one child.
    async with _proxy("--share-child", "--max-children", "1") as (proc, url):
        sampled: list[int] = []
        seen = [Seen(i, sampled) for i in range(5)]
        with anyio.fail_after(TIMEOUT):
            async with AsyncExitStack() as stack:
                clients = [await stack.enter_async_context(Client(url, **s.kwargs())) for s in seen]
                for i, c in enumerate(clients):
                    said = await c.call_tool("echo", {"text": f"session {i}"})
                    assert said.content[0].text == f"session {i}"  # type: ignore[union-attr]
                assert len(_children(proc.pid)) == 1

                # The upstream's sampling request during session 3's call: session 3's only.
                asked = await clients[2].call_tool("test_sampling", {"prompt": "hi"})
                assert asked.content[0].text == "LLM response: client 2"  # type: ignore[union-attr]
                assert sampled == [2]

                # A list change reaches all five.
                await clients[0].call_tool("test_trigger_tool_change")
                for s in seen:
                    await s.changed.wait()

                # Held by sessions 1 and 2: one unsubscribing leaves the other's in place.
                await clients[0].subscribe(WATCHED)
                await clients[1].subscribe(WATCHED)
                await clients[0].unsubscribe(WATCHED)
                await clients[4].call_tool("update_watched_resource", {"text": "new"})
                await seen[1].update_arrived.wait()
                assert seen[1].updated == [WATCHED]
                await clients[0].call_tool("echo", {"text": "round trip"})
                assert seen[0].updated == [] and seen[4].updated == []

                # The last holder unsubscribed too: the update reaches no one.
                await clients[1].unsubscribe(WATCHED)
                await clients[4].call_tool("update_watched_resource", {"text": "newer"})
                for c in clients:
                    await c.call_tool("echo", {"text": "round trip"})
                assert [s.updated for s in seen] == [[], [WATCHED], [], [], []]
                assert len(_children(proc.pid)) == 1


async def test_a_dead_child_fails_its_calls_and_is_started_again() -> None:
    asked = anyio.Event()
    release = anyio.Event()

    async def elicit(params: Any, ctx: Any) -> dict[str, Any]:
        asked.set()
        await release.wait()
        return {"action": "decline"}

    async with _proxy("--share-child") as (proc, url):
        with anyio.fail_after(TIMEOUT):
            async with Client(url, elicitation_handler=elicit) as a, Client(url) as b:
                assert (await b.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                    "result": 3
                }
                (child,) = _children(proc.pid)
                failure: list[MCPError] = []

                async def call() -> None:
                    try:
                        await a.call_tool("test_elicitation", {"message": "who?"})
                    except MCPError as e:
                        failure.append(e)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(call)
                    await asked.wait()  # the call is in flight upstream
                    os.kill(child, signal.SIGKILL)
                assert await anyio.to_thread.run_sync(wait_gone, child, 30)
                release.set()
                assert failure and "is gone" in str(failure[0]), failure
                # Started again: both sessions are served by a new child.
                said = await b.call_tool("echo", {"text": "again"})
                assert said.content[0].text == "again"  # type: ignore[union-attr]
                said = await a.call_tool("echo", {"text": "again"})
                assert said.content[0].text == "again"  # type: ignore[union-attr]
                assert [p for p in _children(proc.pid) if p != child] == _children(proc.pid)
                assert len(_children(proc.pid)) == 1


async def test_share_child_is_an_http_option() -> None:
    done = await anyio.run_process(
        [MCPKIT, "proxy", "python server.py", "--share-child"], check=False
    )
    assert done.returncode == 2
    assert b"--share-child apply to -t http only" in done.stderr
