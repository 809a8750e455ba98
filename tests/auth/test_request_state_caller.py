"""Multi round-trip requests behind authorization (2026-07-28): the ``requestState`` a
server hands out is sealed to the verified caller, so another caller cannot replay it to
finish (or learn the answers of) someone else's request; the same caller with a new token can."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcpkit import Context, Server
from mcpkit.auth import Principal, ResourceServer, StaticTokenVerifier
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1/mcp"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}


def server() -> Server:
    who = {
        "alice-1": Principal(subject="alice", scopes=frozenset({"mcp"})),
        "alice-2": Principal(subject="alice", scopes=frozenset({"mcp"})),
        "bob": Principal(subject="bob", scopes=frozenset({"mcp"})),
    }
    s = Server("mrtr", auth=ResourceServer(StaticTokenVerifier(who), resource=URL, scopes=["mcp"]))

    @s.tool()
    async def transfer(amount: int, ctx: Context) -> str:
        answer = await ctx.elicit(
            "Confirm?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="confirm"
        )
        return f"{amount} sent: {answer.action}"

    return s


async def call(h: ASGIClient, token: str, extra: dict[str, Any]) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "transfer", "arguments": {"amount": 5}, "_meta": META, **extra},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {token}",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "transfer",
    }
    resp = await h.request("POST", URL, content=orjson.dumps(body), headers=headers)
    assert resp.status_code == 200, await resp.aread()
    return dict(orjson.loads(await resp.aread()))


async def test_request_state_is_sealed_to_the_caller() -> None:
    async with ASGIClient(server().http_app(json_response=True)) as h:
        first = (await call(h, "alice-1", {}))["result"]
        assert first["resultType"] == "input_required"
        retry = {
            "requestState": first["requestState"],
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        }
        stolen = await call(h, "bob", retry)
        assert "another caller" in stolen["error"]["message"]
        done = (await call(h, "alice-2", retry))["result"]
        assert done["content"][0]["text"] == "5 sent: accept"
