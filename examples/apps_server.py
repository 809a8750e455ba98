"""An MCP Apps server: the tool ``counter`` comes with an interactive view.

The view (``ui://counter/view``) shows ``count: N`` and a button ``increment``. Pressing it
makes the view ask its host to call the server's tool ``increment`` (JSON-RPC
``tools/call`` over ``postMessage``), which only views may call (``visibility: ["app"]``),
and show the new count. Try it in a browser::

    mcpkit inspect "mcpkit run examples/apps_server.py"

then call ``counter`` in the Tools panel. See docs/apps.md.
"""

from __future__ import annotations

from mcpkit import Server
from mcpkit.types import AppToolMeta, CallToolResult, TextContent

#: The view: plain HTML and JavaScript, no library; it speaks the extension's JSON-RPC
#: over postMessage with its host (the window that embeds it).
COUNTER_HTML = """<!doctype html>
<html>
<head><meta charset="utf-8"><title>counter</title>
<style>body { font: 16px sans-serif; margin: 12px; } button { font-size: 16px; }</style>
</head>
<body>
<p id="count" data-testid="count">count: …</p>
<button id="increment" type="button" disabled>increment</button>
<p id="status" role="status"></p>
<script>
"use strict";
let nextId = 1;
const pending = new Map();

// A request to the host; resolves with its result, rejects with its error.
function request(method, params) {
  const id = nextId++;
  window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
function notify(method, params) {
  window.parent.postMessage({ jsonrpc: "2.0", method, params }, "*");
}
function show(result) {
  const count = result && result.structuredContent && result.structuredContent.count;
  if (typeof count === "number") document.getElementById("count").textContent = "count: " + count;
}

window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;  // only the host speaks to us
  const msg = event.data;
  if (!msg || msg.jsonrpc !== "2.0") return;
  if (msg.id !== undefined && pending.has(msg.id) && !msg.method) {
    const { resolve, reject } = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) reject(new Error(msg.error.message)); else resolve(msg.result);
  } else if (msg.method === "ui/notifications/tool-result") {
    show(msg.params);
  } else if (msg.method === "ui/resource-teardown") {
    window.parent.postMessage({ jsonrpc: "2.0", id: msg.id, result: {} }, "*");
  } else if (msg.method === "ping") {
    window.parent.postMessage({ jsonrpc: "2.0", id: msg.id, result: {} }, "*");
  }
});

document.getElementById("increment").addEventListener("click", async () => {
  const status = document.getElementById("status");
  try {
    show(await request("tools/call", { name: "increment", arguments: {} }));
    status.textContent = "";
  } catch (e) {
    status.textContent = "error: " + e.message;
  }
});

new ResizeObserver(() => {
  const box = document.documentElement.getBoundingClientRect();
  notify("ui/notifications/size-changed", { width: Math.ceil(box.width), height: Math.ceil(box.height) });
}).observe(document.documentElement);

request("ui/initialize", {
  appInfo: { name: "counter", version: "1.0.0" },
  appCapabilities: {},
  protocolVersion: "2026-01-26",
}).then(() => {
  notify("ui/notifications/initialized", {});
  document.getElementById("increment").disabled = false;
});
</script>
</body>
</html>
"""

server = Server("apps-demo")
server.app_resource("ui://counter/view", COUNTER_HTML, prefers_border=True)

#: The count, kept by the server process.
state = {"count": 0}


def counted() -> CallToolResult:
    n = state["count"]
    # Text for the model and for hosts without apps; structured content for the view.
    return CallToolResult(
        content=[TextContent(text=f"count: {n}")], structured_content={"count": n}
    )


@server.tool(app="ui://counter/view")
def counter() -> CallToolResult:
    """Show the counter (an interactive view in hosts that render MCP Apps)."""
    return counted()


@server.tool(app=AppToolMeta(resource_uri="ui://counter/view", visibility=["app"]))
def increment() -> CallToolResult:
    """Add one to the count (called by the counter's view, not by the model)."""
    state["count"] += 1
    return counted()


if __name__ == "__main__":
    server.run()
