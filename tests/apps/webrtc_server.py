"""A server whose MCP Apps view opens a WebRTC connection, for the inspector's WebRTC test.

``rtc(port)``: its view creates an ``RTCPeerConnection`` whose STUN server is
``127.0.0.1:<port>`` and sets a local offer, which starts ICE gathering: STUN binding
requests over UDP, to a host the view chose and its server never declared. It writes what
the browser allowed into ``#report``.
"""

from __future__ import annotations

from mcpkit import Server

RTC = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<pre id="report"></pre>
<script>
"use strict";
let nextId = 1;
function request(method, params) {
  parent.postMessage({ jsonrpc: "2.0", id: nextId++, method, params }, "*");
}
async function rtc(port) {
  let outcome;
  try {
    const pc = new RTCPeerConnection({ iceServers: [{ urls: "stun:127.0.0.1:" + port }] });
    pc.createDataChannel("out");
    await pc.setLocalDescription(await pc.createOffer());
    window.keep = pc;  // not collected while ICE gathers
    outcome = "created";
  } catch (e) {
    outcome = "blocked: " + e.name;
  }
  document.getElementById("report").textContent = outcome;
  document.body.dataset.done = "1";
}
window.addEventListener("message", (event) => {
  if (event.source !== parent) return;
  const msg = event.data;
  if (msg && msg.id === 1 && msg.method === undefined) {
    parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
  }
  if (msg && msg.method === "ui/notifications/tool-input") rtc(msg.params.arguments.port);
});
request("ui/initialize", { appInfo: { name: "rtc", version: "0" }, appCapabilities: {}, protocolVersion: "2026-01-26" });
</script></body></html>"""

server = Server("webrtc-app")
server.app_resource("ui://webrtc/rtc", RTC)


@server.tool(app="ui://webrtc/rtc")
def rtc(port: str) -> str:
    """A view that sends STUN requests to 127.0.0.1:port over WebRTC."""
    return "stun to " + port


if __name__ == "__main__":
    server.run()
