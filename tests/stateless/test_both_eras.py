"""One HTTP app serving a 2025-11-25 client and a 2026-07-28 client at the same time.

The same tool asks the user a question: the handshake client gets ``elicitation/create`` in
the middle of its call, the stateless one an ``InputRequiredResult`` it answers by retrying.
"""

from __future__ import annotations

import runpy
from typing import Any

import anyio
import pytest
from _stateless_helpers import EVERYTHING, TIMEOUT, URL

from mcpkit.lowlevel import ASGIClient, ClientSession, open_streamable_http

pytestmark = pytest.mark.anyio

ASK = {"name": "test_input_required_result_elicitation", "arguments": {}}


async def test_a_handshake_client_and_a_stateless_client_at_once() -> None:
    server = runpy.run_path(str(EVERYTHING))["server"]
    app = server.http_app()
    old_asked, new_done = anyio.Event(), anyio.Event()
    asked: dict[str, Any] = {}

    async def old_elicit(ctx: Any, params: Any) -> Any:
        asked["old"] = params
        old_asked.set()
        # Held open until the stateless client was served: both at once, on one app.
        await new_done.wait()
        return {"action": "accept", "content": {"name": "Old"}}

    async def new_elicit(ctx: Any, params: Any) -> Any:
        asked["new"] = params
        return {"action": "accept", "content": {"name": "New"}}

    results: dict[str, Any] = {}
    with anyio.fail_after(TIMEOUT):
        async with (
            ASGIClient(app) as http,
            open_streamable_http(URL, http_client=http) as old_t,
            open_streamable_http(URL, http_client=http) as new_t,
            ClientSession(
                old_t,
                client_info={"name": "old", "version": "1"},
                capabilities={"elicitation": {}},
                handlers={"elicitation/create": old_elicit},
            ) as old,
            ClientSession(
                new_t,
                client_info={"name": "new", "version": "1"},
                capabilities={"elicitation": {}},
                handlers={"elicitation/create": new_elicit},
            ) as new,
        ):
            init = await old.initialize()
            found = await new.discover()
            assert init["protocolVersion"] == "2025-11-25"
            assert found["supportedVersions"][0] == "2026-07-28"
            assert new.stateless and not old.stateless

            async def call_old() -> None:
                results["old"] = await old.send_request("tools/call", ASK)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call_old)
                await old_asked.wait()
                results["new"] = await new.send_request("tools/call", ASK)
                new_done.set()
            # Only the handshake client holds a session; the stateless one never did.
            assert len(app.sessions) == 1
    assert results["old"]["content"][0]["text"] == "Hello, Old!"
    assert results["new"]["content"][0]["text"] == "Hello, New!"
    # The same question, asked as each revision asks it.
    assert asked["old"]["message"] == asked["new"]["message"] == "What is your name?"
    assert asked["new"]["requestedSchema"] == asked["old"]["requestedSchema"]
