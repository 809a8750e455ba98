"""stdio over real subprocesses: framing, stdout protection, stderr draining, shutdown."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from tests._schema import WireRecorder

from mcpkit._exceptions import ConnectionClosed
from mcpkit._session import ClientSession
from mcpkit._transports import spawn_stdio

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).resolve().parents[1] / "servers" / "lowlevel.py")
INFO = {"name": "stdio-test", "version": "1"}


@asynccontextmanager
async def lowlevel(
    *args: str, stderr: list[str] | None = None
) -> AsyncIterator[tuple[ClientSession, Any, WireRecorder]]:
    sink = stderr.append if stderr is not None else (lambda line: None)
    async with spawn_stdio(sys.executable, [SERVER, *args], on_stderr=sink) as transport:
        rec = WireRecorder(transport, side="client")
        async with ClientSession(rec, client_info=INFO) as client:
            with anyio.fail_after(10):
                await client.initialize()
            yield client, transport, rec


def _text(result: Any) -> str:
    return str(result["content"][0]["text"])


async def call(client: ClientSession, name: str, timeout: float = 10, **args: Any) -> Any:
    with anyio.fail_after(timeout + 1):
        return await client.send_request(
            "tools/call", {"name": name, "arguments": args}, timeout=timeout
        )


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.req(
    "TRANSPORT-CLIENT-SUPPORT-STDIO", "STDIO-NO-EMBEDDED-NEWLINES", "STDIO-CLIENT-STDIN-ONLY-MCP"
)
async def test_round_trip_over_a_real_subprocess(backend: str) -> None:
    async with lowlevel("--backend", backend) as (client, _, rec):
        tools = await client.send_request("tools/list")
        assert "echo" in {t["name"] for t in tools["tools"]}
        tricky = 'line one\nline two\r\n\u2028 "quoted" \\ é 🎉'
        assert _text(await call(client, "echo", text=tricky)) == tricky
        big = "x" * (5 * 1024 * 1024)
        assert _text(await call(client, "echo", text=big)) == big
        rec.check()
        # one message per line, never a raw newline inside one
        for r in rec.messages:
            if r.raw is not None:
                assert b"\n" not in r.raw.rstrip(b"\n")


@pytest.mark.req("STDIO-SERVER-STDOUT-ONLY-MCP", "STDIO-STDERR-NOT-ERROR")
async def test_stray_prints_go_to_stderr_not_the_protocol_stream() -> None:
    lines: list[str] = []
    async with lowlevel(stderr=lines) as (client, _, rec):
        assert _text(await call(client, "print_to_stdout", text="hello from print")) == "printed"
        assert _text(await call(client, "echo", text="still fine")) == "still fine"
        rec.check()
    assert "hello from print" in lines
    assert "raw fd 1 write" in lines


async def test_chatty_stderr_cannot_stall_the_server() -> None:
    lines: list[str] = []
    async with lowlevel(stderr=lines) as (client, _, _rec):
        # 8 MiB of stderr, far beyond a pipe buffer: it must be drained while we wait
        assert _text(await call(client, "spam_stderr", kib=8192, timeout=20)) == "spammed"
        assert _text(await call(client, "echo", text="after")) == "after"
    assert len(lines) >= 8192


async def test_server_dying_mid_call_raises_promptly_with_its_exit_code() -> None:
    async with lowlevel() as (client, _transport, _):
        start = time.monotonic()
        with pytest.raises(ConnectionClosed, match="code 7"):
            await call(client, "exit", code=7)
        assert time.monotonic() - start < 5


@pytest.mark.req("LIFECYCLE-STDIO-CLIENT-SHUTDOWN-SEQUENCE")
async def test_closing_stdin_ends_a_well_behaved_server_cleanly() -> None:
    async with lowlevel() as (client, transport, _):
        await client.ping()
        process = transport.process
        start = time.monotonic()
    assert process.returncode == 0  # it exited by itself on EOF, no signal needed
    assert time.monotonic() - start < 2.5


@pytest.mark.slow
@pytest.mark.req("LIFECYCLE-STDIO-CLIENT-SHUTDOWN-SEQUENCE")
async def test_a_server_ignoring_eof_and_sigterm_is_killed_with_its_children(
    tmp_path: Path,
) -> None:
    script = tmp_path / "stubborn.py"
    pidfile = tmp_path / "child.pid"
    script.write_text(
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "sys.stdin.close()\n"
        "while True: time.sleep(1)\n"
    )
    start = time.monotonic()
    with anyio.fail_after(15):
        async with spawn_stdio(sys.executable, [str(script)]) as transport:
            while not pidfile.exists() or not pidfile.read_text():  # noqa: ASYNC110 (a file, not an event)
                await anyio.sleep(0.02)
            process = transport.process
    elapsed = time.monotonic() - start
    assert process.returncode == -9
    assert 3.5 < elapsed < 10  # stdin close (2 s), SIGTERM (2 s), then SIGKILL
    child = int(pidfile.read_text())
    # SIGKILL went to the whole group before the connection closed; the kernel ends the
    # grandchild asynchronously, so its death is awaited (bounded), not assumed instant.
    with anyio.fail_after(5):
        while _alive(child):  # noqa: ASYNC110 (another process's state)
            await anyio.sleep(0.05)


async def test_grandchildren_do_not_outlive_a_clean_shutdown() -> None:
    async with lowlevel() as (client, _, _rec):
        pid = int(_text(await call(client, "spawn_child")))
        assert _alive(pid)
    with anyio.fail_after(5):
        while _alive(pid):  # noqa: ASYNC110 (another process's state)
            await anyio.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


@pytest.mark.req("LIFECYCLE-HANDLE-ERROR-CASES")
async def test_oversized_and_malformed_lines_are_answered_and_serving_goes_on() -> None:
    async with spawn_stdio(sys.executable, [SERVER, "--max-message-size", "4096"]) as transport:

        async def exchange(raw: bytes) -> Any:
            await transport._writer.write(raw)
            with anyio.fail_after(5):
                return orjson.loads(await transport.receive())

        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INFO}
        ok = await exchange(
            orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
            + b"\n"
        )
        assert ok["result"]["protocolVersion"] == "2025-11-25"
        too_big = await exchange(
            b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"' + b"x" * 10000 + b'"}}\n'
        )
        assert too_big["error"]["code"] == -32600 and too_big["id"] is None
        bad = await exchange(b"\xff\xfe not json\n")
        assert bad["error"]["code"] == -32700
        pong = await exchange(b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
        assert pong == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_spawn_errors_are_clear() -> None:
    from mcpkit._exceptions import TransportError

    with pytest.raises(TransportError, match="no-such-binary"):
        async with spawn_stdio("/no-such-binary-here"):
            pass


async def test_environment_is_a_safe_subset_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPKITENV_SECRET_TOKEN", "s3cret")
    code = "import os, sys; sys.stdout.write(repr(sorted(k for k in os.environ if k.startswith('MCPKITENV_')))); sys.stdout.flush()"
    for inherit, env, want in (
        (False, None, []),
        (False, {"MCPKITENV_X": "1"}, ["MCPKITENV_X"]),
        (True, None, ["MCPKITENV_SECRET_TOKEN"]),
    ):
        async with spawn_stdio(
            sys.executable, ["-c", code], env=env, inherit_env=inherit
        ) as transport:
            with anyio.fail_after(5):
                data = await transport._reader.read()
            assert data.decode() == repr(want)
    assert os.environ["MCPKITENV_SECRET_TOKEN"] == "s3cret"


async def test_sending_to_a_server_that_exited_says_how_it_ended() -> None:
    """A server that printed a line and exited before reading anything: the failed send
    says how it ended (exit code, stderr), not only that the pipe is closed; a lost race
    between our first message and its exit once made the CLI say just "the pipe is closed"."""
    script = "import sys; print('Server starting...'); sys.stderr.write('bye now\\n')"
    async with spawn_stdio(sys.executable, ["-c", script]) as transport:
        with anyio.fail_after(10):
            await transport.process.wait()
            with pytest.raises(BrokenPipeError) as caught:
                for _ in range(1000):  # the first writes may still land in the pipe's buffer
                    await transport.send({"jsonrpc": "2.0", "method": "ping", "id": 1})
    assert "the server process exited with code 0" in str(caught.value)
    assert "bye now" in str(caught.value)
