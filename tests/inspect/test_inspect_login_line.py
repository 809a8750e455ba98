"""Issue 33: ``mcpkit inspect URL`` on a protected server says what to run on the terminal
too, not only in the page: one line naming ``mcpkit auth login URL`` when its first
connection is refused with 401 (a real ``examples/protected_server.py`` process)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tests._served import Served
from tests.conftest import BACKEND
from tests.inspect._browser_harness import ROOT, inspected

pytestmark = pytest.mark.skipif(
    BACKEND != "asyncio", reason="the inspector and the server are processes: one pass is enough"
)


def test_a_401_at_the_first_connection_prints_the_login_command(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPKIT_AUTH")}
    env["MCPKIT_AUTH_FILE"] = str(tmp_path / "auth.json")  # no stored logins
    # A request without a token is refused before any issuer is asked: none needs to run.
    env["MCPKIT_AUTH_ISSUER"] = "http://127.0.0.1:9/issuer"
    env["MCPKIT_AUTH_RESOURCE"] = "http://127.0.0.1:8000/mcp"
    run = ["run", "examples/protected_server.py", "-t", "http", "--port", "0"]
    served = Served.start([sys.executable, "-m", "mcpkit", *run], cwd=ROOT, env=env)
    server = served.proc
    try:
        url = served.url()
        with inspected(["inspect", url], env=env) as inspector:
            line = inspector.stderr_line("mcpkit inspect: the server wants")
            assert line == (
                f"mcpkit inspect: the server wants an OAuth login: run `mcpkit auth login {url}`"
            )
            assert inspector.proc.poll() is None  # still serving the page, which says it too
    finally:
        server.kill()
        server.wait(timeout=10)
        served.close()
