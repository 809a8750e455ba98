"""Handlers that misbehave, and peers that push: each case over a real stdio server process.

Found by an adversarial run (issue 13): before the fixes, each of these left a caller waiting
forever, a server that would not exit, or no server at all.
"""

from __future__ import annotations

from pathlib import Path

from tests.hostile._proc import StdioServer

SERVER = """
import asyncio
import anyio
from mcpkit import Server

server = Server("hostile")


@server.tool()
async def self_cancelled() -> str:
    '''Awaits a future someone else cancelled: CancelledError, though nobody cancelled us.'''
    future = asyncio.get_running_loop().create_future()
    future.cancel()
    await future
    return "unreachable"


@server.tool()
async def hang() -> str:
    '''Never returns.'''
    await anyio.sleep_forever()
    return "unreachable"


@server.tool()
def interrupt() -> str:
    '''A sync tool raising KeyboardInterrupt in its worker thread.'''
    raise KeyboardInterrupt("from the tool")


@server.tool()
def echo(x: float = 0) -> str:
    '''Answers at once.'''
    return f"echo {x}"
"""


def _text(answer: dict) -> str:  # type: ignore[type-arg]
    return str(answer["result"]["content"][0]["text"])


def test_handler_raising_cancelled_error_on_its_own_is_answered(tmp_path: Path) -> None:
    with StdioServer(tmp_path, SERVER) as server:
        server.handshake()
        server.call(2, "self_cancelled")
        error = server.answer(2)["error"]
        assert error["code"] == -32603 and "CancelledError" in error["message"]
        server.call(3, "echo")
        assert _text(server.answer(3)) == "echo 0"


def test_ping_is_answered_while_every_handler_slot_is_busy(tmp_path: Path) -> None:
    """The spec: a ping MUST be answered promptly. 300 hung calls fill all 256 slots."""
    with StdioServer(tmp_path, SERVER) as server:
        server.handshake()
        for i in range(300):
            server.call(f"hang-{i}", "hang")
        server.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
        assert server.answer("ping", timeout=5)["result"] == {}


def test_number_beyond_a_double_is_answered_under_its_id(tmp_path: Path) -> None:
    """``1e400`` is valid JSON that overflows a double: an error for that id, not id null."""
    with StdioServer(tmp_path, SERVER) as server:
        server.handshake()
        server.send_raw(
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call",'
            b'"params":{"name":"echo","arguments":{"x":1e400}}}\n'
        )
        error = server.answer(7)["error"]
        assert error["code"] == -32700 and "infinity" in error["message"]
        server.call(8, "echo", {"x": 1.5})
        assert _text(server.answer(8)) == "echo 1.5"


def test_stdin_closing_while_a_handler_hangs_ends_the_server(tmp_path: Path) -> None:
    with StdioServer(tmp_path, SERVER) as server:
        server.handshake()
        server.call(2, "hang")
        server.call(3, "echo")
        assert _text(server.answer(3)) == "echo 0"  # the hung call has started
        server.close_stdin()
        assert server.exit_status(timeout=15) == 0


def test_sync_tool_raising_keyboard_interrupt_does_not_kill_the_server(tmp_path: Path) -> None:
    with StdioServer(tmp_path, SERVER) as server:
        server.handshake()
        server.call(2, "interrupt")
        # A failed tool (its details masked by default), not a dead server.
        assert server.answer(2)["result"]["isError"] is True
        server.call(3, "echo")
        assert _text(server.answer(3)) == "echo 0"
        assert server.proc.poll() is None
