"""``app_view_script()``: the MCP Apps view side of the extension's JSON-RPC, as a
``<script>`` to inline into a view's HTML.

A view runs in a sandboxed frame that may load nothing its resource's CSP does not name (no
script from the server, by default), so the bridge ships as text the server puts into the
HTML it serves. It speaks the extension's messages (SEP-1865, 2026-01-26) with
``window.parent``: the ``ui/initialize`` handshake, answers matched to requests, ``ping``
and ``ui/resource-teardown`` answered, the tool's input and result handed to callbacks, and
the document's height reported (``ui/notifications/size-changed``) whenever it changes.
"""

from __future__ import annotations

import json

__all__ = ["app_view_script"]

#: The protocol version of the extension a view asks for in ``ui/initialize``.
_APPS_PROTOCOL = "2026-01-26"

# The bridge. Kept plain ES2017 (no modules, no build): hosts render one inline document.
# __APP_INFO__ is replaced by the JSON of appInfo and appCapabilities.
_BRIDGE = """<script>
(() => {
"use strict";
const [appInfo, appCapabilities] = __APP_INFO__;
const host = window.parent;
const pending = new Map();
const handlers = { input: [], result: [], teardown: [], context: [], cancelled: [] };
const last = {};  // the latest tool input and result, for callbacks added after them
let nextId = 1;
let initialized = false;

function post(message) { host.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*"); }
function request(method, params) {
  const id = nextId++;
  post({ id, method, params: params || {} });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
function notify(method, params) { post({ method, params: params || {} }); }
function fire(kind, value) {
  for (const cb of handlers[kind]) {
    try { cb(value); } catch (e) { console.error(e); }
  }
}
function on(kind, cb) {
  handlers[kind].push(cb);
  if (kind in last) cb(last[kind]);
}

// The height of the content, not of the frame: the host grows the frame to it. The width
// is left to the host (a view that reported its width would pin the frame at it).
let reported = -1;
function reportSize() {
  if (!initialized) return;
  const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (height === reported) return;
  reported = height;
  notify("ui/notifications/size-changed", { height });
}

async function answer(msg) {
  try {
    if (msg.method === "ping") { post({ id: msg.id, result: {} }); return; }
    if (msg.method === "ui/resource-teardown") {
      // Every teardown callback finishes (a last tool call, say) before the host is told.
      await Promise.all(handlers.teardown.map((cb) => cb(msg.params || {})));
      post({ id: msg.id, result: {} });
      return;
    }
    post({ id: msg.id, error: { code: -32601, message: "Method not found: " + msg.method } });
  } catch (e) {
    post({ id: msg.id, error: { code: -32603, message: String(e && e.message || e) } });
  }
}

window.addEventListener("message", (event) => {
  if (event.source !== host) return;  // only the host speaks to the view
  const msg = event.data;
  if (!msg || msg.jsonrpc !== "2.0") return;
  if (msg.method === undefined) {
    const waiting = pending.get(msg.id);
    if (!waiting) return;
    pending.delete(msg.id);
    if (msg.error) {
      const err = new Error(msg.error.message);
      err.code = msg.error.code;
      err.data = msg.error.data;
      waiting.reject(err);
    } else waiting.resolve(msg.result);
  } else if (msg.id !== undefined) {
    answer(msg);
  } else if (msg.method === "ui/notifications/tool-input") {
    last.input = (msg.params && msg.params.arguments) || {};
    fire("input", last.input);
  } else if (msg.method === "ui/notifications/tool-result") {
    last.result = msg.params;
    fire("result", msg.params);
  } else if (msg.method === "ui/notifications/tool-cancelled") {
    fire("cancelled", msg.params || {});
  } else if (msg.method === "ui/notifications/host-context-changed") {
    Object.assign(mcp.hostContext, msg.params || {});
    fire("context", mcp.hostContext);
  }
});

const ready = request("ui/initialize", {
  appInfo, appCapabilities, protocolVersion: "__PROTOCOL__",
}).then((result) => {
  mcp.hostInfo = result.hostInfo || {};
  mcp.hostCapabilities = result.hostCapabilities || {};
  Object.assign(mcp.hostContext, result.hostContext || {});
  initialized = true;
  notify("ui/notifications/initialized", {});
  const observer = new ResizeObserver(reportSize);
  observer.observe(document.documentElement);
  if (document.body) observer.observe(document.body);
  reportSize();
  return result;
});

const mcp = {
  ready,
  hostContext: {},
  hostCapabilities: {},
  hostInfo: {},
  request: (method, params) => ready.then(() => request(method, params)),
  notify: (method, params) => ready.then(() => notify(method, params)),
  callTool: (name, args) => mcp.request("tools/call", { name, arguments: args || {} }),
  readResource: (uri) => mcp.request("resources/read", { uri }),
  openLink: (url) => mcp.request("ui/open-link", { url }),
  sendMessage: (text) => mcp.request("ui/message", { role: "user", content: [{ type: "text", text }] }),
  log: (level, data) => mcp.notify("notifications/message", { level, data }),
  onToolInput: (cb) => on("input", cb),
  onToolResult: (cb) => on("result", cb),
  onToolCancelled: (cb) => on("cancelled", cb),
  onHostContextChanged: (cb) => on("context", cb),
  onTeardown: (cb) => on("teardown", cb),
};
window.mcp = mcp;
})();
</script>"""


def app_view_script(name: str = "mcp-app", version: str = "1.0.0") -> str:
    """A ``<script>`` element to put into an MCP Apps view's HTML (in its ``<head>`` or
    before the view's own script): it defines ``window.mcp`` and speaks the extension's
    JSON-RPC with the host for the view.

    It sends ``ui/initialize`` (``appInfo`` is ``name`` and ``version``) and then
    ``ui/notifications/initialized``; reports the document's height
    (``ui/notifications/size-changed``) whenever it changes, so the host sizes the frame to
    the content; answers ``ping`` and ``ui/resource-teardown``. The view then uses:

    * ``mcp.callTool(name, args)``, ``mcp.readResource(uri)``, ``mcp.openLink(url)``,
      ``mcp.sendMessage(text)``, ``mcp.request(method, params)``: promises of the result
      (rejected with an ``Error`` carrying ``code`` on an error answer), sent once the
      handshake is done; ``mcp.log(level, data)`` and ``mcp.notify(method, params)``;
    * ``mcp.onToolInput(cb)`` (the arguments), ``mcp.onToolResult(cb)`` (the
      ``CallToolResult``), ``mcp.onToolCancelled(cb)``, ``mcp.onHostContextChanged(cb)``:
      a callback added after the input or result came is called with it at once;
      ``mcp.onTeardown(cb)``: the host is answered once every callback (which may return a
      promise) is done;
    * ``mcp.ready`` (the ``ui/initialize`` result), ``mcp.hostContext``,
      ``mcp.hostCapabilities``, ``mcp.hostInfo``.

    Example::

        html = "<p id=n></p>" + app_view_script("counter") + "<script>mcp.onToolResult(...)</script>"
    """
    info = json.dumps([{"name": name, "version": version}, {}])
    # The JSON goes into a <script>: "</" must not close it early.
    return _BRIDGE.replace("__APP_INFO__", info.replace("</", "<\\/")).replace(
        "__PROTOCOL__", _APPS_PROTOCOL
    )
