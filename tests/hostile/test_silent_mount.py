"""A hub mounting a server that never answers ``initialize`` still starts, serves its other
mounts at once, and lists the late one when it arrives (its clients told).

Before: the hub's start waited for every mount's first connection, so one silent upstream
kept it from serving at all (and failed it after the mount's initialize timeout). A real
``mcpkit run --transport http`` hub process; the late upstream waits on a FIFO the test opens.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest
from tests._served import Served

from mcpkit import Client

pytestmark = pytest.mark.anyio

GOOD = """
from mcpkit import Server

server = Server("good")

@server.tool()
def hello() -> str:
    \"\"\"Says hello.\"\"\"
    return "hello"
"""

LATE = """
import sys
from mcpkit import Server

with open(sys.argv[-1] + ".fifo") as gate:  # blocks until the test opens it
    gate.read()

server = Server("late")

@server.tool()
def arrived() -> str:
    \"\"\"Here at last.\"\"\"
    return "arrived"
"""

SILENT = """
import sys
for _ in sys.stdin:  # reads whatever comes, answers nothing, ever
    pass
"""


def _hub(tmp_path: Path) -> Path:
    for name, source in (("good", GOOD), ("late", LATE), ("silent", SILENT)):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    os.mkfifo(tmp_path / "late.py.fifo")
    py, here = sys.executable, str(tmp_path)
    hub = tmp_path / "hub.py"
    hub.write_text(
        textwrap.dedent(
            f"""
            from mcpkit import Client, Server

            server = Server("hub")
            # A long initialize timeout: before, the hub waited all of it, then failed.
            server.mount(Client([{py!r}, {here + "/silent.py"!r}], init_timeout=300),
                         prefix="silent")
            server.mount(Client([{py!r}, "-m", "mcpkit", "run", {here + "/good.py"!r}]),
                         prefix="good")
            server.mount(Client([{py!r}, "-m", "mcpkit", "run", {here + "/late.py"!r}],
                                init_timeout=300), prefix="late")
            """
        )
    )
    return hub


def _start(hub: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", str(hub), "-t", "http", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


async def test_a_silent_mount_does_not_hold_the_hub_and_a_late_one_is_listed(
    tmp_path: Path,
) -> None:
    hub = _hub(tmp_path)
    started = time.monotonic()
    with _start(hub) as proc:
        served = Served(proc)
        try:
            url = await anyio.to_thread.run_sync(served.url, 30)
            # Serving after the bounded start wait (5 s), not the mounts' 300 s timeout.
            assert time.monotonic() - started < 30
            changed = anyio.Event()

            async def on_change(kind: str) -> None:
                changed.set()

            with anyio.fail_after(60):
                async with Client(url, list_changed_handler=on_change) as c:
                    names = {t.name for t in await c.list_tools()}
                    assert names == {"good_hello"}, names
                    hello = await c.call_tool("good_hello")
                    assert hello.content[0].text == "hello"  # type: ignore[union-attr]

                    def release() -> None:
                        with open(tmp_path / "late.py.fifo", "w") as gate:
                            gate.write("go")

                    await anyio.to_thread.run_sync(release)
                    while "late_arrived" not in names:
                        await changed.wait()
                        changed = anyio.Event()
                        names = {t.name for t in await c.list_tools(use_cache=False)}
                    arrived = await c.call_tool("late_arrived")
                    assert arrived.content[0].text == "arrived"  # type: ignore[union-attr]
                    assert "silent_" not in " ".join(names)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert any("did not answer within" in line for line in served.lines), served.lines
