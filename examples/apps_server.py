"""An MCP Apps server: the tool ``counter`` comes with an interactive view.

The view (``ui://counter/view``) shows ``count: N`` and a button ``increment``. Pressing it
makes the view ask its host to call the server's tool ``increment`` (``mcp.callTool``, from
the bridge ``app_view_script()`` inlines: JSON-RPC ``tools/call`` over ``postMessage``),
which only views may call (``visibility: ["app"]``), and show the new count. Try it in a browser::

    mcpkit inspect "mcpkit run examples/apps_server.py"

then call ``counter`` in the Tools panel. See docs/apps.md.
"""

from __future__ import annotations

from mcpkit import Server
from mcpkit.types import AppToolMeta, CallToolResult, TextContent, app_view_script

#: The view: plain HTML and a few lines of JavaScript. ``app_view_script()`` inlines mcpkit's
#: bridge (``window.mcp``), which speaks the extension's JSON-RPC over postMessage with the
#: host: the ``ui/initialize`` handshake, answers to ``ping`` and ``ui/resource-teardown``,
#: and the view's height (``ui/notifications/size-changed``), so the host fits the frame.
COUNTER_HTML = (
    """<!doctype html>
<html>
<head><meta charset="utf-8"><title>counter</title>
<style>body { font: 16px sans-serif; margin: 12px; } button { font-size: 16px; }</style>
"""
    + app_view_script("counter", "1.0.0")
    + """
</head>
<body>
<p id="count" data-testid="count">count: …</p>
<button id="increment" type="button" disabled>increment</button>
<p id="status" role="status"></p>
<script>
"use strict";
const button = document.getElementById("increment");
const note = document.getElementById("status");
function show(result) {
  const count = result && result.structuredContent && result.structuredContent.count;
  if (typeof count === "number") document.getElementById("count").textContent = "count: " + count;
}

mcp.onToolResult(show);  // the result of `counter`, which the view was shown for
mcp.ready.then(() => { button.disabled = false; });
button.addEventListener("click", async () => {
  try {
    show(await mcp.callTool("increment", {}));
    note.textContent = "";
  } catch (e) {
    note.textContent = "error: " + e.message;
  }
});
</script>
</body>
</html>
"""
)

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
