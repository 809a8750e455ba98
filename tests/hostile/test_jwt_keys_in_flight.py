"""The JWT verifier while its keys are being fetched, over real processes: the real
authorization server (oidc-provider on node) and ``mcpkit run`` serving a protected server.

Before: of 200 calls right after start, the ones arriving during the first key fetch found
the attempt rate-limited, skipped the lock and found no keys: ``503 temporarily_unavailable``
while the issuer was up. After a key rotation the same race answered valid tokens ``401``
(an unknown key id while the refetch was in flight). Now they wait for the fetch in flight.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import jwt
import orjson
import pytest
from tests._served import Served
from tests.auth._as import AuthorizationServer
from tests.http._http_helpers import HEADERS, INIT_PARAMS, free_port

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "protected_server.py"
CALLS = 200
INITIALIZE = orjson.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
)

#: A protected server whose verifier reads its clock's offset from a file: the test moves
#: its clock past ``min_refresh`` without waiting 30 s.
ROTATING = """
import os
import time
from pathlib import Path

from mcpkit import Server
from mcpkit.auth import JWTVerifier, ResourceServer

SKEW = Path(os.environ["TEST_CLOCK_SKEW_FILE"])
ISSUER = os.environ["MCPKIT_AUTH_ISSUER"]
RESOURCE = os.environ["MCPKIT_AUTH_RESOURCE"]


def clock() -> float:
    return time.time() + float(SKEW.read_text() or 0)


verifier = JWTVerifier(ISSUER, RESOURCE, min_refresh=30, clock=clock)
server = Server(
    "rotating",
    auth=ResourceServer(
        verifier, resource=RESOURCE, authorization_servers=[ISSUER], scopes=["mcp:tools"]
    ),
)


@server.tool()
def ping() -> str:
    return "pong"
"""


@contextlib.contextmanager
def protected(file: Path, issuer: str, port: int, **env: str) -> Iterator[str]:
    """``mcpkit run FILE -t http`` with the auth environment; its MCP URL once it listens."""
    resource = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", str(file), "-t", "http", "--port", str(port)],
        env={**os.environ, "MCPKIT_AUTH_ISSUER": issuer, "MCPKIT_AUTH_RESOURCE": resource, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    out = Served(proc)
    try:
        out.url()
        yield resource
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        out.close()


async def burst(url: str, token: str, calls: int = CALLS) -> Counter[int]:
    """``calls`` initialize requests at once, each on its own connection; their statuses."""
    statuses: Counter[int] = Counter()
    headers = {**HEADERS, "authorization": f"Bearer {token}"}
    limits = httpx2.Limits(max_connections=calls, max_keepalive_connections=0)
    async with httpx2.AsyncClient(timeout=30, limits=limits) as http:

        async def one() -> None:
            answer = await http.post(url, headers=headers, content=INITIALIZE)
            statuses[answer.status_code] += 1

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for _ in range(calls):
                    tg.start_soon(one)
    return statuses


async def test_calls_right_after_start_wait_for_the_first_key_fetch() -> None:
    with AuthorizationServer() as auth:
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        token = await anyio.to_thread.run_sync(auth.token, resource)
        # The server as a user runs it; the burst starts the moment it listens.
        with protected(EXAMPLE, auth.issuer, port) as url:
            statuses = await burst(url, token)
    assert statuses == Counter({200: CALLS}), statuses


async def test_a_rotated_key_id_waits_for_the_refetch_in_flight(tmp_path: Path) -> None:
    server = tmp_path / "rotating.py"
    server.write_text(textwrap.dedent(ROTATING))
    skew = tmp_path / "skew"
    skew.write_text("0")
    with AuthorizationServer() as auth:
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        old = await anyio.to_thread.run_sync(auth.token, resource)
        with protected(server, auth.issuer, port, TEST_CLOCK_SKEW_FILE=str(skew)) as url:
            assert await burst(url, old, 1) == Counter({200: 1})  # the keys are fetched
            kid = await anyio.to_thread.run_sync(auth.rotate)
            new = await anyio.to_thread.run_sync(auth.token, resource)
            assert jwt.get_unverified_header(new)["kid"] == kid
            skew.write_text("60")  # past min_refresh (30 s): an unknown kid may refetch
            statuses = await burst(url, new)
            assert statuses == Counter({200: CALLS}), statuses
            # Old tokens still verify (the old keys stay published), with no fetch needed.
            assert await burst(url, old, 20) == Counter({200: 20})
