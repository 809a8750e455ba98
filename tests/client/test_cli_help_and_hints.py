"""What the CLI tells a new user, run as they run it (the console script, in a subprocess):
where to see why a tool crashed, ``mcpkit auth --help`` as plain text, and that a ``.py``
file is a target."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests._served import Served

MCPKIT = str(Path(sys.executable).with_name("mcpkit"))
ASKS = str(Path(__file__).parent / "servers" / "asks.py")
PLAIN_FAILURE = str(Path(__file__).parent / "servers" / "session_stdio.py")
STDIO_HINT = "(run it again with -v to see the server's log on stderr, where the cause is)"


def _mcpkit(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MCPKIT, *argv], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )


def test_a_crashing_tool_says_how_to_see_the_cause() -> None:
    done = _mcpkit("call", ASKS, "crash")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == f"Error executing tool crash\n{STDIO_HINT}\n"
    # The flag it names shows the server's log, where the exception is.
    done = _mcpkit("call", ASKS, "crash", "-v")
    assert done.returncode == 1
    assert "RuntimeError: the disk is on fire" in done.stderr
    assert STDIO_HINT not in done.stderr


def test_a_tool_error_that_explains_itself_gets_no_hint() -> None:
    done = _mcpkit("call", f"{sys.executable} {PLAIN_FAILURE}", "fail")
    assert (done.returncode, done.stderr) == (1, "it failed\n")


def test_over_http_the_hint_points_at_the_servers_log() -> None:
    served = Served.start([MCPKIT, "run", ASKS, "--transport", "http", "--port", "0"])
    try:
        url = served.url()
        done = _mcpkit("call", url, "crash")
    finally:
        served.proc.terminate()
        served.proc.wait(timeout=30)
        served.close()
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Error executing tool crash",
        "(the server logs the cause; an mcpkit server built with Server(mask_errors=False) "
        "sends it to clients)",
    ]
    assert "RuntimeError: the disk is on fire" in served.stderr()


def test_auth_help_is_plain_text() -> None:
    done = _mcpkit("auth", "--help")
    assert done.returncode == 0
    assert "``" not in done.stdout and ":class:" not in done.stdout and ":mod:" not in done.stdout
    assert "  mcpkit auth login URL          log in (opens the browser)" in done.stdout
    assert "  mcpkit auth dev-token ISSUER   print an access token" in done.stdout


def test_list_and_call_help_say_a_py_file_is_a_target() -> None:
    for command in ("list", "call", "read", "prompt"):
        done = _mcpkit(command, "--help")
        assert done.returncode == 0
        text = " ".join(done.stdout.split())  # argparse wraps at the terminal's width
        assert "the server: a .py file (run with this Python: server.py)" in text, text
