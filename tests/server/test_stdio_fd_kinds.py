"""``mcpkit run`` over stdio with stdin and stdout of every kind a user's launcher gives it.

nohup, systemd units, CI steps and ``docker run`` without ``-i`` hand a stdio server
``/dev/null``, a file, a socket, a terminal or a closed descriptor instead of a pipe. Each
must work on uvloop and on the standard loop: requests read from whatever stdin is, answers
written to whatever stdout is, and a clean exit (status 0) at the end of input. A stdout
closed at start is the one case that cannot work: a clear error, status 1, never a hang.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pty
import select
import socket
import subprocess
import sys
import time
import tty
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.server._harness import HANDSHAKE

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None
WAIT = 20.0

SERVER = """
from mcpkit import Server

server = Server("fd-kinds")


@server.tool()
def echo(text: str) -> str:
    '''Echo the text back.'''
    return text
"""

CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"text": "through any fd"}},
}
REQUESTS = b"".join(orjson.dumps(m) + b"\n" for m in [*HANDSHAKE, CALL])

LOOPS = [
    pytest.param(
        "1",
        id="uvloop",
        marks=pytest.mark.skipif(not HAVE_UVLOOP, reason="uvloop comes with the [http] extra"),
    ),
    pytest.param("0", id="asyncio"),
]


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "server.py"
    path.write_text(SERVER)
    return path


def _env(uvloop: str) -> dict[str, str]:
    return {**os.environ, "MCPKIT_UVLOOP": uvloop}


def _read_until_answer(fd: int, deadline: float) -> dict[str, Any]:
    """Read ``fd`` (bounded by ``deadline``) until the answer to request 2 arrives."""
    buf = b""
    while True:
        for line in buf.split(b"\n"):
            if line.strip() and orjson.loads(line).get("id") == 2:
                answer: dict[str, Any] = orjson.loads(line)
                return answer
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no answer to request 2 within {WAIT}s; got {buf!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"stdout ended before the answer; got {buf!r}")
            buf += chunk


def _assert_echoed(answer: dict[str, Any]) -> None:
    assert answer["result"]["content"][0]["text"] == "through any fd"
    assert answer["result"].get("isError") is not True


def _finish(proc: subprocess.Popen[bytes]) -> str:
    """Wait (bounded) for a clean exit and return what the server wrote to stderr."""
    try:
        proc.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("the server did not exit at the end of its input") from None
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.returncode == 0, f"exit status {proc.returncode}; stderr:\n{err}"
    return err


@contextlib.contextmanager
def _spawn(server: Path, uvloop: str, **kw: Any) -> Iterator[subprocess.Popen[bytes]]:
    kw.setdefault("stderr", subprocess.PIPE)
    proc = subprocess.Popen([MCPKIT, "run", str(server)], env=_env(uvloop), **kw)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


# ---------------------------------------------------------------- stdin kinds, stdout a pipe


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdin_pipe(server_file: Path, uvloop: str) -> None:
    with _spawn(server_file, uvloop, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(REQUESTS)
        proc.stdin.flush()
        _assert_echoed(_read_until_answer(proc.stdout.fileno(), time.monotonic() + WAIT))
        proc.stdin.close()
        _finish(proc)


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdin_regular_file(server_file: Path, tmp_path: Path, uvloop: str) -> None:
    requests = tmp_path / "requests.ndjson"
    requests.write_bytes(REQUESTS)
    with (
        requests.open("rb") as stdin,
        _spawn(server_file, uvloop, stdin=stdin, stdout=subprocess.PIPE) as proc,
    ):
        assert proc.stdout is not None
        _assert_echoed(_read_until_answer(proc.stdout.fileno(), time.monotonic() + WAIT))
        _finish(proc)


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdin_dev_null_exits_cleanly(server_file: Path, uvloop: str) -> None:
    """nohup / systemd / ``docker run`` without ``-i``: end of input at once, status 0."""
    with _spawn(server_file, uvloop, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE) as proc:
        err = _finish(proc)
        assert proc.stdout is not None
        assert proc.stdout.read() == b""
        assert "Traceback" not in err


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdin_closed_exits_cleanly(server_file: Path, uvloop: str) -> None:
    """``mcpkit run server.py <&-``: a closed stdin is an empty one."""
    proc = subprocess.Popen(
        ["/bin/sh", "-c", 'exec "$0" run "$1" <&-', MCPKIT, str(server_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(uvloop),
    )
    with proc:
        err = _finish(proc)
        assert proc.stdout is not None
        assert proc.stdout.read() == b""
        assert "Traceback" not in err


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdin_terminal(server_file: Path, uvloop: str) -> None:
    main, sub = pty.openpty()
    tty.setraw(sub)  # a terminal in raw mode: no echo, no line editing
    try:
        with _spawn(server_file, uvloop, stdin=sub, stdout=subprocess.PIPE) as proc:
            os.close(sub)
            sub = -1
            assert proc.stdout is not None
            os.write(main, REQUESTS)
            _assert_echoed(_read_until_answer(proc.stdout.fileno(), time.monotonic() + WAIT))
            os.close(main)  # the terminal hangs up: end of input
            main = -1
            _finish(proc)
    finally:
        for fd in (main, sub):
            if fd >= 0:
                os.close(fd)


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdin_socket(server_file: Path, uvloop: str) -> None:
    ours, theirs = socket.socketpair()
    with (
        ours,
        theirs,
        _spawn(server_file, uvloop, stdin=theirs.fileno(), stdout=subprocess.PIPE) as proc,
    ):
        theirs.close()
        assert proc.stdout is not None
        ours.sendall(REQUESTS)
        _assert_echoed(_read_until_answer(proc.stdout.fileno(), time.monotonic() + WAIT))
        ours.shutdown(socket.SHUT_WR)
        _finish(proc)


# ---------------------------------------------------------------- stdout kinds, stdin a pipe


def _serve_into(
    server: Path, uvloop: str, stdout: Any, read_answer: Callable[[], dict[str, Any]]
) -> None:
    with _spawn(server, uvloop, stdin=subprocess.PIPE, stdout=stdout) as proc:
        assert proc.stdin is not None
        proc.stdin.write(REQUESTS)
        proc.stdin.flush()
        answer = read_answer()
        proc.stdin.close()
        _finish(proc)
    _assert_echoed(answer)


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdout_regular_file(server_file: Path, tmp_path: Path, uvloop: str) -> None:
    out = tmp_path / "answers.ndjson"
    with (
        out.open("wb") as stdout,
        _spawn(server_file, uvloop, stdin=subprocess.PIPE, stdout=stdout) as proc,
    ):
        assert proc.stdin is not None
        proc.stdin.write(REQUESTS)
        proc.stdin.close()  # the server answers everything, then exits at end of input
        _finish(proc)
    answers = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    _assert_echoed(answers[1])


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdout_dev_null(server_file: Path, uvloop: str) -> None:
    with _spawn(server_file, uvloop, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL) as proc:
        assert proc.stdin is not None
        proc.stdin.write(REQUESTS)
        proc.stdin.close()
        err = _finish(proc)
        assert "Traceback" not in err


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdout_terminal(server_file: Path, uvloop: str) -> None:
    main, sub = pty.openpty()
    tty.setraw(sub)  # raw: no "\n" -> "\r\n" translation on output
    try:
        _serve_into(
            server_file,
            uvloop,
            sub,
            lambda: _read_until_answer(main, time.monotonic() + WAIT),
        )
    finally:
        os.close(main)
        os.close(sub)


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdout_socket(server_file: Path, uvloop: str) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        _serve_into(
            server_file,
            uvloop,
            theirs.fileno(),
            lambda: _read_until_answer(ours.fileno(), time.monotonic() + WAIT),
        )


@pytest.mark.parametrize("uvloop", LOOPS)
def test_stdout_closed_is_a_clear_error(server_file: Path, uvloop: str) -> None:
    """``mcpkit run server.py >&-``: nowhere to answer, so say so and stop (status 1)."""
    proc = subprocess.run(
        ["/bin/sh", "-c", 'exec "$0" run "$1" >&-', MCPKIT, str(server_file)],
        input=REQUESTS,
        stderr=subprocess.PIPE,
        env=_env(uvloop),
        timeout=WAIT,
        check=False,
    )
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "stdout is closed" in err
    assert "Traceback" not in err
