"""Behind authorization, a task belongs to the verified principal: the same caller finds it
from a new session (a reconnection, a refreshed token), another caller cannot see or read it."""

from __future__ import annotations

import pytest

from mcpkit import Client, ProtocolError, Server, http
from mcpkit.auth import Principal, ResourceServer, StaticTokenVerifier
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1/mcp"


def tasks_server() -> Server:
    verifier = StaticTokenVerifier(
        {
            "alice-1": Principal(subject="alice", scopes=frozenset({"mcp"})),
            "alice-2": Principal(subject="alice", scopes=frozenset({"mcp"})),
            "bob": Principal(subject="bob", scopes=frozenset({"mcp"})),
        }
    )
    server = Server("tasks", auth=ResourceServer(verifier, resource=URL, scopes=["mcp"]))

    @server.tool(task_support="optional")
    async def build(target: str) -> str:
        return f"built {target}"

    return server


@pytest.mark.req("TASKS-BIND-AUTH")
async def test_a_task_follows_its_principal_not_its_session() -> None:
    async with ASGIClient(tasks_server().http_app()) as h:

        def client(token: str) -> Client:
            target = http(URL, headers={"authorization": f"Bearer {token}"}, http_client=h)
            return Client(target, protocol_version="2025-11-25")

        async with client("alice-1") as first:
            handle = await first.call_tool_as_task("build", {"target": "all"})
            assert (await handle.result(timeout=10)).content[0].text == "built all"  # type: ignore[union-attr]
        async with client("alice-2") as again:  # a new session, a new token, the same caller
            assert handle.task_id in {t.task_id for t in await again.list_tasks()}
            assert (await again.task(handle.task_id).status()).status == "completed"
        async with client("bob") as other:
            assert await other.list_tasks() == []
            with pytest.raises(ProtocolError):
                await other.task(handle.task_id).status()
