"""A browser host on another origin reaches ``mcpkit run ... --allowed-origin ORIGIN``
(issue 44): headless Chromium, a page served from one origin (a tiny static server), the
MCP server a real process on another port. The page's own ``fetch`` lists the tools, in
both eras (the 2025 session read from the exposed ``Mcp-Session-Id``); the same page from
an origin not allowed is refused by the browser. Before, the preflight was a 405 and every
fetch failed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.http._http_helpers import running
from tests.inspect._browser_harness import browser_page, mcpkit_run_http, static_site

from mcpkit import Server
from mcpkit.auth import ResourceServer, StaticTokenVerifier

pytestmark = pytest.mark.timeout(180)

SERVER = '''
from mcpkit import Server

server = Server("cors-browser")


@server.tool()
def echo(text: str) -> str:
    """Says the text back."""
    return text
'''

PAGE = b"<!doctype html><title>host</title><p>a browser host</p>"

#: What the page runs: one era's tools/list through the page's own fetch. An SSE answer's
#: message is its last data line.
LIST_TOOLS = """async ([url, era]) => {
  const base = {'content-type': 'application/json',
                'accept': 'application/json, text/event-stream'};
  const read = async (r) => {
    const text = await r.text();
    if (!(r.headers.get('content-type') || '').startsWith('text/event-stream'))
      return text ? JSON.parse(text) : null;
    const data = text.split('\\n').filter(l => l.startsWith('data:') && l.length > 5);
    return JSON.parse(data[data.length - 1].slice(5));
  };
  const post = (msg, headers) =>
    fetch(url, {method: 'POST', headers: {...base, ...headers}, body: JSON.stringify(msg)});
  if (era === '2026-07-28') {
    const meta = {'io.modelcontextprotocol/protocolVersion': era,
                  'io.modelcontextprotocol/clientCapabilities': {}};
    const r = await post({jsonrpc: '2.0', id: 1, method: 'tools/list', params: {_meta: meta}},
                         {'mcp-protocol-version': era, 'mcp-method': 'tools/list'});
    return {status: r.status, tools: (await read(r)).result.tools.map(t => t.name)};
  }
  const init = await post({jsonrpc: '2.0', id: 1, method: 'initialize', params: {
    protocolVersion: era, capabilities: {}, clientInfo: {name: 'page', version: '1'}}}, {});
  const session = init.headers.get('mcp-session-id');
  await read(init);
  const headers = {'mcp-session-id': session, 'mcp-protocol-version': era};
  await post({jsonrpc: '2.0', method: 'notifications/initialized'}, headers);
  const r = await post({jsonrpc: '2.0', id: 2, method: 'tools/list'}, headers);
  return {status: r.status, session, tools: (await read(r)).result.tools.map(t => t.name)};
}"""

#: The same fetch, from a page whose origin is not allowed: how it fails.
REFUSED = """async (url) => {
  try {
    const r = await fetch(url, {method: 'POST', body: '{}', headers: {
      'content-type': 'application/json', 'accept': 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28'}});
    return 'answered ' + r.status;
  } catch (e) {
    return e.name;
  }
}"""


#: A page finding how to log in, as a browser client does: the 401's challenge (exposed),
#: the metadata document it names, then the call with a token.
DISCOVER = """async (url) => {
  const meta = {'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {}};
  const send = (token) => fetch(url, {method: 'POST', headers: {
      'content-type': 'application/json', 'accept': 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list',
      ...(token ? {'authorization': 'Bearer ' + token} : {})},
    body: JSON.stringify({jsonrpc: '2.0', id: 1, method: 'tools/list', params: {_meta: meta}})});
  const refused = await send(null);
  const challenge = refused.headers.get('www-authenticate') || '';
  const named = /resource_metadata="([^"]+)"/.exec(challenge)[1];
  // The document's path at the server's own address (the test's resource names no port).
  const document = await (await fetch(new URL(new URL(named).pathname, url))).json();
  const admitted = await send('t');
  return {refused: refused.status, resource: document.resource, status: admitted.status,
          tools: (await admitted.json()).result.tools.map(t => t.name)};
}"""


def test_a_page_on_an_allowed_origin_lists_the_tools_in_both_eras(tmp_path: Path) -> None:
    source = tmp_path / "cors_server.py"
    source.write_text(SERVER)
    with static_site({"/": ("text/html", PAGE)}) as port:
        origin = f"http://127.0.0.1:{port}"
        with (
            mcpkit_run_http(source, origin, tmp_path) as url,
            browser_page(f"{origin}/") as (page, _),
        ):
            assert page.evaluate("location.origin") == origin
            assert not url.startswith(origin)  # another origin: the fetch is cross-origin
            now = page.evaluate(LIST_TOOLS, [url, "2026-07-28"])
            assert now == {"status": 200, "tools": ["echo"]}
            then = page.evaluate(LIST_TOOLS, [url, "2025-11-25"])
            assert then["status"] == 200 and then["tools"] == ["echo"]
            assert then["session"], "Mcp-Session-Id was not exposed to the page"
            # The same page from an origin not allowed: the browser refuses it the answer.
            page.goto(f"http://localhost:{port}/")
            assert page.evaluate(REFUSED, url) == "TypeError"


def test_a_page_finds_how_to_log_in_and_calls_with_its_token() -> None:
    server = Server(
        "locked",
        auth=ResourceServer(StaticTokenVerifier({"t": []}), resource="http://127.0.0.1/mcp"),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Says the text back."""
        return text

    with static_site({"/": ("text/html", PAGE)}) as port:
        origin = f"http://127.0.0.1:{port}"
        app = server.http_app(allowed_origins=[origin], json_response=True)
        with running(app) as srv, browser_page(f"{origin}/") as (page, _):
            found = page.evaluate(DISCOVER, srv.url)
    assert found == {
        "refused": 401,
        "resource": "http://127.0.0.1/mcp",
        "status": 200,
        "tools": ["echo"],
    }
