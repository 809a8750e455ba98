"""A client for the public MCP conformance suite's client scenarios.

    MCP_CONFORMANCE_SCENARIO=tools_call python examples/conformance_client.py http://localhost:3000/mcp

The harness starts a mock server, sets ``MCP_CONFORMANCE_SCENARIO`` and
``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the revision the scenario runs at: a stateless one,
2026-07-28, makes the client stateless, a handshake one makes it ``initialize``), passes the
server URL as the last argument and, for some scenarios, test data as JSON in
``MCP_CONFORMANCE_CONTEXT``; the exit status says whether the client got through. Every
scenario goes through :class:`mcpkit.Client` alone (no hand-made HTTP):

* ``initialize``: connect (initialize + initialized), list the tools, disconnect;
* ``tools_call``: call ``add_numbers``;
* ``elicitation-sep1034-client-defaults``: call ``test_client_elicitation_defaults`` and
  accept the form without filling it: the client applies the schema's defaults;
* ``sse-retry``: call ``test_reconnection``; the HTTP transport resumes the interrupted
  SSE stream after the server's ``retry`` delay, sending ``Last-Event-ID``;
* ``json-schema-2020-12-preservation``: list the tools and echo the typed ``inputSchema``
  of ``json_schema_2020_12_tool`` back through ``json_schema_echo``;
* ``json-schema-ref-no-deref``: list the tools (a network ``$ref`` is never fetched);
* ``request-metadata`` (2026-07-28): discover the server and list its tools; every request
  carries ``_meta`` (version, capabilities, client info) and the ``MCP-Protocol-Version``
  header, and a refused revision is retried with one the server names;
* ``http-standard-headers`` (2026-07-28): list, call, read and get every tool, resource and
  prompt: each POST mirrors its method (``Mcp-Method``) and name or URI (``Mcp-Name``);
* ``http-custom-headers`` (2026-07-28): make the ``toolCalls`` of the context; the tools'
  ``x-mcp-header`` arguments travel as ``Mcp-Param-*`` headers (Base64 when not plain);
* ``http-invalid-tool-headers`` (2026-07-28): list the tools (those with invalid
  ``x-mcp-header`` marks are left out, with a warning) and call each one kept;
* ``sep-2322-client-request-state`` (2026-07-28): call the tools that answer
  ``input_required``; the client answers their elicitations and retries with the
  ``requestState`` echoed (and none when none was given), and a tool called meanwhile, from
  the elicitation handler, carries nothing of that exchange.

Authorization scenarios (``auth/*``) connect with the ``auth=`` the scenario calls for, list
the tools and call ``test-tool``: :class:`~mcpkit.auth.OAuth` (authorization code with PKCE;
the "browser" here follows the authorization server's redirect without a person, and the
client's metadata document URL is the suite's CIMD one), pre-registered credentials for
``auth/pre-registration``, :class:`~mcpkit.auth.ClientCredentials` with a secret or a private
key, :class:`~mcpkit.auth.JWTBearer` with the workload token, and
:class:`~mcpkit.auth.EnterpriseAuth` with the IdP's ID token, all from the context. The
scenarios where a careful client must refuse (a resource or issuer that does not match)
end with the client's error, as the suite expects.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio

from mcpkit import Client, SkillVerificationError
from mcpkit.auth import ClientCredentials, EnterpriseAuth, JWTBearer, OAuth, OAuthFlow
from mcpkit.types import ElicitRequestFormParams
from mcpkit.types._revisions import SUPPORTED_PROTOCOL_VERSIONS

#: Seconds the whole run may take (the harness gives a client 30).
RUN_TIMEOUT = 25.0
#: The suite's client metadata document URL (a CIMD client id) and redirect URI.
CIMD_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"


def follow_authorization(url: str) -> str:
    """The suite's authorization servers approve at once: where the first redirect goes."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.netloc, timeout=10)
    try:
        conn.request("GET", parts.path + ("?" + parts.query if parts.query else ""))
        resp = conn.getresponse()
        location = resp.getheader("location")
        if resp.status not in (301, 302, 303, 307, 308) or not location:
            raise RuntimeError(f"the authorization endpoint answered HTTP {resp.status}")
        return location
    finally:
        conn.close()


async def browser(url: str) -> str:
    return await anyio.to_thread.run_sync(follow_authorization, url)


def auth_for(scenario: str, ctx: Mapping[str, Any]) -> OAuthFlow:
    """The ``auth=`` an authorization scenario calls for (its data from the context)."""
    if scenario == "auth/client-credentials-jwt":
        return ClientCredentials(
            ctx["client_id"],
            private_key=ctx["private_key_pem"],
            algorithm=ctx.get("signing_algorithm") or "ES256",
        )
    if scenario == "auth/client-credentials-basic":
        return ClientCredentials(ctx["client_id"], ctx["client_secret"])
    if scenario == "auth/wif-jwt-bearer":
        return JWTBearer(ctx["valid_jwt"], client_id=ctx.get("client_id"))
    if scenario == "auth/enterprise-managed-authorization":
        return EnterpriseAuth(
            id_token=ctx["idp_id_token"],
            idp_token_endpoint=ctx["idp_token_endpoint"],
            idp_client_id=ctx["idp_client_id"],
            client_id=ctx["client_id"],
            client_secret=ctx["client_secret"],
        )
    pre = scenario == "auth/pre-registration"
    return OAuth(
        redirect_handler=browser,
        redirect_uri=REDIRECT_URI,
        client_metadata_url=CIMD_URL,
        client_id=ctx.get("client_id") if pre else None,
        client_secret=ctx.get("client_secret") if pre else None,
        client_name="mcpkit-conformance-client",
    )


class Conformance:
    """One scenario's run: the client's callbacks and the steps the scenario expects."""

    def __init__(self, scenario: str, url: str, context: Mapping[str, Any]) -> None:
        self.scenario = scenario
        self.url = url
        self.context = context
        self.client: Client | None = None
        #: Tools called from inside an elicitation (the MRTR isolation check).
        self.called_meanwhile: list[str] = []

    async def elicit(self, params: ElicitRequestFormParams, ctx: Any) -> dict[str, Any]:
        if self.scenario == "sep-2322-client-request-state":
            # While the server waits for this answer, an unrelated call goes out: it must
            # carry none of the pending request's inputResponses or requestState.
            if not self.called_meanwhile and self.client is not None:
                self.called_meanwhile.append("test_mrtr_unrelated")
                await _check(await self.client.call_tool("test_mrtr_unrelated", {}))
            return {"action": "accept", "content": {"confirmed": True}}
        # Accept without typing anything: the client fills in the schema's defaults.
        return {"action": "accept", "content": {}}

    async def sample(self, params: Any, ctx: Any) -> str:
        return "this conformance client has no model"

    def client_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "timeout": 20.0,
            "client_info": {"name": "mcpkit-conformance-client", "version": "1.0.0"},
            "elicitation_handler": self.elicit,
        }
        version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
        if version in SUPPORTED_PROTOCOL_VERSIONS:
            # A stateless revision makes the client stateless, a handshake one initialize.
            options["protocol_version"] = version
        if self.scenario.startswith("auth/"):
            options["auth"] = auth_for(self.scenario, self.context)
        if self.scenario == "request-metadata":
            # Declare every optional client capability, for the scenario to check each.
            options.update(roots=[], sampling_handler=self.sample)
        return options

    async def run(self) -> None:
        async with Client(self.url, **self.client_options()) as client:
            self.client = client
            step = getattr(self, "_" + self.scenario.replace("-", "_").replace("/", "_"), None)
            if self.scenario.startswith("auth/"):
                await self._authorized()
            elif step is None:
                await self._list_tools()
            else:
                await step()

    async def _list_tools(self) -> None:
        assert self.client is not None
        if self.client.server_capabilities.tools is not None:
            await self.client.list_tools()

    async def _call(self, name: str, arguments: Mapping[str, Any] | None = None) -> None:
        assert self.client is not None
        await _check(await self.client.call_tool(name, dict(arguments or {})), name)

    # ------------------------------------------------------------------ scenarios

    async def _authorized(self) -> None:
        # List, then call: a call may need more scopes (step-up) or meet a moved
        # authorization server.
        assert self.client is not None
        names = [t.name for t in await self.client.list_tools()]
        if "test-tool" in names:
            await self._call("test-tool")

    async def _tools_call(self) -> None:
        await self._call("add_numbers", {"a": 2, "b": 3})

    async def _elicitation_sep1034_client_defaults(self) -> None:
        await self._call("test_client_elicitation_defaults")

    async def _sse_retry(self) -> None:
        await self._call("test_reconnection")

    async def _json_schema_2020_12_preservation(self) -> None:
        # Echo the typed tool's inputSchema back: every keyword must survive our parsing.
        assert self.client is not None
        tools = {t.name: t for t in await self.client.list_tools()}
        schema = tools["json_schema_2020_12_tool"].input_schema.to_wire()
        await self._call("json_schema_echo", {"schema": schema})

    async def _http_standard_headers(self) -> None:
        # Every request with a name: Mcp-Method on each POST, Mcp-Name on calls and reads.
        client = self.client
        assert client is not None
        for tool in await client.list_tools():
            await self._call(tool.name)
        for resource in await client.list_resources():
            await client.read_resource(resource.uri)
        for prompt in await client.list_prompts():
            await client.get_prompt(prompt.name)

    async def _http_custom_headers(self) -> None:
        # The calls the scenario gives: edge-case values of x-mcp-header arguments.
        calls = self.context.get("toolCalls")
        if not isinstance(calls, list) or not calls:
            raise SystemExit("http-custom-headers: no toolCalls in MCP_CONFORMANCE_CONTEXT")
        await self._list_tools()
        for call in calls:
            await self._call(call["name"], call.get("arguments"))

    async def _http_invalid_tool_headers(self) -> None:
        # The client leaves out (and warns about) the tools whose marks are invalid: the
        # ones listed are all safe to call.
        assert self.client is not None
        for tool in await self.client.list_tools():
            await self._call(tool.name, sample_arguments(tool.input_schema.to_wire()))

    async def _sep_2322_client_request_state(self) -> None:
        await self._list_tools()
        # Each asks for input first (with a requestState, then without one); the client
        # answers and retries on its own.
        await self._call("test_mrtr_echo_state")
        await self._call("test_mrtr_no_state")
        # A result without resultType is complete: no retry.
        await self._call("test_mrtr_no_result_type")
        if not self.called_meanwhile:
            raise SystemExit("the server never asked for input: no MRTR round took place")

    async def _sep_2640_client_no_prefetch(self) -> None:
        # What a host shows before the user picks a skill: the listing, no file read.
        assert self.client is not None
        for skill in await self.client.list_skills():
            print(f"skill {skill.name}: {skill.description}")

    async def _load_first_skill(self) -> None:
        # The user picked a skill: its SKILL.md is read and verified (size, digest,
        # frontmatter); tampered content is refused, and nothing more of it is read.
        assert self.client is not None
        skills = await self.client.list_skills()
        if not skills:
            raise SystemExit("the server lists no skill")
        try:
            loaded = await self.client.load_skill(skills[0])
        except SkillVerificationError as e:
            print(f"refused to load {skills[0].name}: {e}")
            return
        for uri in loaded.files[1:]:
            await loaded.read(uri)

    _sep_2640_client_verify_digest = _load_first_skill
    _sep_2640_client_verify_size = _load_first_skill
    _sep_2640_client_verify_frontmatter = _load_first_skill

    async def _request_metadata(self) -> None:
        # Connecting ran server/discover; one more request shows _meta on every request.
        await self._list_tools()


def sample_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Plain values for the required arguments of an input schema (by their types)."""
    props = schema.get("properties")
    required = schema.get("required")
    if not isinstance(props, Mapping) or not isinstance(required, list):
        return {}
    samples = {"string": "us-west1", "integer": 1, "boolean": True, "number": 1.5}
    out: dict[str, Any] = {}
    for name in required:
        prop = props.get(name)
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        if isinstance(kind, str) and kind in samples:
            out[name] = samples[kind]
    return out


async def _check(result: Any, name: str = "") -> None:
    if result.is_error:
        raise SystemExit(f"the tool {name} failed: {result.content}")


def context() -> dict[str, Any]:
    """The scenario's test data (``MCP_CONFORMANCE_CONTEXT``), if any."""
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    if not raw:
        return {}
    data = json.loads(raw)
    return data if isinstance(data, dict) else {}


async def run(scenario: str, url: str) -> None:
    with anyio.fail_after(RUN_TIMEOUT):
        await Conformance(scenario, url, context()).run()


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
