"""A server whose view is written only with ``mcpkit.types.app_view_script()`` (no
postMessage code of its own), for tests/inspect/test_view_script.py.

``tall(rows)``: its view shows the tool's arguments (``#input``, from ``mcp.onToolInput``),
the result's ``rows`` (``#rows``, from ``mcp.onToolResult``) and the host's name for the
tool (``#tool``, ``mcp.hostContext``); it lays out ``rows`` lines of 40 px (taller than a
frame's 150 px); its button ``echo`` calls the app-only ``echo`` through ``mcp.callTool``
and shows the answer (``#echoed``). On teardown it calls ``echo("bye")`` first.
``echoed()``: what ``echo`` was called with, in order.
"""

from __future__ import annotations

from typing import Any

from mcpkit import Server
from mcpkit.types import AppToolMeta, app_view_script

server = Server("view-script")

TALL = (
    """<!doctype html><html><head><meta charset="utf-8">
<style>body { margin: 0; font: 14px sans-serif; } .row { height: 40px; }</style>"""
    + app_view_script("tall", "0.1.0")
    + """</head><body>
<pre id="input"></pre><pre id="tool"></pre><pre id="rows"></pre><pre id="echoed"></pre>
<button id="echo" type="button">echo</button><div id="lines"></div>
<script>
mcp.onToolInput((args) => { document.getElementById("input").textContent = JSON.stringify(args); });
mcp.onToolResult((result) => {
  const rows = result.structuredContent.rows;
  document.getElementById("rows").textContent = String(rows);
  document.getElementById("tool").textContent = mcp.hostContext.toolInfo.tool.name;
  for (let i = 0; i < rows; i++) {
    const line = document.createElement("div");
    line.className = "row";
    line.textContent = "line " + i;
    document.getElementById("lines").append(line);
  }
  document.body.dataset.ready = "1";
});
document.getElementById("echo").addEventListener("click", async () => {
  const answer = await mcp.callTool("echo", { text: "from the view" });
  document.getElementById("echoed").textContent = answer.content[0].text;
});
mcp.onTeardown(() => mcp.callTool("echo", { text: "bye" }));
</script></body></html>"""
)

ECHOED: list[str] = []

server.app_resource("ui://script/tall", TALL, name="tall")


@server.tool(app=AppToolMeta(resource_uri="ui://script/tall"))
def tall(rows: int = 10) -> dict[str, Any]:
    """A view of ``rows`` lines."""
    return {"rows": rows}


@server.tool(app=AppToolMeta(resource_uri="ui://script/tall", visibility=["app"]))
def echo(text: str) -> str:
    """Called by the view: answers ``text``."""
    ECHOED.append(text)
    return f"echo: {text}"


@server.tool()
def echoed() -> dict[str, Any]:
    """What ``echo`` was called with, in order."""
    return {"echoed": list(ECHOED)}


if __name__ == "__main__":
    server.run()
