"""A browser host on another origin reaches ``mcpkit run ... --allowed-origin ORIGIN``
(issue 44): headless Chromium, a page served from one origin (a tiny static server), the
MCP server a real process on another port. The page's own ``fetch`` lists the tools, in
both eras (the 2025 session read from the exposed ``Mcp-Session-Id``); the same page from
an origin not allowed is refused by the browser. Before, the preflight was a 405 and every
fetch failed.
"""

from __future__ import annotations

import http.server
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests._served import Served
from tests.http._http_helpers import running
from tests.inspect._browser_harness import browser_page, mcpkit_command

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


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def static_site() -> Iterator[int]:
    """A tiny static server on 127.0.0.1 (its port): where the page comes from."""
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield site.server_address[1]
    finally:
        site.shutdown()
        site.server_close()
        thread.join(10)


@contextmanager
def mcp_server(tmp_path: Path, origin: str) -> Iterator[str]:
    """``mcpkit run SERVER -t http --port 0 --allowed-origin ORIGIN``: its URL."""
    source = tmp_path / "cors_server.py"
    source.write_text(SERVER)
    argv = [*mcpkit_command(), "run", str(source), "-t", "http", "--port", "0"]
    served = Served.start([*argv, "--allowed-origin", origin], cwd=str(tmp_path))
    try:
        yield served.url(timeout=60)
    finally:
        served.proc.send_signal(signal.SIGTERM)
        try:
            served.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            served.proc.kill()
            served.proc.wait(timeout=15)
        served.close()


def test_a_page_on_an_allowed_origin_lists_the_tools_in_both_eras(tmp_path: Path) -> None:
    with static_site() as port:
        origin = f"http://127.0.0.1:{port}"
        with mcp_server(tmp_path, origin) as url, browser_page(f"{origin}/") as (page, _):
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

    with static_site() as port:
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
