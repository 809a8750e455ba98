"""Repeated log records, counted instead of printed.

What a peer sends decides what our peer-facing loggers say: a hostile or broken peer that
sends 500 malformed notifications, or 500 requests whose handlers fail, would otherwise print
500 warnings (and tracebacks): tens of thousands of lines that hide everything else and fill
disks. :class:`RepeatLimiter` lets the first few identical records (same logger, level and
message template) through per interval, then counts the rest and says once, when the interval
ends, ``... repeated N times in the last S s``. Only the first record of a burst keeps its
traceback: the ones after it are the same failure.

It is a :class:`logging.Filter` on the loggers that log what peers send
(:data:`PEER_LOGGERS`), installed when the engine is imported, so it holds for a hub or a
proxy embedded in any program, whatever handlers that program configured.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: Identical records let through per interval (the first keeps its traceback).
BURST = 3
#: Seconds of one interval: the count of the records held back is told when it ends.
INTERVAL = 5.0
#: The loggers of the layers that receive peers' messages (the engine, the session roles,
#: the transports, the client's and server's handling, the proxy).
PEER_LOGGERS = (
    "mcpkit.jsonrpc",
    "mcpkit.session",
    "mcpkit.keepalive",
    "mcpkit.stdio",
    "mcpkit.http",
    "mcpkit.http.client",
    "mcpkit.client",
    "mcpkit.server",
    "mcpkit.proxy",
)
#: Set on the summary records we emit, so the filter lets them through.
SUMMARY = "mcpkit_repeats"

Key = tuple[str, int, str]


@dataclass
class _Window:
    """One key's current interval."""

    start: float
    passed: int = 1
    held: int = 0
    last: logging.LogRecord | None = field(default=None, repr=False)


def _timer(delay: float, callback: Callable[[], None]) -> None:
    t = threading.Timer(delay, callback)
    t.daemon = True  # a pending summary never keeps the process alive
    t.start()


class RepeatLimiter(logging.Filter):
    """Lets ``burst`` identical records through per ``interval`` seconds, then holds the rest
    back and emits one summary record (at the same logger and level) when the interval ends.

    ``clock`` (monotonic seconds) and ``schedule(delay, callback)`` (run ``callback`` in
    ``delay`` seconds; a daemon thread by default) are injectable for tests. Thread-safe:
    records arrive from the event loop and from worker threads alike.
    """

    def __init__(
        self,
        *,
        burst: int = BURST,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        schedule: Callable[[float, Callable[[], None]], None] = _timer,
    ) -> None:
        super().__init__()
        if burst < 1 or interval <= 0:
            raise ValueError("burst must be at least 1 and interval positive")
        self.burst = burst
        self.interval = interval
        self._clock = clock
        self._schedule = schedule
        self._lock = threading.Lock()
        # Insertion order is start order (the clock only goes forward), so the expired
        # windows are always at the front: expiring costs only what expired.
        self._windows: dict[Key, _Window] = {}
        self._armed = False

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, SUMMARY, False):
            return True
        now = self._clock()
        msg = record.msg if isinstance(record.msg, str) else type(record.msg).__name__
        key = (record.name, record.levelno, msg)
        arm, end = False, now
        with self._lock:
            due = self._expire(now)
            window = self._windows.get(key)
            if window is None:
                self._windows[key] = _Window(start=now)
                keep = True
            elif window.passed < self.burst:
                window.passed += 1
                # The same failure again: its message, not another copy of the traceback.
                record.exc_info, record.exc_text, record.stack_info = None, None, None
                keep = True
            else:
                window.held += 1
                window.last = record
                keep = False
                end = window.start + self.interval
                arm = not self._armed
                self._armed = True
        self._emit(due)
        if not keep and arm:
            self._schedule(max(0.0, end - now), self._tick)
        return keep

    def flush(self) -> None:
        """Tell every count held back now, whether or not its interval has ended (at exit)."""
        with self._lock:
            due = [w for w in self._windows.values() if w.held]
            self._windows.clear()
        self._emit(due)

    def _tick(self) -> None:
        """The timer: tell the intervals that ended, and wake again for the next one."""
        now = self._clock()
        with self._lock:
            due = self._expire(now)
            pending = [w.start for w in self._windows.values() if w.held]
            self._armed = bool(pending)
        self._emit(due)
        if pending:
            self._schedule(max(0.0, min(pending) + self.interval - now), self._tick)

    def _expire(self, now: float) -> list[_Window]:
        """Drop the windows whose interval ended (under the lock); those that held records."""
        due: list[_Window] = []
        for key, window in list(self._windows.items()):
            if window.start + self.interval > now:
                break
            del self._windows[key]
            if window.held:
                due.append(window)
        return due

    def _emit(self, due: list[_Window]) -> None:
        # Outside the lock: the handlers may take their own, and may log.
        for window in due:
            last = window.last
            assert last is not None
            try:
                text = last.getMessage()
            except Exception:  # the record's own arguments do not format: say what we can
                text = str(last.msg)
            summary = logging.LogRecord(
                last.name,
                last.levelno,
                last.pathname,
                last.lineno,
                "%s … repeated %d times in the last %g s",
                (text, window.held, self.interval),
                None,
            )
            setattr(summary, SUMMARY, True)
            logging.getLogger(last.name).handle(summary)


#: The one limiter of the peer-facing loggers.
PEER_REPEATS = RepeatLimiter()


def install(names: tuple[str, ...] = PEER_LOGGERS, limiter: RepeatLimiter = PEER_REPEATS) -> None:
    """Put ``limiter`` on the loggers ``names`` (again is harmless: a filter is added once)."""
    for name in names:
        logging.getLogger(name).addFilter(limiter)


# Registered after logging's own exit hook, so it runs before logging shuts its handlers.
atexit.register(PEER_REPEATS.flush)
