"""A server whose view is written with the official ext-apps ``App`` class (its bundle,
``$EXT_APPS_BUNDLE``: ``dist/src/app-with-deps.js`` of @modelcontextprotocol/ext-apps,
inlined), for test_apps_host.py: the view connects through the inspector's sandbox proxy,
shows its host context's ``toolInfo.id`` (``#tool-id``) and the resources its host lists
for it (``#resources``: ``listServerResources``, JSON), asks it to download a text file
(``ui/download-file``, ``notes.txt``; its answer in ``#download``), and offers the host a tool,
``greet(name)``, through ``onlisttools``/``oncalltool``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from mcpkit import Server
from mcpkit.types import AppToolMeta

server = Server("official-app")


def _bundle() -> str:
    """The ESM bundle as a plain module script: its exports become ``window.ExtApps``."""
    js = Path(os.environ["EXT_APPS_BUNDLE"]).read_text(encoding="utf-8")
    found = re.search(r"export\s*\{([^}]*)\};?\s*$", js)
    assert found is not None, "no export list at the end of the bundle"
    pairs = [p.strip().split(" as ") for p in found.group(1).split(",") if p.strip()]
    members = ",".join(f"{p[-1]}:{p[0]}" for p in pairs)
    return js[: found.start()] + f"window.ExtApps={{{members}}};"


VIEW = (
    """<!doctype html><html><head><meta charset="utf-8"></head><body>
<pre id="tool-id"></pre><pre id="state">connecting</pre><pre id="resources"></pre><pre id="download"></pre>
<script type="module">"""
    + _bundle()
    + """
const { App } = window.ExtApps;
const app = new App({ name: "official", version: "0" }, { tools: {} });
app.onlisttools = async () => ({ tools: [{ name: "greet", description: "Greets.",
  inputSchema: { type: "object", properties: { name: { type: "string" } } } }] });
app.oncalltool = async (params) => ({ content: [{ type: "text", text: "Hello, " + params.arguments.name + "!" }] });
app.ontoolresult = () => { document.getElementById("state").textContent = "result"; };
await app.connect();
const info = app.getHostContext().toolInfo;
document.getElementById("tool-id").textContent = String(info && info.id);
const listed = await app.listServerResources().then((r) => r.resources.map((x) => x.uri), (e) => "error: " + e.message);
document.getElementById("resources").textContent = JSON.stringify(listed);
const file = { uri: "file:///notes.txt", mimeType: "text/plain", text: "hello, download" };
const downloaded = await app.downloadFile({ contents: [{ type: "resource", resource: file }] })
  .then((r) => JSON.stringify(r), (e) => "error: " + e.message);
document.getElementById("download").textContent = downloaded;
</script></body></html>"""
)

server.app_resource("ui://official/view", VIEW, name="official")


@server.tool(app=AppToolMeta(resource_uri="ui://official/view"))
def official() -> str:
    """A view written with the official App class."""
    return "official"


if __name__ == "__main__":
    server.run()
