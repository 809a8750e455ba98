"""``mcpkit run FILE --transport http --reload``: serve in a child process and start a new one
whenever a Python file beside FILE changes.

The watcher compares modification times of the ``*.py`` files under FILE's directory twice a
second (no dependency; a development tool, not a hot path). A child that fails to start
(a syntax error) is reported and the watcher waits for the next change. Only the HTTP
transports reload: a stdio client's connection is the process's own stdin, which a new
process cannot take over.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: Seconds between two looks at the files.
POLL = 0.5
#: Directories never watched (virtual environments, caches, VCS data).
SKIP = {".git", ".venv", "venv", "__pycache__", "node_modules", ".mypy_cache", ".ruff_cache"}


def snapshot(root: Path, *, limit: int = 10_000) -> dict[str, float]:
    """``{path: mtime}`` of the Python files under ``root`` (at most ``limit`` of them)."""
    found: dict[str, float] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP and not d.startswith(".")]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                try:
                    found[path] = os.stat(path).st_mtime
                except OSError:
                    continue
                if len(found) >= limit:
                    return found
    return found


def changed(before: dict[str, float], after: dict[str, float]) -> list[str]:
    """The files added, removed or modified between two snapshots."""
    keys = set(before) | set(after)
    return sorted(k for k in keys if before.get(k) != after.get(k))


def _stop(child: subprocess.Popen[bytes]) -> None:
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=10)


class _Stopped(Exception):
    """A termination signal arrived (SIGTERM from systemd, docker, kill; SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, frame: object) -> None:
    raise _Stopped(signum)


def _catch_termination() -> Callable[[], None]:
    """Turn SIGTERM and SIGHUP into :class:`_Stopped` (their default would end this process
    and leave the serving child running, holding its port); a signal ignored since start
    (``nohup``) stays ignored. Returns what puts the previous handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous: dict[int, Any] = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None and signal.getsignal(sig) is not signal.SIG_IGN:
            previous[sig] = signal.signal(sig, _raise_stopped)

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


def supervise(
    argv: Sequence[str],
    watch: Path,
    *,
    sleep: Callable[[float], None] = time.sleep,
    rounds: int | None = None,
) -> int:
    """Run ``argv`` (the serving command, without ``--reload``) and restart it on changes
    under ``watch`` until interrupted; the exit status to return (130 after Ctrl-C, 128 +
    the signal's number after SIGTERM or SIGHUP). The child is stopped in every case."""
    seen = snapshot(watch)
    restore = _catch_termination()
    child = subprocess.Popen(list(argv))
    done = 0
    try:
        while rounds is None or done < rounds:
            done += 1
            sleep(POLL)
            now = snapshot(watch)
            edits = changed(seen, now)
            if not edits:
                continue
            seen = now
            shown = ", ".join(os.path.relpath(p, watch) for p in edits[:3])
            print(f"mcpkit: {shown} changed; restarting", file=sys.stderr, flush=True)
            _stop(child)
            child = subprocess.Popen(list(argv))
    except KeyboardInterrupt:
        _stop(child)
        return 130
    except _Stopped as e:
        _stop(child)
        return 128 + e.signum
    finally:
        restore()
    _stop(child)
    return 0
