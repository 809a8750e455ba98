"use strict";
// The inspector as an MCP Apps host (io.modelcontextprotocol/ui, 2026-01-26): after a call
// of a tool with a view, the view is rendered under the result and spoken to by JSON-RPC
// over postMessage. app.js installs it with its helpers: mcpkitApps({api, el, ...}).
//
// Containment: the iframe is sandboxed with allow-scripts only (an opaque origin: no access
// to this page, its storage or its token; no top navigation, popups or forms) and its
// srcdoc opens with the CSP its server declared, so it fetches from no other origin (CSP does
// not govern WebRTC: a view can still send UDP anywhere, docs/apps.md). Messages are
// taken only from the view's own window, rate limited, size checked, and its tool calls go
// through the same API as the page's own calls, for tools whose visibility includes "app".
const mcpkitApps = (function () {
  const PROTOCOL = "2026-01-26";
  const RATE_WINDOW_MS = 1000;
  const RATE_MAX = 40; // messages a view may send per window; more are dropped
  const MAX_IN_FLIGHT = 4; // tools/call and resources/read of one view at once
  const MAX_MESSAGE_CHARS = 1 << 20;
  const TEARDOWN_MS = 2000;
  const MIN_HEIGHT = 40;
  const MAX_HEIGHT = 1600;
  const STYLE = ".app-view{border:1px solid #c9d1e0;border-radius:4px;margin:.6em 0;background:#fff}" +
    ".app-view.borderless{border-color:transparent}" +
    ".app-view header{display:flex;gap:.6em;align-items:center;padding:.3em .6em;background:#f3f5f9;font-size:12px}" +
    ".app-view iframe{display:block;width:100%;border:0;height:150px}" +
    ".app-view .app-notes:empty{display:none}.app-view .app-notes{padding:.3em .6em;font-size:12px;border-top:1px solid #e3e7ee}";

  function install(h) {
    document.head.append(h.el("style", { text: STYLE }));
    const views = new Set();
    let seq = 0;

    window.addEventListener("message", (event) => {
      for (const view of views) {
        if (event.source === view.frame.contentWindow) { view.receive(event.data); return; }
      }
    });

    // The tool's _meta.ui: {resourceUri, visibility} (the flat ui/resourceUri read too).
    function toolUi(tool) {
      const meta = tool && tool._meta;
      if (!meta || typeof meta !== "object") return null;
      const ui = meta.ui && typeof meta.ui === "object" ? meta.ui : {};
      const uri = typeof ui.resourceUri === "string" ? ui.resourceUri : meta["ui/resourceUri"];
      if (typeof uri !== "string" && !Array.isArray(ui.visibility)) return null;
      return { resourceUri: typeof uri === "string" ? uri : null, visibility: Array.isArray(ui.visibility) ? ui.visibility : ["model", "app"] };
    }

    function webUrl(url) {
      if (typeof url !== "string") return null;
      let parsed;
      try { parsed = new URL(url); } catch (e) { return null; }
      return (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.hostname ? parsed.href : null;
    }

    function attr(text) {
      return String(text).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
    }

    // The view's document with its CSP first: before any of its own markup can run.
    function withCsp(html, csp) {
      const meta = '<meta http-equiv="Content-Security-Policy" content="' + attr(csp) + '">';
      const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
      return doctype ? doctype[0] + meta + html.slice(doctype[0].length) : meta + html;
    }

    class View {
      constructor(tool, args, result, app) {
        this.id = ++seq;
        this.tool = tool;
        this.args = args;
        this.result = result;
        this.app = app;
        this.initialized = false;
        this.closed = false;
        this.inFlight = 0;
        this.windowStart = 0;
        this.windowCount = 0;
        this.dropped = 0;
        this.nextId = 1;
        this.waiting = new Map();
        this.modelContext = null;
        const meta = app.meta || {};
        this.frame = h.el("iframe", {
          sandbox: "allow-scripts", referrerpolicy: "no-referrer", allow: "",
          title: "MCP App " + app.uri, "data-testid": "app-frame", "data-uri": app.uri,
        });
        this.frame.srcdoc = withCsp(app.html, app.csp);
        this.status = h.el("span", { class: "hint", "data-testid": "app-status", text: "loading" });
        this.notes = h.el("div", { class: "app-notes", "data-testid": "app-notes" });
        const close = h.el("button", { type: "button", "data-testid": "app-close", text: "Close app", onclick: () => this.close("closed in the inspector") });
        this.node = h.el("div", { class: "app-view" + (meta.prefersBorder === false ? " borderless" : ""), "data-testid": "app-view", "data-uri": app.uri },
          h.el("header", {}, h.el("strong", { text: "App" }), h.el("code", { text: app.uri }), this.status, close),
          this.frame, this.notes);
        h.logLine("app " + app.uri + " rendered under CSP: " + app.csp, "app");
      }

      post(message) {
        if (!this.closed && this.frame.contentWindow) this.frame.contentWindow.postMessage(message, "*");
      }
      reply(id, result) { this.post({ jsonrpc: "2.0", id, result }); }
      fail(id, code, message) { this.post({ jsonrpc: "2.0", id, error: { code, message } }); }
      notify(method, params) { this.post({ jsonrpc: "2.0", method, params }); }
      note(...children) { h.add(this.notes, h.el("div", { "data-testid": "app-note" }, ...children)); }

      // Whether one more message fits this window's budget (a flood is dropped, counted).
      admit() {
        const now = performance.now();
        if (now - this.windowStart > RATE_WINDOW_MS) { this.windowStart = now; this.windowCount = 0; }
        if (++this.windowCount <= RATE_MAX) return true;
        if (this.dropped++ % 500 === 0) this.status.textContent = "flooding: " + this.dropped + " messages ignored";
        this.status.dataset.dropped = String(this.dropped);
        return false;
      }

      receive(msg) {
        if (this.closed || !this.admit()) return;
        if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
        let size = 0;
        try { size = JSON.stringify(msg).length; } catch (e) { return; }
        if (size > MAX_MESSAGE_CHARS) {
          if (msg.id !== undefined && typeof msg.method === "string") this.fail(msg.id, -32600, "message too large");
          return;
        }
        if (typeof msg.method !== "string") {
          const waiter = this.waiting.get(msg.id);
          if (waiter) { this.waiting.delete(msg.id); waiter(msg); }
          return;
        }
        if (msg.id === undefined || msg.id === null) return this.notification(msg.method, msg.params || {});
        if (typeof msg.id !== "string" && typeof msg.id !== "number") return;
        this.request(msg.id, msg.method, msg.params || {}).catch((e) => this.fail(msg.id, -32603, String(e && e.message)));
      }

      hostContext() {
        return {
          toolInfo: { id: "inspector-" + this.id, tool: this.tool },
          theme: "light",
          displayMode: "inline",
          availableDisplayModes: ["inline"],
          // No containerDimensions: the view sizes itself (size-changed, up to MAX_HEIGHT);
          // the schema's intersection of its branches admits no other value than {}.
          locale: navigator.language || "en-US",
          timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC",
          userAgent: "mcpkit-inspector",
          platform: "web",
          deviceCapabilities: { touch: false, hover: true },
        };
      }

      async request(id, method, params) {
        if (method === "ui/initialize") {
          return this.reply(id, {
            protocolVersion: PROTOCOL,
            hostInfo: this.app.hostInfo,
            // No permission is granted and no origin approved beyond the declared ones.
            hostCapabilities: { openLinks: {}, serverTools: {}, serverResources: {}, logging: {}, sandbox: { permissions: {}, csp: (this.app.meta && this.app.meta.csp) || {} } },
            hostContext: this.hostContext(),
          });
        }
        if (method === "ping") return this.reply(id, {});
        if (method === "tools/call") return this.callTool(id, params);
        if (method === "resources/read") return this.readResource(id, params);
        if (method === "ui/open-link") {
          const url = webUrl(params.url);
          if (!url) return this.fail(id, -32602, "Invalid URL: only http(s) links are opened");
          // Offered to the person, never opened by the view itself.
          this.note("The app offers a link: ", h.el("a", { href: url, target: "_blank", rel: "noopener noreferrer", "data-testid": "app-link", text: url }));
          return this.reply(id, {});
        }
        if (method === "ui/message") {
          const content = Array.isArray(params.content) ? params.content : [params.content];
          const text = content.filter((c) => c && c.type === "text").map((c) => c.text).join("\n");
          this.note(h.el("span", { class: "badge", text: "message (" + (params.role || "user") + ")" }), " ", h.el("span", { "data-testid": "app-message", text }));
          return this.reply(id, {});
        }
        if (method === "ui/update-model-context") {
          this.modelContext = params;
          h.logLine("app " + this.app.uri + " model context: " + JSON.stringify(params).slice(0, 500), "app");
          return this.reply(id, {});
        }
        if (method === "ui/request-display-mode") return this.reply(id, { mode: "inline" });
        return this.fail(id, -32601, "Method not found: " + method);
      }

      async callTool(id, params) {
        const name = params.name;
        const tool = (h.state.tools || []).find((t) => t.name === name);
        const ui = tool ? toolUi(tool) : null;
        if (typeof name !== "string" || !tool || (ui && !ui.visibility.includes("app"))) {
          return this.fail(id, -32602, "Unknown tool: " + String(name));
        }
        if (params.arguments !== undefined && (typeof params.arguments !== "object" || Array.isArray(params.arguments) || params.arguments === null)) {
          return this.fail(id, -32602, "arguments must be an object");
        }
        await this.forward(id, () => h.api("call", { id: "app-" + this.id + "-" + id, name, arguments: params.arguments || {} }));
      }

      async readResource(id, params) {
        if (typeof params.uri !== "string") return this.fail(id, -32602, "uri must be a string");
        await this.forward(id, () => h.api("read", { uri: params.uri }));
      }

      // Through the inspector's client, a few at a time.
      async forward(id, send) {
        if (this.inFlight >= MAX_IN_FLIGHT) return this.fail(id, -32000, "too many requests in flight");
        this.inFlight++;
        try {
          this.reply(id, await send());
        } catch (e) {
          const code = e.detail && typeof e.detail.code === "number" ? e.detail.code : -32603;
          this.fail(id, code, e.message);
        } finally {
          this.inFlight--;
        }
      }

      notification(method, params) {
        if (method === "ui/notifications/initialized") {
          if (this.initialized) return;
          this.initialized = true;
          this.status.textContent = "running";
          this.notify("ui/notifications/tool-input", { arguments: this.args || {} });
          if (this.result) this.notify("ui/notifications/tool-result", this.result);
        } else if (method === "ui/notifications/size-changed") {
          const height = Number(params.height);
          if (Number.isFinite(height)) this.frame.style.height = Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height))) + "px";
        } else if (method === "notifications/message") {
          const data = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
          h.logLine("[app " + (params.level || "info") + "] " + String(data).slice(0, 1000), "app");
        } else if (method === "ui/notifications/request-teardown") {
          this.close("the app asked to close");
        }
      }

      // ui/resource-teardown, answered or not within TEARDOWN_MS, then the frame goes.
      async close(reason) {
        if (this.closed) return;
        if (this.initialized && this.frame.isConnected) {
          const id = "teardown-" + this.nextId++;
          const answered = new Promise((ok) => {
            this.waiting.set(id, ok);
            setTimeout(ok, TEARDOWN_MS);
          });
          // The schema's params are empty (the 2026-01-26 prose had a reason): it is logged.
          h.logLine("app " + this.app.uri + " torn down: " + reason, "app");
          this.post({ jsonrpc: "2.0", id, method: "ui/resource-teardown", params: {} });
          await answered;
        }
        this.closed = true;
        views.delete(this);
        this.frame.remove();
        this.node.remove();
      }
    }

    return {
      toolUi,
      // After a call of `tool`: its view under `out`, fed the arguments and the result.
      async show(tool, args, result, out) {
        const ui = toolUi(tool);
        if (!ui || !ui.resourceUri) return null;
        for (const v of [...views]) if (!v.node.isConnected) { v.closed = true; views.delete(v); } // replaced by a new call
        let app;
        try { app = await h.api("app", { uri: ui.resourceUri }); } catch (e) { out.append(h.errorBox(e)); return null; }
        const view = new View(tool, args, result, app);
        views.add(view);
        out.append(view.node);
        return view;
      },
      closeAll(reason) { for (const view of [...views]) view.close(reason); },
    };
  }

  return install;
})();
