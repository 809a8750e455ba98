"""A client for the public MCP conformance suite's client scenarios.

    MCP_CONFORMANCE_SCENARIO=tools_call python examples/conformance_client.py http://localhost:3000/mcp

The harness starts a mock server, sets ``MCP_CONFORMANCE_SCENARIO`` and passes the server URL
as the last argument; the exit status says whether the client got through. Scenarios:

* ``initialize``: connect (initialize + initialized), list the tools, disconnect;
* ``tools_call``: call ``add_numbers``;
* ``elicitation-sep1034-client-defaults``: call ``test_client_elicitation_defaults`` and
  accept the form without filling it: the client applies the schema's defaults;
* ``sse-retry``: call ``test_reconnection``; the HTTP transport resumes the interrupted
  SSE stream after the server's ``retry`` delay, sending ``Last-Event-ID``;
* ``json-schema-2020-12-preservation`` (newer harnesses): list the tools and echo the typed
  ``inputSchema`` of ``json_schema_2020_12_tool`` back through ``json_schema_echo``.

Other scenarios (authorization) run the ``initialize`` steps.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import anyio

from mcpkit import Client
from mcpkit.types import ElicitRequestFormParams
from mcpkit.types._revisions import SUPPORTED_PROTOCOL_VERSIONS


async def accept_with_defaults(params: ElicitRequestFormParams, ctx: Any) -> dict[str, Any]:
    # Accept without typing anything: the client fills in the schema's defaults.
    return {"action": "accept", "content": {}}


async def run(scenario: str, url: str) -> None:
    with anyio.fail_after(60):
        await _scenario(scenario, url)


async def _scenario(scenario: str, url: str) -> None:
    kwargs: dict[str, Any] = {"timeout": 30.0, "elicitation_handler": accept_with_defaults}
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    if version in SUPPORTED_PROTOCOL_VERSIONS:
        kwargs["protocol_version"] = version
    async with Client(
        url, client_info={"name": "mcpkit-conformance-client", "version": "1.0.0"}, **kwargs
    ) as client:
        if scenario == "tools_call":
            result = await client.call_tool("add_numbers", {"a": 2, "b": 3})
        elif scenario == "elicitation-sep1034-client-defaults":
            result = await client.call_tool("test_client_elicitation_defaults", {})
        elif scenario == "sse-retry":
            result = await client.call_tool("test_reconnection", {})
        elif scenario == "json-schema-2020-12-preservation":
            # Echo the typed tool's inputSchema back: every keyword must survive our parsing.
            tools = {t.name: t for t in await client.list_tools()}
            schema = tools["json_schema_2020_12_tool"].input_schema.to_wire()
            result = await client.call_tool("json_schema_echo", {"schema": schema})
        else:
            if client.server_capabilities.tools is not None:
                await client.list_tools()
            return
        if result.is_error:
            raise SystemExit(f"the tool failed: {result.content}")


def main() -> int:
    logging.basicConfig(level=logging.WARNING)
    if len(sys.argv) < 2:
        print(
            "usage: conformance_client.py SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)",
            file=sys.stderr,
        )
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    try:
        anyio.run(run, scenario, sys.argv[-1])
    except Exception as e:
        print(f"conformance client ({scenario}): {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
