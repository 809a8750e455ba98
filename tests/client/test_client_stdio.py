"""The Client over stdio against misbehaving servers: clear errors, bounded waits, no leaks."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from mcpkit import Client
from mcpkit._exceptions import ConnectionClosed, InvalidResponse, RequestTimeout, TransportError

pytestmark = pytest.mark.anyio


def file_uri(path: Path) -> str:
    return path.resolve().as_uri()


def real(path: Path) -> str:
    return str(path.resolve())


HERE = Path(__file__).parent
BAD = str(HERE / "servers" / "misbehaving.py")


def bad(mode: str) -> list[str]:
    return [sys.executable, BAD, mode]


def pid_of(client: Client) -> int:
    pid: int = client.session.engine.transport.process.pid  # type: ignore[attr-defined]
    return pid


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie still answers kill(0); it is gone for our purposes once reaped, which
    # anyio's process wait does. Check /proc as well.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def test_command_as_string_list_and_py_shortcut() -> None:
    with anyio.fail_after(20):
        for target in (f"{sys.executable} {BAD} ok", bad("ok"), f"{BAD} ok"):
            async with Client(target, on_stderr=lambda line: None) as client:
                assert client.server_info.name == "ok"
                r = await client.call_tool("get")
                pid = pid_of(client)
            assert r.content[0].text == "ok"  # type: ignore[union-attr]
            assert gone(pid)


async def test_command_that_does_not_exist() -> None:
    with anyio.fail_after(5), pytest.raises(TransportError, match="cannot start"):
        async with Client("/nonexistent/mcp-server --flag"):
            pass  # pragma: no cover


async def test_server_exiting_at_once_is_a_clear_error() -> None:
    with (
        anyio.fail_after(10),
        pytest.raises(ConnectionClosed, match=r"(?s)exited with code 7.*boom"),
    ):
        async with Client(
            [sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(7)"],
            on_stderr=lambda line: None,
        ):
            pass  # pragma: no cover


@pytest.mark.req("LIFECYCLE-TIMEOUTS")
async def test_server_that_never_answers_initialize() -> None:
    with anyio.fail_after(10), pytest.raises(RequestTimeout, match="initialize"):
        async with Client(bad("silent"), init_timeout=0.5):
            pass  # pragma: no cover


async def test_server_exiting_mid_call() -> None:
    lines: list[str] = []
    with anyio.fail_after(10):
        async with Client(bad("exit-mid-call"), on_stderr=lines.append) as client:
            pid = pid_of(client)
            with pytest.raises(
                ConnectionClosed, match=r"(?s)exited with code 3.*crashed on purpose"
            ):
                await client.call_tool("get")
            with pytest.raises(ConnectionClosed):
                await client.list_tools()
        assert gone(pid)
    assert "fatal: the server crashed on purpose" in lines


async def test_malformed_output_is_survived_and_reported() -> None:
    with anyio.fail_after(10):
        async with Client(bad("malformed")) as client:
            with pytest.raises(InvalidResponse, match="malformed tools/call result"):
                await client.call_tool("get")
            await client.ping()  # the connection survived the noise


async def test_result_violating_output_schema() -> None:
    with anyio.fail_after(10):
        async with Client(bad("bad-output")) as client:
            with pytest.raises(InvalidResponse, match=r"outputSchema.*n: expected integer"):
                await client.call_tool("get")


@pytest.mark.slow
async def test_hanging_call_times_out_and_stubborn_process_is_killed() -> None:
    with anyio.fail_after(20):
        async with Client(bad("hang-call"), timeout=0.5) as client:
            pid = pid_of(client)
            with pytest.raises(RequestTimeout):
                await client.call_tool("get")
        # It ignores stdin EOF and SIGTERM: closing must still end it, in bounded time.
        assert gone(pid)


async def test_old_revision_server_is_read_correctly() -> None:
    with anyio.fail_after(10):
        async with Client(bad("old-revision")) as client:
            assert client.protocol_version == "2024-11-05"
            tools = await client.list_tools()
            assert tools[0].output_schema is None
            r = await client.call_tool("get")
            assert r.content[0].text == "ok"  # type: ignore[union-attr]
            assert [x.uri for x in await client.list_resources()] == ["file:///a"]
            p = await client.get_prompt("x")
            assert p.messages[0].role == "user"


async def test_env_and_cwd(tmp_path: Path) -> None:
    code = (
        "import os, sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'initialize':\n"
        "        info = {'name': os.environ.get('GREETING', '-') + '|' + os.getcwd(), 'version': '0'}\n"
        "        r = {'protocolVersion': m['params']['protocolVersion'], 'capabilities': {}, 'serverInfo': info}\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
    )
    secret_name = "MCPKIT_TEST_SECRET"
    os.environ[secret_name] = "leak"
    try:
        with anyio.fail_after(10):
            # A minimal server that answers initialize only (and ignores the rest): asking
            # for the handshake revision skips the server/discover probe it would not answer.
            async with Client(
                [sys.executable, "-c", code],
                env={"GREETING": "hi"},
                cwd=tmp_path,
                protocol_version="2025-11-25",
            ) as client:
                assert client.server_info.name == f"hi|{real(tmp_path)}"
            code2 = code.replace(
                "os.environ.get('GREETING', '-')", f"os.environ.get('{secret_name}', '-')"
            )
            async with Client(
                [sys.executable, "-c", code2], protocol_version="2025-11-25"
            ) as client:
                assert client.server_info.name.startswith("-|")  # not inherited by default
            async with Client(
                [sys.executable, "-c", code2], inherit_env=True, protocol_version="2025-11-25"
            ) as client:
                assert client.server_info.name.startswith("leak|")
    finally:
        del os.environ[secret_name]


async def test_unreachable_http_url_is_a_clear_transport_error() -> None:
    """Nothing listens there: the error names the URL and the reason, promptly."""
    with anyio.fail_after(5), pytest.raises(TransportError) as err:
        async with Client("http://127.0.0.1:9/mcp"):
            pass  # pragma: no cover
    assert "cannot reach http://127.0.0.1:9/mcp" in str(err.value)
    assert "could not connect to 127.0.0.1:9" in str(err.value)


async def test_path_target_with_spaces(tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "my servers"
    folder.mkdir()
    script = folder / "session stdio.py"
    shutil.copy(HERE / "servers" / "session_stdio.py", script)
    with anyio.fail_after(10):
        async with Client(script) as client:
            assert client.server_info.name == "session-stdio"


async def test_cancelled_while_connecting_leaves_nothing_behind() -> None:
    marker = "mcpkit-cancel-connect-marker"
    with anyio.fail_after(15):
        with anyio.move_on_after(0.5) as scope:
            async with Client([sys.executable, BAD, "silent", marker]):
                pass  # pragma: no cover
        assert scope.cancelled_caught
    # The server process was stopped although the connect was cancelled.
    ps = await anyio.run_process(["ps", "-eo", "args"])
    assert marker not in ps.stdout.decode()
