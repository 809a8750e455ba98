"""Third-party extensions through the seam, served by ``mcpkit run`` over real HTTP.

An extension declared in both eras is routed on 2025-11-25 sessions and stateless requests
alike; one declared for the stateless revision only is not found on a 2025-11-25 session;
its handler sees which extensions the request's client declared; its cacheable answers
carry the caching hints.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from tests._served import Served

from mcpkit import Client, ClientExtension, MethodNotFound, MissingRequiredClientCapability

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).resolve().parent / "clock_server.py"


class AlarmUser(ClientExtension):
    id = "com.example/alarm"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    argv = [
        sys.executable,
        "-m",
        "mcpkit",
        "run",
        str(SERVER),
        "--transport",
        "http",
        "--port",
        "0",
    ]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    served = Served(proc)
    try:
        yield served.url()
    finally:
        proc.terminate()
        proc.wait(10)
        served.close()


async def test_a_stateless_client_meets_both_extensions(url: str) -> None:
    with anyio.fail_after(20):
        async with Client(url, protocol_version="2026-07-28", extensions=[AlarmUser()]) as client:
            declared = client.server_capabilities.model_dump(by_alias=True)["extensions"]
            assert declared == {
                "com.example/clock": {"resolution": "seconds"},
                "com.example/alarm": {},
            }
            now = await client.send_request("clock/now")
            assert now["epoch"] == 1_700_000_000
            assert now["ttlMs"] == 0 and now["cacheScope"] == "private"  # cacheable
            assert await client.send_request("alarm/set", {"at": "7:00"}) == {"set": "7:00"}
        async with Client(url, protocol_version="2026-07-28") as plain:
            with pytest.raises(MissingRequiredClientCapability):
                await plain.send_request("alarm/set", {"at": "7:00"})


async def test_a_handshake_session_gets_only_the_extensions_declared_for_it(url: str) -> None:
    with anyio.fail_after(20):
        async with Client(url, protocol_version="2025-11-25") as client:
            declared = client.server_capabilities.model_dump(by_alias=True)["extensions"]
            assert declared == {"com.example/clock": {"resolution": "seconds"}}
            assert (await client.send_request("clock/now"))["epoch"] == 1_700_000_000
            with pytest.raises(MethodNotFound):
                await client.send_request("alarm/set", {"at": "7:00"})
