"""Foundation interop with the official Python SDK (``mcp`` on PyPI), on every revision.

* The official ``ClientSession`` over its ``stdio_client`` initializes, pings, lists and calls
  tools on our session-layer server (``tests/servers/lowlevel.py``), restricted with
  ``--versions`` so negotiation lands on the revision under test. The official client always
  asks for its latest handshake revision (2025-11-25) and accepts any older one it knows.
  The traffic is logged by a stdio tap (``wire_tap.py``) and replayed through
  :class:`~tests._schema.WireRecorder` as seen from our server's end.
* Our ``ClientSession`` over ``spawn_stdio`` does the same against the official
  ``MCPServer`` (``official_server.py``), asking for the revision under test, with our end of
  the transport wrapped in a ``WireRecorder``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from tests._schema import REVISIONS, WireRecorder, replay_tap_log

from mcpkit._session import ClientSession
from mcpkit._transports import spawn_stdio

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LOWLEVEL = ROOT / "tests" / "servers" / "lowlevel.py"
OFFICIAL_SERVER = HERE / "official_server.py"
TAP = HERE / "wire_tap.py"
#: Bound on each whole exchange (spawning a Python process included).
EXCHANGE_TIMEOUT = 20.0
CLIENT_INFO = {"name": "mcpkit-interop", "version": "0.0.1"}


@pytest.mark.parametrize("rev", REVISIONS)
@pytest.mark.req(
    "LIFECYCLE-VERSION-SERVER-SAME-IF-SUPPORTED",
    "LIFECYCLE-VERSION-SERVER-OTHER-SUPPORTED",
    "LIFECYCLE-RESPECT-NEGOTIATED-VERSION",
    "PING-RESPOND-EMPTY",
    "STDIO-SERVER-STDOUT-ONLY-MCP",
)
async def test_official_client_on_our_server(rev: str, tmp_path: Path) -> None:
    from mcp import types
    from mcp.client.session import ClientSession as OfficialClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    log = tmp_path / "wire.jsonl"
    server = StdioServerParameters(
        command=sys.executable,
        args=[str(TAP), str(log), "--", sys.executable, str(LOWLEVEL), "--versions", rev],
        cwd=str(ROOT),
    )
    with (tmp_path / "stderr.txt").open("w") as errlog:
        with anyio.fail_after(EXCHANGE_TIMEOUT):
            async with (
                stdio_client(server, errlog=errlog) as (read, write),
                OfficialClientSession(
                    read, write, client_info=types.Implementation(name="official", version="2")
                ) as session,
            ):
                init = await session.initialize()
                assert init.protocol_version == rev
                assert session.protocol_version == rev
                assert init.server_info.name == "lowlevel"
                await session.send_ping()
                listed = await session.list_tools()
                tools = {t.name: t for t in listed.tools}
                assert tools["echo"].input_schema["properties"] == {"text": {"type": "string"}}
                called = await session.call_tool("echo", {"text": "héllo"})
                assert not called.is_error
                assert [c.model_dump(exclude_none=True) for c in called.content] == [
                    {"type": "text", "text": "héllo"}
                ]

    recorder = await replay_tap_log(log)
    assert recorder.check() == rev
    # The official client asks for its newest revision; our server keeps it when it speaks it
    # and otherwise answers with the one revision it was restricted to.
    init_request = recorder.received[0]
    assert init_request["method"] == "initialize"
    assert init_request["params"]["protocolVersion"] == REVISIONS[-1]
    init_response = next(m for m in recorder.sent if m.get("id") == init_request["id"])
    assert init_response["result"]["protocolVersion"] == rev
    methods = [m.get("method") for m in recorder.received if "method" in m]
    assert methods == [
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list",
        "tools/call",
    ]
    ping = next(m for m in recorder.received if m.get("method") == "ping")
    assert next(m for m in recorder.sent if m.get("id") == ping["id"])["result"] == {}


@pytest.mark.parametrize("rev", REVISIONS)
@pytest.mark.req(
    "TRANSPORT-CLIENT-SUPPORT-STDIO",
    "LIFECYCLE-VERSION-CLIENT-SENDS-SUPPORTED",
    "LIFECYCLE-CLIENT-SENDS-INITIALIZED",
    "LIFECYCLE-RESPECT-NEGOTIATED-VERSION",
    "STDIO-CLIENT-STDIN-ONLY-MCP",
)
async def test_our_client_on_official_server(rev: str) -> None:
    stderr: list[str] = []
    with anyio.fail_after(EXCHANGE_TIMEOUT):
        async with spawn_stdio(
            sys.executable, [str(OFFICIAL_SERVER)], cwd=ROOT, on_stderr=stderr.append
        ) as transport:
            recorder = WireRecorder(transport, side="client")
            async with ClientSession(
                recorder, client_info=CLIENT_INFO, protocol_version=rev
            ) as session:
                init = await session.initialize(timeout=10)
                assert init["protocolVersion"] == rev
                assert session.protocol_version == rev
                assert session.server_info["name"] == "official-interop"
                assert "tools" in session.server_capabilities
                await session.ping(timeout=5)
                listed = await session.send_request("tools/list", {}, timeout=5)
                tools = {t["name"]: t for t in listed["tools"]}
                add = tools["add"]
                assert add["description"] == "Add two integers."
                schema = add["inputSchema"]
                assert schema["type"] == "object"
                assert set(schema["properties"]) == {"a", "b"}
                assert schema["properties"]["a"]["type"] == "integer"
                assert sorted(schema["required"]) == ["a", "b"]
                assert "shout" in tools
                called = await session.send_request(
                    "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, timeout=5
                )
                assert not called.get("isError")
                assert called["content"] == [{"type": "text", "text": "5"}]
                shouted = await session.send_request(
                    "tools/call", {"name": "shout", "arguments": {"text": "hi"}}, timeout=5
                )
                assert shouted["content"][0]["text"] == "HI"
    assert recorder.check() == rev, "\n".join(stderr)
    sent_methods = [m["method"] for m in recorder.sent if "method" in m]
    assert sent_methods == [
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list",
        "tools/call",
        "tools/call",
    ]
    assert recorder.sent[0]["params"]["protocolVersion"] == rev
