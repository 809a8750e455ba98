"""Hostile: a tool, prompt or resource hidden by visibility rules that has ``scopes=`` is
answered over HTTP exactly as one that does not exist, at every layer. The authorization
gate checks a request's own scopes before the server sees it; were it to ask for a hidden
target's scopes, its 403 ``insufficient_scope`` challenge would tell a caller without them
that the target exists (and which scopes unlock it).

Hidden server-wide (``server.disable``) in both eras, and by a session's own rules
(``ctx.disable``) under 2025-11-25; in process through the ASGI client, and once on a real
uvicorn. A visible scoped tool still gets the 403 (the gate still works)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx2
import orjson
import pytest
from tests.http._http_helpers import running

from mcpkit import Client, Context, HTTPStatusError, ProtocolError, Server, http
from mcpkit.auth import Principal, ResourceServer, StaticTokenVerifier
from mcpkit.lowlevel import ASGIClient

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1/mcp"
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
BASE = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "authorization": "Bearer t",  # a real token, without mcp:admin
}

#: ``post(message, headers) -> (status, headers, body)``: one POST to the MCP endpoint.
Post = Callable[[dict[str, Any], dict[str, str]], Awaitable[tuple[int, dict[str, str], bytes]]]


def build() -> Server:
    verifier = StaticTokenVerifier({"t": Principal(subject="u", scopes=frozenset({"mcp"}))})
    server = Server("hidden", auth=ResourceServer(verifier, resource=URL, scopes=["mcp"]))

    @server.tool(scopes=["mcp:admin"], tags={"admin"})
    def wipe() -> str:
        """Wipe everything (hidden server-wide)."""
        return "wiped"

    @server.tool(scopes=["mcp:admin"])
    def status() -> str:
        """Say how things are (visible, scoped)."""
        return "fine"

    @server.tool()
    async def hide_status(ctx: Context) -> str:
        """Hide the status tool from this session."""
        await ctx.disable(names={"status"})
        return "hidden"

    @server.prompt(scopes=["mcp:admin"], tags={"admin"})
    def audit() -> str:
        """Audit everything (hidden server-wide)."""
        return "audit"

    @server.resource("config://app", scopes=["mcp:admin"], tags={"admin"})
    def config() -> str:
        """The configuration (hidden server-wide)."""
        return "debug=false"

    server.disable(tags={"admin"})
    return server


def kept(headers: Any) -> dict[str, str]:
    """The response headers the checks read."""
    names = ("content-type", "mcp-session-id", "www-authenticate")
    return {k: headers.get(k) for k in names if headers.get(k) is not None}


def message(body: bytes, headers: dict[str, str]) -> Any:
    """The JSON-RPC message of a JSON or SSE answer."""
    if headers.get("content-type", "").startswith("text/event-stream"):
        data = [ln[5:].strip() for ln in body.decode().splitlines() if ln.startswith("data:")]
        body = [d for d in data if d][-1].encode()
    return orjson.loads(body)


class Era:
    """Requests of one era to one endpoint (a session opened first under 2025-11-25)."""

    def __init__(self, post: Post, version: str) -> None:
        self.post = post
        self.version = version
        self.headers = {**BASE, "mcp-protocol-version": version}
        self.ids = 0

    async def open(self) -> None:
        if self.version == MODERN:
            return
        info = {"name": "t", "version": "1"}
        params = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": info}
        status, headers, _ = await self.post(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, BASE
        )
        assert status == 200
        self.headers["mcp-session-id"] = headers["mcp-session-id"]
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(done, self.headers))[0] == 202

    async def ask(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        """``(status, www-authenticate or "", JSON-RPC message or body)`` of one request."""
        self.ids += 1
        headers = dict(self.headers)
        if self.version == MODERN:
            meta = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
            params = {**params, "_meta": meta}
            headers["mcp-method"] = method
            if "name" in params or "uri" in params:
                headers["mcp-name"] = params.get("name") or params["uri"]
        msg = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        with anyio.fail_after(10):
            status, got, body = await self.post(msg, headers)
        challenge = got.get("www-authenticate", "")
        return (
            status,
            {"www-authenticate": challenge},
            message(body, got) if status == 200 else body,
        )

    async def same_as_unknown(self, method: str, hidden: str, unknown: str) -> None:
        """Asking for ``hidden`` is answered as asking for ``unknown`` (names swapped)."""
        key = "name" if method != "resources/read" else "uri"
        extra: dict[str, Any] = {"arguments": {}} if method == "tools/call" else {}
        got = await self.ask(method, {key: hidden, **extra})
        self.ids -= 1  # the same id, so the two answers can be compared whole
        want = await self.ask(method, {key: unknown, **extra})
        assert got[0] == 200, got
        assert not got[1]["www-authenticate"]
        assert "error" in got[2], got
        swapped = orjson.loads(orjson.dumps(want[2]).replace(unknown.encode(), hidden.encode()))
        assert got == (want[0], want[1], swapped)

    async def refused_for_scope(self, tool: str) -> None:
        """The visible scoped ``tool`` is the 403 step-up challenge (the gate works)."""
        status, headers, _ = await self.ask("tools/call", {"name": tool, "arguments": {}})
        assert status == 403
        assert 'error="insufficient_scope"' in headers["www-authenticate"]
        assert "mcp:admin" in headers["www-authenticate"]


async def hostile(post: Post, version: str) -> None:
    era = Era(post, version)
    await era.open()
    await era.same_as_unknown("tools/call", "wipe", "nope")
    await era.same_as_unknown("prompts/get", "audit", "nope")
    await era.same_as_unknown("resources/read", "config://app", "config://nope")
    await era.refused_for_scope("status")
    if version == HANDSHAKE:
        # The session's own rules: hidden from this session only, from now on.
        _, _, done = await era.ask("tools/call", {"name": "hide_status", "arguments": {}})
        assert done["result"]["content"][0]["text"] == "hidden"
        await era.same_as_unknown("tools/call", "status", "nope")
        # Another session still sees it, and is refused for its scope.
        other = Era(post, version)
        await other.open()
        await other.refused_for_scope("status")


@pytest.mark.parametrize("version", [HANDSHAKE, MODERN])
async def test_a_hidden_scoped_target_is_answered_as_an_unknown_one(version: str) -> None:
    async with ASGIClient(build().http_app()) as h:

        async def post(msg: dict[str, Any], headers: dict[str, str]) -> Any:
            resp = await h.request("POST", URL, content=orjson.dumps(msg), headers=headers)
            return resp.status_code, kept(resp.headers), await resp.aread()

        await hostile(post, version)


async def test_a_hidden_scoped_target_is_unknown_on_a_real_uvicorn() -> None:
    with running(build().http_app()) as srv:
        async with httpx2.AsyncClient(timeout=10) as http:

            async def post(msg: dict[str, Any], headers: dict[str, str]) -> Any:
                resp = await http.post(srv.url, content=orjson.dumps(msg), headers=headers)
                return resp.status_code, kept(resp.headers), resp.content

            for version in (HANDSHAKE, MODERN):
                await hostile(post, version)


async def test_a_hidden_scoped_tool_is_unknown_over_legacy_sse_too() -> None:
    async with ASGIClient(build().http_app(legacy_sse=True)) as h:

        def client() -> Client:
            headers = {"authorization": "Bearer t"}
            return Client(http("http://127.0.0.1/sse", headers=headers, http_client=h))

        async with client() as mine, client() as other:
            with pytest.raises(ProtocolError, match=r"^Unknown tool: wipe \(code -32602\)$"):
                await mine.call_tool("wipe", {})
            await mine.call_tool("hide_status", {})
            with pytest.raises(ProtocolError, match=r"^Unknown tool: status \(code -32602\)$"):
                await mine.call_tool("status", {})
            # Visible to the other session: the message's POST is refused for its scope.
            with pytest.raises(HTTPStatusError) as refused:
                await other.call_tool("status", {})
            assert refused.value.status == 403


async def test_a_hidden_scoped_tool_in_a_2025_03_26_batch_is_unknown() -> None:
    async with ASGIClient(build().http_app()) as h:

        async def post(msg: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
            resp = await h.request("POST", URL, content=orjson.dumps(msg), headers=headers)
            body = await resp.aread()
            return resp.status_code, kept(resp.headers), body

        info = {"name": "t", "version": "1"}
        params = {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": info}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        _, got, _ = await post(init, BASE)
        headers = {**BASE, "mcp-session-id": got["mcp-session-id"]}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await post(done, headers))[0] == 202

        def calls(*names: str) -> list[dict[str, Any]]:
            return [
                {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": n}}
                for i, n in enumerate(names, 1)
            ]

        hidden = await post(calls("wipe", "hide_status"), headers)
        assert hidden[0] == 200, hidden
        answers = {a["id"]: a for a in message(hidden[2], hidden[1])}
        assert answers[1]["error"]["message"] == "Unknown tool: wipe"
        assert answers[2]["result"]["content"][0]["text"] == "hidden"
        # Hidden from this session now: unknown in a batch too, no 403.
        status, got, body = await post(calls("status"), headers)
        assert status == 200, body
        assert message(body, got)[0]["error"]["message"] == "Unknown tool: status"
