"""The official ext-apps ``AppBridge`` as a browser host on another origin renders
``examples/apps_server.py``'s ``counter`` view against ``mcpkit run ... --allowed-origin``.

Three origins, in headless Chromium: the host page (``http://127.0.0.1:A``: the official
TypeScript client, ``@modelcontextprotocol/client``, and ext-apps' ``AppBridge``, bundled
once with the ``vite`` the official inspector's install brings), the view's frame
(``http://localhost:B``, a page that writes the view's HTML into itself) and the MCP server
(a real ``mcpkit run`` process, ``--allowed-origin`` naming the host's origin). The host
lists the tools, calls ``counter``, reads its ``ui://`` view and hands it to the frame;
``AppBridge`` speaks the extension with the view across the two origins and forwards its
``tools/call`` to the server, so pressing ``increment`` in the view shows ``count: 1``.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from tests.apps.test_official_inspector import PREFIX, _cli
from tests.conftest import BACKEND
from tests.inspect._browser_harness import ROOT, browser_page, mcpkit_run_http, static_site

pytestmark = [
    pytest.mark.skipif(BACKEND != "asyncio", reason="browser and server are processes"),
    pytest.mark.timeout(180),
]

ERAS = ["2025-11-25", "2026-07-28"]
#: What the bundle exports, as ``window.McpHost``.
ENTRY = """export { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
"""
VITE_CONFIG = """export default {
  logLevel: "warn",
  build: {
    lib: {entry: process.env.ENTRY, name: "McpHost", formats: ["iife"], fileName: () => "host.js"},
    outDir: process.env.OUT, emptyOutDir: true, minify: false,
  },
};
"""

#: The view's frame: tells its parent it is there, then becomes the HTML it is sent.
FRAME = b"""<!doctype html><meta charset="utf-8"><title>frame</title><script>
addEventListener("message", (e) => {
  if (e.source !== parent || !e.data || typeof e.data.html !== "string") return;
  document.open(); document.write(e.data.html); document.close();
}, {once: true});
parent.postMessage({frameReady: true}, "*");
</script>"""

#: The host page's script: the official client and AppBridge, nothing of mcpkit's.
HOST = """<!doctype html><meta charset="utf-8"><title>host</title>
<script src="/host.js"></script><body><script>
window.host = async (server, frameUrl, era) => {
  const {Client, StreamableHTTPClientTransport, AppBridge, PostMessageTransport} = McpHost;
  const info = {name: "cross-origin-host", version: "1.0.0"};
  const client = new Client(info, {
    capabilities: {extensions: {
      "io.modelcontextprotocol/ui": {mimeTypes: ["text/html;profile=mcp-app"]}}},
    // The 2025 handshake by default; the 2026-07-28 era when pinned.
    ...(era === "2026-07-28" ? {versionNegotiation: {mode: {pin: era}}} : {}),
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(server)));
  const {tools} = await client.listTools();
  const tool = tools.find((t) => t.name === "counter");
  const uri = tool._meta.ui.resourceUri;
  const {contents} = await client.readResource({uri});
  const result = await client.callTool({name: "counter", arguments: {}});
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
  frame.setAttribute("data-testid", "view-" + era);
  const ready = new Promise((resolve) => addEventListener("message", function seen(e) {
    if (e.source === frame.contentWindow && e.data && e.data.frameReady) {
      removeEventListener("message", seen); resolve();
    }
  }));
  frame.src = frameUrl + "?" + era;
  document.body.appendChild(frame);
  await ready;
  const bridge = new AppBridge(client, info, {serverTools: {}, logging: {}},
                               {hostContext: {toolInfo: {tool}}});
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.contentWindow.postMessage({html: contents[0].text}, new URL(frameUrl).origin);
  await initialized;
  await bridge.sendToolInput({arguments: {}});
  await bridge.sendToolResult(result);
  return {version: client.getNegotiatedProtocolVersion(),
          tools: tools.map((t) => t.name).sort(), uri, mime: contents[0].mimeType,
          count: result.structuredContent.count};
};
</script>"""


def _bundle() -> bytes:
    """The host's script: the official client and AppBridge (built once, kept; built
    apart by each worker and moved into place whole, so workers never read half of it)."""
    _cli()  # the official inspector's install: ext-apps, the client, vite
    built = PREFIX / "mcpkit-appbridge-host.js"
    if not built.exists():
        work = PREFIX / f"mcpkit-appbridge-host-{os.getpid()}"
        work.mkdir(exist_ok=True)
        entry = PREFIX / f"mcpkit-appbridge-host-{os.getpid()}.mjs"  # imports resolve there
        entry.write_text(ENTRY)
        config = work / "vite.config.mjs"
        config.write_text(VITE_CONFIG)
        p = subprocess.run(
            [str(PREFIX / "node_modules" / ".bin" / "vite"), "build", "--config", str(config)],
            env={**os.environ, "ENTRY": str(entry), "OUT": str(work / "out")},
            cwd=PREFIX,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode == 0 and (work / "out" / "host.js").exists(), p.stderr[-2000:]
        os.replace(work / "out" / "host.js", built)
        entry.unlink()
        shutil.rmtree(work)
    return built.read_bytes()


def test_appbridge_on_another_origin_renders_the_counter_and_increments_in_both_eras() -> None:
    from playwright.sync_api import expect

    host_pages = {
        "/": ("text/html", HOST.encode()),
        "/host.js": ("text/javascript", _bundle()),
    }
    frame_pages = {f"/frame?{era}": ("text/html", FRAME) for era in ERAS}
    with static_site(host_pages) as host_port, static_site(frame_pages) as frame_port:
        origin = f"http://127.0.0.1:{host_port}"
        frame_origin = f"http://localhost:{frame_port}"
        apps = ROOT / "examples" / "apps_server.py"
        with mcpkit_run_http(apps, origin, ROOT) as url, browser_page(f"{origin}/") as (page, _):
            count = 0  # one server: the count goes on from one era to the next
            for era in ERAS:
                shown = page.evaluate(
                    "([s, f, e]) => window.host(s, f, e)", [url, f"{frame_origin}/frame", era]
                )
                assert shown == {
                    "version": era,
                    "tools": ["counter", "increment"],  # a host: the app-only tool listed
                    "uri": "ui://counter/view",
                    "mime": "text/html;profile=mcp-app",
                    "count": count,
                }
                view = page.frame_locator(f'[data-testid="view-{era}"]')
                expect(view.locator("#count")).to_have_text(f"count: {count}")
                # The view runs on the frame's origin: neither the host's nor the server's.
                assert view.locator("body").evaluate("() => location.origin") == frame_origin
                for _ in range(2):
                    view.get_by_role("button", name="increment").click()
                    count += 1
                    expect(view.locator("#count")).to_have_text(f"count: {count}")
