"""Fixtures of the authorization tests: a real authorization server, and
``examples/protected_server.py`` served in front of it as a user runs it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests._served import Served
from tests.auth._as import AuthorizationServer
from tests.http._http_helpers import free_port

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "protected_server.py"


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthorizationServer]:
    with AuthorizationServer() as a:
        yield a


@pytest.fixture(scope="module")
def served(auth_server: AuthorizationServer) -> Iterator[str]:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    env = {
        **os.environ,
        "MCPKIT_AUTH_ISSUER": auth_server.issuer,
        "MCPKIT_AUTH_RESOURCE": resource,
    }
    out = Served.start(
        [
            sys.executable,
            "-m",
            "mcpkit",
            "run",
            str(EXAMPLE),
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        env=env,
    )
    proc = out.proc
    try:
        assert out.url().startswith(f"http://127.0.0.1:{port}")
        yield resource
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        out.close()
    # Tokens never reach the server's log, whatever happened.
    assert "eyJ" not in out.stderr()
