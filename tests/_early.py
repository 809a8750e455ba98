"""Long subprocess runs started as the session starts, so that they overlap the rest of the
suite (the conformance runs: minutes of a harness driving our server or client while the test
process only waits).

Once collection is done, ``tests/conftest.py`` calls ``start_early(item)`` of each selected
test's module that has one; it hands a job (a function, usually calling :func:`run_process`)
to :func:`start`. The jobs run one at a time in a background thread, in the tests' order. The
test takes its job's return value with :func:`result` and checks it exactly as before; a test
whose job was not started early (run alone, say) runs it then. At the session's end what has
not started is dropped and what runs is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_pool: ThreadPoolExecutor | None = None
_jobs: dict[str, Future[Any]] = {}
_procs: set[subprocess.Popen[str]] = set()
_owned: set[int] = set()
_lock = threading.Lock()
_stopping = threading.Event()


def start(key: str, job: Callable[[], object]) -> None:
    """Run ``job`` in the background, after the jobs started before it."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="early")
    _jobs[key] = _pool.submit(job)


def result(key: str, job: Callable[[], T]) -> T:
    """What the job of ``key`` returned (or raised); ``job`` runs now if none was started."""
    future = _jobs.pop(key, None)
    if future is None:
        return job()
    value: T = future.result()
    return value


def run_process(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True)`` in a session of its own,
    killed with everything it started at ``timeout`` or when the test session ends."""
    if _stopping.is_set():
        raise RuntimeError("the test session ended before this run started")
    with subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        with _lock:
            _procs.add(proc)
            _owned.add(proc.pid)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            out, err = proc.communicate()
            err += f"\n(killed after {timeout:g} s)"
        finally:
            with _lock:
                _procs.discard(proc)
                _owned.discard(proc.pid)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@contextmanager
def owning(pid: int) -> Iterator[None]:
    """Count the child process ``pid`` (a job's own server, say) as the jobs'."""
    with _lock:
        _owned.add(pid)
    try:
        yield
    finally:
        with _lock:
            _owned.discard(pid)


def pids() -> set[int]:
    """The processes of this one the jobs run now: not any test's (tests/client/conftest.py
    looks for processes a test left running)."""
    with _lock:
        return set(_owned)


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop() -> None:
    """The session's end: drop what has not started, kill what runs."""
    _stopping.set()
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
    with _lock:
        for proc in list(_procs):
            _kill(proc)
