"""Waiting for a server process we started: ``mcpkit run --transport http|sse`` (and
``serve_http``/``serve_sse``) print one line on stderr once their socket listens, naming the
URL with the port actually bound. Tests read that line instead of polling the port, and may
ask for port 0.

Foreign servers (node, the official SDK) announce nothing; their tests poll the port.
"""

from __future__ import annotations

import os
import queue
import re
import select
import subprocess
import threading

ANNOUNCEMENT = re.compile(r"^mcpkit: serving .+ at (http://\S+) \(Ctrl-C to stop\)$")


class Served:
    """The stderr of a server process, read by a thread to its end (so the process never
    blocks on a full pipe); :meth:`url` waits, bounded, for the announcement."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None, "start the server with stderr=subprocess.PIPE"
        self.proc = proc
        self.lines: list[str] = []
        self._urls: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    @classmethod
    def start(
        cls,
        argv: list[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> Served:
        """Start ``argv`` (a server that announces its URL) with no stdin, stdout dropped
        and stderr read; the caller ends the process, then calls :meth:`close`."""
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        return cls(proc)

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            self.lines.append(line)
            found = ANNOUNCEMENT.match(line)
            if found:
                self._urls.put(found.group(1))
        self._urls.put(None)  # EOF: the process closed stderr (it exited)

    def url(self, timeout: float = 20) -> str:
        """The URL the server announced; raises if it exits or stays silent for ``timeout``."""
        try:
            url = self._urls.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no announcement within {timeout} s; stderr:\n" + "\n".join(self.lines[-40:])
            ) from None
        if url is None:
            self.proc.wait(timeout=10)
            raise AssertionError(
                f"the server exited ({self.proc.returncode}) before listening; stderr:\n"
                + "\n".join(self.lines[-40:])
            )
        return url

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return "\n".join(self.lines)

    def close(self) -> None:
        """After the process ended: let the reader reach EOF (bounded), then close the pipe."""
        self._thread.join(timeout=10)
        assert not self._thread.is_alive(), "stderr still open: is the process still running?"
        assert self.proc.stderr is not None
        self.proc.stderr.close()


def wait_gone(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` (not necessarily our child) has exited or does within
    ``timeout`` seconds: a pidfd turns readable when it ends (no polling)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        return bool(ready)
    finally:
        os.close(fd)
