"""A hostile upstream floods a hub with bad messages inside one mounted call: the hub's log
says each kind of trouble a few times and then how often it repeated, not once per message;
the call still gets its answer.

Before: one call whose upstream sent 500 sampling requests (and malformed notifications)
printed one warning, or one traceback, per message: tens of thousands of lines. A real
``mcpkit run --transport http`` hub process mounting a raw stdio script; the limiter itself
is checked with an injected clock and timer.
"""

from __future__ import annotations

import logging
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests._rawserver import PRELUDE
from tests._served import ANNOUNCEMENT

from mcpkit import Client
from mcpkit._logrepeats import RepeatLimiter

pytestmark = pytest.mark.anyio

# Answers the handshake and tools/list; inside its one tool call it sends 500 sampling
# requests and 1,500 malformed notifications of three kinds, then the call's answer.
FLOOD = (
    PRELUDE
    + """
for msg in messages():
    method, rid = msg.get("method"), msg.get("id")
    if handshake(msg, "flood", ["boom"]):
        continue
    if method == "tools/call":
        for i in range(500):
            send({"jsonrpc": "2.0", "id": f"s{i}", "method": "sampling/createMessage",
                  "params": {"messages": [], "maxTokens": 1}})
            send({"jsonrpc": "1.0", "method": "notifications/x"})
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "nope", "data": i}})
            send({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                  "params": {"uri": i}})
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "content": [{"type": "text", "text": "done"}]}})
    else:
        not_found(msg)
"""
)
AGGREGATE = "times in the last"


class _Stderr:
    """The hub's stderr, line by line, read by a thread into a queue (bounded waits)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self._queue.put(raw.decode(errors="replace").rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, test: Callable[[str], bool], timeout: float) -> str:
        """The first line from here on that passes ``test``, within ``timeout`` seconds."""
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"not seen within {timeout} s: {self.lines[-20:]}") from None
            if line is None:
                raise AssertionError(f"stderr ended first: {self.lines[-20:]}")
            self.lines.append(line)
            if test(line):
                return line

    def rest(self) -> list[str]:
        """Every line, once the process has ended."""
        self._thread.join(timeout=10)
        assert not self._thread.is_alive() and self.proc.stderr is not None
        self.proc.stderr.close()
        while not self._queue.empty():
            line = self._queue.get()
            if line is not None:
                self.lines.append(line)
        return self.lines


def _start(hub: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", str(hub), "-t", "http", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


async def test_an_upstream_flooding_one_call_gets_a_few_lines_and_a_count(
    tmp_path: Path,
) -> None:
    (tmp_path / "flood.py").write_text(FLOOD)
    hub = tmp_path / "hub.py"
    hub.write_text(
        "from mcpkit import Client, Server\n"
        "server = Server('hub')\n"
        f"server.mount(Client([{sys.executable!r}, {str(tmp_path / 'flood.py')!r}]), prefix='f')\n"
    )
    proc = _start(hub)
    err = _Stderr(proc)
    asked = 0

    async def sample(ctx: Any, params: Any) -> dict[str, Any]:
        nonlocal asked
        asked += 1
        return {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}

    try:
        line = await anyio.to_thread.run_sync(
            err.wait_for, lambda s: ANNOUNCEMENT.match(s) is not None, 30
        )
        url = ANNOUNCEMENT.match(line).group(1)  # type: ignore[union-attr]
        with anyio.fail_after(60):
            # A session (2025-11-25), so the upstream's sampling requests reach this client.
            async with Client(url, protocol_version="2025-11-25", sampling_handler=sample) as c:
                result = await c.call_tool("f_boom")
        assert result.content[0].text == "done"  # type: ignore[union-attr]
        assert asked >= 1  # the questions did reach the client
        # The held-back records are counted once their interval (5 s) ends.
        said = await anyio.to_thread.run_sync(err.wait_for, lambda s: AGGREGATE in s, 30)
        assert "repeated" in said
    finally:
        proc.terminate()
        await anyio.to_thread.run_sync(proc.wait, 30)
    lines = err.rest()
    assert len(lines) < 50, f"{len(lines)} lines:\n" + "\n".join(lines[:60])
    # Each kind of malformed message was said, then counted.
    assert any("dropped malformed notification" in s and AGGREGATE in s for s in lines), lines
    assert not any("Traceback" in s for s in lines), lines


class _Timers:
    """The injected ``schedule``: the callbacks, run when the test says."""

    def __init__(self) -> None:
        self.pending: list[tuple[float, Callable[[], None]]] = []

    def __call__(self, delay: float, callback: Callable[[], None]) -> None:
        self.pending.append((delay, callback))

    def fire(self) -> None:
        due, self.pending = self.pending, []
        for _, callback in due:
            callback()


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_the_limiter_passes_a_few_then_counts_per_interval() -> None:
    now = [100.0]
    timers = _Timers()
    limiter = RepeatLimiter(burst=3, interval=10.0, clock=lambda: now[0], schedule=timers)
    log = logging.getLogger("mcpkit.tests.repeats")
    kept = _Kept()
    log.addHandler(kept)
    log.addFilter(limiter)
    log.propagate = False
    try:
        for i in range(10):
            log.error("handler for %r failed", f"m{i}", exc_info=ValueError(i))
        log.warning("something else: %s", 1)
        texts = [r.getMessage() for r in kept.records]
        assert texts == [
            "handler for 'm0' failed",
            "handler for 'm1' failed",
            "handler for 'm2' failed",
            "something else: 1",
        ]
        # The first keeps its traceback; the same failure again is its message only.
        assert kept.records[0].exc_info is not None
        assert kept.records[1].exc_info is None and kept.records[2].exc_info is None
        # One timer, for the end of the interval; nothing is told before it.
        assert [delay for delay, _ in timers.pending] == [10.0]
        now[0] = 110.0
        timers.fire()
        summary = kept.records[-1]
        assert summary.getMessage() == (
            "handler for 'm9' failed … repeated 7 times in the last 10 s"
        )
        assert summary.levelno == logging.ERROR and summary.name == log.name
        assert timers.pending == []  # nothing more held back: no timer
        # A new interval: the same message passes again.
        log.error("handler for %r failed", "again")
        assert kept.records[-1].getMessage() == "handler for 'again' failed"
        # Held back at exit: flush tells it though its interval has not ended.
        for _ in range(5):
            log.error("late %s", "x")
        count = len(kept.records)
        limiter.flush()
        assert len(kept.records) == count + 1
        assert kept.records[-1].getMessage() == "late x … repeated 2 times in the last 10 s"
    finally:
        log.removeHandler(kept)
        log.removeFilter(limiter)
        log.propagate = True


def test_the_limiter_rejects_a_senseless_bound() -> None:
    with pytest.raises(ValueError, match="burst"):
        RepeatLimiter(burst=0)
