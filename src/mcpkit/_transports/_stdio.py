"""stdio: the server reads stdin and writes stdout; the client spawns the server.

Server side, stdout belongs to the protocol alone: the real stdout is duplicated for our
use and file descriptor 1 is pointed at stderr, so a stray ``print()`` (or a C library
writing to fd 1) lands on stderr instead of corrupting the stream. stdin likewise is taken
over and fd 0 pointed at /dev/null, so user code cannot steal protocol bytes.

Client side, the child gets its own process group, its stderr is drained continuously (a
chatty server can never fill the pipe and stall), and shutdown escalates: close stdin, wait,
SIGTERM the group, wait, SIGKILL the group. No orphans, no hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import anyio
from anyio.abc import Process

from ._base import Incoming, Message, RequestId
from ._stream import (
    DEFAULT_MAX_MESSAGE_SIZE,
    AnyioStreamReader,
    AnyioStreamWriter,
    AsyncioPipeWriter,
    ByteWriter,
    LineTransport,
    open_fd_reader,
    open_fd_writer,
)

logger = logging.getLogger("mcpkit.stdio")

#: Environment variables a spawned server inherits by default. Everything else (API keys,
#: tokens) must be passed on purpose, so secrets do not leak into every server a host runs.
SAFE_ENV_VARS: tuple[str, ...] = (
    (
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
        "PROGRAMFILES",
    )
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
)

STDIN_CLOSE_WAIT = 2.0
TERM_WAIT = 2.0


@contextlib.asynccontextmanager
async def stdio_server(
    *, protect_stdout: bool = True, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> AsyncIterator[LineTransport]:
    """Serve on this process's stdin/stdout, whatever they are.

    stdin and stdout may each be a pipe, a regular file, ``/dev/null``, a terminal or a
    socket; a closed or empty stdin is an immediate end of input, so the server exits cleanly.
    A stdout closed at start raises :class:`~mcpkit.TransportError` at once: no answer could
    ever reach the client.

    Example::

        async with stdio_server() as transport:
            await serve(transport)
    """
    if sys.stdout is not None:  # None when the process started with fd 1 closed
        sys.stdout.flush()
    if 1 in fill_closed_std_fds():
        from .._exceptions import TransportError

        raise TransportError("stdout is closed: a stdio server has nowhere to write its answers")
    in_fd, out_fd = os.dup(0), os.dup(1)
    if protect_stdout:
        saved_in, saved_out = os.dup(0), os.dup(1)
        os.dup2(2, 1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
    try:
        transport = LineTransport(
            await open_fd_reader(in_fd),
            await open_fd_writer(out_fd),
            max_message_size=max_message_size,
        )
        try:
            yield transport
        finally:
            with anyio.CancelScope(shield=True):
                await transport.aclose()
    finally:
        if protect_stdout:
            if sys.stdout is not None:
                sys.stdout.flush()
            os.dup2(saved_in, 0)
            os.dup2(saved_out, 1)
            os.close(saved_in)
            os.close(saved_out)


_closed_at_start: set[int] = set()


def fill_closed_std_fds() -> frozenset[int]:
    """Point each closed descriptor among 0, 1 and 2 at ``/dev/null``; return all ever closed.

    A process started with ``<&-`` or ``>&-`` has a hole there, and the next ``open``/``dup``
    silently fills it: the event loop's epoll descriptor could become "stdin", our duplicate
    of stdout or a log file "stdout". The blocking entry points call this before they start
    the loop (:func:`mcpkit._transports._loop.run`); :func:`stdio_server` calls it again for
    loops started elsewhere. The answer remembers earlier calls, so a stdout closed at start
    is still known to be closed after it was filled.
    """
    for fd in (0, 1, 2):  # ascending, so each open() lands on the lowest hole: ``fd`` itself
        if not _is_open(fd):
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            _closed_at_start.add(fd)
    return frozenset(_closed_at_start)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def build_env(env: Mapping[str, str] | None, inherit_env: bool) -> dict[str, str]:
    """The environment of a spawned server: a safe subset of ours (or all of it) plus ``env``."""
    if inherit_env:
        base = dict(os.environ)
    else:
        base = {k: v for k in SAFE_ENV_VARS if (v := os.environ.get(k)) is not None}
    if env:
        base.update(env)
    return base


class StdioClientTransport(LineTransport):
    """The client end of stdio: a server process we spawned. Use :func:`spawn_stdio`."""

    def __init__(
        self, process: Process, stderr_tail: deque[str], argv: Sequence[str] = (), **kw: Any
    ) -> None:
        assert process.stdout is not None and process.stdin is not None
        super().__init__(AnyioStreamReader(process.stdout), _stdin_writer(process.stdin), **kw)
        self.process = process
        self._stderr_tail = stderr_tail
        self._argv = list(argv)
        #: Set once the server's stderr reached its end (all of it is in the tail).
        self.stderr_done = anyio.Event()
        self._stdout_done = anyio.Event()

    async def send(
        self, message: Message, /, *, related_request_id: RequestId | None = None
    ) -> None:
        try:
            await super().send(message, related_request_id=related_request_id)
        except (BrokenPipeError, ConnectionError, anyio.BrokenResourceError):
            # The server is gone before reading what we send (it printed a line and
            # exited, say): wait a moment for how it ended and for what it wrote (the
            # reader is still reading it), so that the error says the same as when the
            # server's exit is seen first, instead of a bare "the pipe is closed".
            with anyio.move_on_after(1):
                if self.process.returncode is None:
                    await self.process.wait()
                await self.stderr_done.wait()
                await self._stdout_done.wait()
            raise BrokenPipeError(self.close_reason) from None

    async def receive(self) -> Incoming:
        try:
            return await super().receive()
        except anyio.EndOfStream:
            self._stdout_done.set()
            # stdout closing usually means the process is exiting: give it a moment so
            # the error can say how it ended.
            with anyio.move_on_after(1):
                if self.process.returncode is None:
                    await self.process.wait()
                # And for its last stderr lines, which the error quotes.
                await self.stderr_done.wait()
            raise

    @property
    def close_reason(self) -> str:
        """Why the connection ended, with the exit code and the last lines of stderr."""
        rc = self.process.returncode
        text = "the server process closed its stdout"
        if rc is not None:
            text = f"the server process exited with code {rc}"
        if self._stderr_tail:
            text += "; its last stderr lines:\n" + "\n".join(self._stderr_tail)
        return text + _other_python_hint(self._argv, self._stderr_tail)


def _other_python_hint(argv: Sequence[str], stderr_tail: deque[str]) -> str:
    """A hint when the server failed on a missing module and ran another Python than ours.

    The classic first-hour trap: ``Client(["python", "server.py"])`` from an unactivated
    virtual environment runs the system's ``python``, which has no mcpkit.
    """
    if not argv or not any("No module named" in line for line in stderr_tail):
        return ""
    program = shutil.which(argv[0])
    if program is None or not os.path.basename(argv[0]).startswith("python"):
        return ""
    if os.path.realpath(program) == os.path.realpath(sys.executable):
        return ""
    return (
        f"\nhint: {argv[0]!r} is {program}, not this program's Python ({sys.executable}); "
        "give the .py file alone (it runs with this Python) or sys.executable"
    )


def _stdin_writer(stdin: Any) -> ByteWriter:
    # On asyncio, write to the child's pipe directly: anyio's stream adds a lock and two
    # checkpoints per message (a loop iteration each) on the client's hottest path.
    raw = getattr(stdin, "_stream", None)
    if isinstance(raw, asyncio.StreamWriter):
        return AsyncioPipeWriter(raw)
    return AnyioStreamWriter(stdin)


@contextlib.asynccontextmanager
async def spawn_stdio(
    command: str | Sequence[str],
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = False,
    cwd: str | os.PathLike[str] | None = None,
    on_stderr: Callable[[str], None] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[StdioClientTransport]:
    """Start a server process and talk to it over its stdin/stdout.

    ``on_stderr`` receives each line the server writes to stderr (default: copied to our
    stderr). On exit the process is shut down: stdin closed, then SIGTERM, then SIGKILL of
    its whole process group, each after a bounded wait.

    Example::

        async with spawn_stdio(["python", "server.py"]) as transport:
            ...
    """
    argv = [command, *args] if isinstance(command, str) else [*command, *args]
    if not argv:
        raise ValueError("spawn_stdio: empty command")
    try:
        process = await anyio.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=build_env(env, inherit_env),
            start_new_session=sys.platform != "win32",
        )
    except OSError as e:
        from .._exceptions import TransportError

        raise TransportError(f"cannot start {argv[0]!r}: {e}") from e
    tail: deque[str] = deque(maxlen=20)
    sink = on_stderr if on_stderr is not None else _copy_to_stderr
    transport = StdioClientTransport(process, tail, argv, max_message_size=max_message_size)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_drain_stderr, process, sink, tail, transport.stderr_done)
        try:
            yield transport
        finally:
            with anyio.CancelScope(shield=True):
                await transport.aclose()
                await _terminate(process)
                tg.cancel_scope.cancel()


def _copy_to_stderr(line: str) -> None:
    sys.stderr.write(line + "\n")


async def _drain_stderr(
    process: Process, sink: Callable[[str], None], tail: deque[str], done: anyio.Event
) -> None:
    try:
        await _read_stderr(process, sink, tail)
    finally:
        done.set()


async def _read_stderr(process: Process, sink: Callable[[str], None], tail: deque[str]) -> None:
    stream = process.stderr
    if stream is None:
        return
    buf = b""
    try:
        async for chunk in stream:
            buf += chunk
            *lines, buf = buf.split(b"\n")
            if len(buf) > 65536:  # a line without end: pass it on in pieces
                lines.append(buf)
                buf = b""
            for raw in lines:
                line = raw.decode("utf-8", "replace").rstrip("\r")
                tail.append(line)
                try:
                    sink(line)
                except Exception:
                    logger.exception("stderr callback failed")
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    if buf:
        line = buf.decode("utf-8", "replace")
        tail.append(line)
        with contextlib.suppress(Exception):
            sink(line)


def _signal_group(process: Process, sig: int) -> None:
    try:
        if sys.platform == "win32":
            process.terminate() if sig == signal.SIGTERM else process.kill()
        else:
            os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError, OSError):
        pass


async def _terminate(process: Process) -> None:
    if process.returncode is None:
        with anyio.move_on_after(STDIN_CLOSE_WAIT):
            await process.wait()
    if process.returncode is None:
        _signal_group(process, signal.SIGTERM)
        with anyio.move_on_after(TERM_WAIT):
            await process.wait()
    # Whatever the leader did, nothing it started may outlive the connection.
    _signal_group(process, signal.SIGKILL)
    if process.returncode is None:
        with anyio.move_on_after(TERM_WAIT):
            await process.wait()
    with contextlib.suppress(Exception):
        await process.aclose()
