"""A server whose MCP Apps views report what their host did, for the inspector's spec-host
tests (test_apps_host.py).

* ``viewer(label)``: its view shows ``hostContext.toolInfo.id`` (``#tool-id``), the
  ``tools/call`` id the server saw (``#result-id``, from the result), the host's
  capabilities (``#caps``, JSON), ``hostContext.theme`` and ``.styles`` (``#theme``,
  ``#styles``), the params of each ``ui/notifications/host-context-changed`` (``#changed``,
  a JSON list) and its own frame's origin (``#origin``); it asks for
  321 px of width; on ``ui/resource-teardown`` it first calls the app-only ``torn(label)``
  and then answers.
* ``teardowns()``: the labels ``torn`` was called with, in order.
* ``reach()``: its view declares ``$HOST_TEST_ORIGIN`` as a connect and resource domain,
  fetches from it and loads an image from it, and reports (``#report``, JSON) with the CSP
  its host says it approved.
* ``offers()``: its view offers the host a tool, ``shout(text)`` (``appCapabilities.tools``;
  ``tools/list`` and ``tools/call`` answered by the view), which answers ``text`` in capitals.
"""

from __future__ import annotations

import os
from typing import Any

from mcpkit import Context, Server
from mcpkit.types import AppCsp, AppToolMeta

server = Server("apps-host")

BRIDGE = """
"use strict";
let nextId = 1;
const pending = new Map();
let onHost = () => {};
function request(method, params) {
  const id = nextId++;
  parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
  return new Promise((ok, fail) => pending.set(id, { ok, fail }));
}
function notify(method, params) { parent.postMessage({ jsonrpc: "2.0", method, params }, "*"); }
window.addEventListener("message", (event) => {
  if (event.source !== parent) return;
  const msg = event.data;
  if (msg && msg.method === undefined && pending.has(msg.id)) {
    const { ok, fail } = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) fail(new Error(msg.error.message)); else ok(msg.result);
    return;
  }
  onHost(msg);
});
const put = (id, value) => { document.getElementById(id).textContent = typeof value === "string" ? value : JSON.stringify(value); };
"""

VIEWER = (
    """<!doctype html><html><head><meta charset="utf-8"></head>
<body style="margin:0"><pre id="tool-id"></pre><pre id="result-id"></pre><pre id="caps"></pre>
<pre id="origin"></pre><pre id="label"></pre><pre id="theme"></pre><pre id="styles"></pre>
<pre id="changed"></pre>
<script>"""
    + BRIDGE
    + """
let label = "?";
const changed = [];
put("origin", String(location.origin) + " in " + (location.ancestorOrigins ? Array.from(location.ancestorOrigins).join(" ") : ""));
onHost = async (msg) => {
  if (msg.method === "ui/notifications/tool-input") { label = msg.params.arguments.label || "?"; put("label", label); }
  else if (msg.method === "ui/notifications/tool-result") {
    put("result-id", msg.params.structuredContent.requestId);
    document.body.dataset.ready = "1";
  } else if (msg.method === "ui/notifications/host-context-changed") {
    changed.push(msg.params);
    put("changed", changed);
  } else if (msg.method === "ui/resource-teardown") {
    try { await request("tools/call", { name: "torn", arguments: { label } }); } catch (e) {}
    parent.postMessage({ jsonrpc: "2.0", id: msg.id, result: {} }, "*");
  }
};
(async () => {
  const init = await request("ui/initialize", { appInfo: { name: "viewer", version: "0" }, appCapabilities: {}, protocolVersion: "2026-01-26" });
  put("tool-id", init.hostContext.toolInfo.id === undefined ? "none" : init.hostContext.toolInfo.id);
  put("caps", init.hostCapabilities);
  put("theme", init.hostContext.theme);
  put("styles", init.hostContext.styles);
  notify("ui/notifications/initialized", {});
  notify("ui/notifications/size-changed", { width: 321, height: 222 });
})();
</script></body></html>"""
)

ORIGIN = os.environ.get("HOST_TEST_ORIGIN", "http://127.0.0.1:9")

REACH = (
    """<!doctype html><html><head><meta charset="utf-8"></head><body><pre id="report"></pre>
<script>"""
    + BRIDGE
    + """
const ORIGIN = """
    + repr(ORIGIN)
    + """;
const report = {};
function image(url) {
  return new Promise((ok) => { const img = new Image(); img.onload = () => ok("loaded"); img.onerror = () => ok("failed"); img.src = url; });
}
(async () => {
  const init = await request("ui/initialize", { appInfo: { name: "reach", version: "0" }, appCapabilities: {}, protocolVersion: "2026-01-26" });
  report.approved = init.hostCapabilities.sandbox.csp;
  notify("ui/notifications/initialized", {});
  try { const r = await fetch(ORIGIN + "/ping"); report.fetch = "status " + r.status; } catch (e) { report.fetch = "failed"; }
  report.image = await image(ORIGIN + "/pixel.gif");
  put("report", report);
  document.body.dataset.done = "1";
})();
</script></body></html>"""
)

OFFERS = (
    """<!doctype html><html><head><meta charset="utf-8"></head><body><p>offering</p>
<script>"""
    + BRIDGE
    + """
const SHOUT = { name: "shout", description: "Answers its text in capitals.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } };
onHost = (msg) => {
  const answer = (result) => parent.postMessage({ jsonrpc: "2.0", id: msg.id, result }, "*");
  if (msg.method === "tools/list") answer({ tools: [SHOUT] });
  else if (msg.method === "tools/call" && msg.params.name === "shout")
    answer({ content: [{ type: "text", text: String(msg.params.arguments.text).toUpperCase() }] });
  else if (msg.method === "tools/call")
    parent.postMessage({ jsonrpc: "2.0", id: msg.id, error: { code: -32602, message: "Unknown tool" } }, "*");
  else if (msg.method === "ui/resource-teardown") answer({});
};
(async () => {
  await request("ui/initialize", { appInfo: { name: "offers", version: "0" }, appCapabilities: { tools: {} }, protocolVersion: "2026-01-26" });
  notify("ui/notifications/initialized", {});
})();
</script></body></html>"""
)

TORN: list[str] = []


server.app_resource("ui://host/viewer", VIEWER, name="viewer")
server.app_resource(
    "ui://host/reach",
    REACH,
    name="reach",
    csp=AppCsp(connect_domains=[ORIGIN], resource_domains=[ORIGIN]),
)
server.app_resource("ui://host/offers", OFFERS, name="offers")


@server.tool(app=AppToolMeta(resource_uri="ui://host/viewer"))
def viewer(ctx: Context, label: str = "") -> dict[str, Any]:
    """A view reporting its host."""
    return {"requestId": ctx.request_id, "label": label}


@server.tool(app=AppToolMeta(resource_uri="ui://host/viewer", visibility=["app"]))
def torn(label: str) -> str:
    """Called by the view while it is torn down."""
    TORN.append(label)
    return "noted"


@server.tool()
def teardowns() -> dict[str, Any]:
    """The labels of the views torn down, in order."""
    return {"torn": list(TORN)}


@server.tool(app=AppToolMeta(resource_uri="ui://host/reach"))
def reach() -> str:
    """A view reaching its declared origin."""
    return "reaching"


@server.tool(app=AppToolMeta(resource_uri="ui://host/offers"))
def offers() -> str:
    """A view offering the host a tool."""
    return "offering"


if __name__ == "__main__":
    server.run()
