"""A clock for what measures its own work (``SyncRunner``'s ``perf_counter``): each reading
moves time on by ``step`` seconds, and a function under test adds what it "spends". Whether
a sync function counts as short then depends on the test, not on the machine's load (four
xdist workers on two cores preempt a thread for milliseconds)."""

from __future__ import annotations

import threading

import pytest

from mcpkit._server import _threads


class WorkClock:
    """``perf_counter`` for tests; safe to read from worker threads."""

    def __init__(self, step: float = 1e-6) -> None:
        self.now = 0.0
        self.step = step
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            self.now += self.step
            return self.now

    def spend(self, seconds: float) -> None:
        """The function being measured takes ``seconds`` more."""
        with self._lock:
            self.now += seconds


def use_work_clock(monkeypatch: pytest.MonkeyPatch) -> WorkClock:
    """Make the sync-tool runner measure with a :class:`WorkClock` (every call short)."""
    clock = WorkClock()
    monkeypatch.setattr(_threads, "perf_counter", clock)
    return clock
