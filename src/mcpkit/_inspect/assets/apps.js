"use strict";
// The inspector as an MCP Apps host (io.modelcontextprotocol/ui, 2026-01-26): after a call
// of a tool with a view, the view is rendered under the result and spoken to by JSON-RPC
// over postMessage. app.js installs it with its helpers: mcpkitApps({api, el, ...}).
//
// Containment (a web host, 2026-01-26 "Sandbox proxy"): the view's frame is the sandbox
// proxy (sandbox.html), served from the inspector's second port, so of another origin than
// this page; it loads the view into an inner frame sandboxed with allow-scripts only (an
// opaque origin: no access to this page, its storage or its token; no top navigation,
// popups or forms) whose srcdoc opens with the CSP its server declared, the proxy's own
// policy, so it fetches from no other origin (CSP does not govern WebRTC: a view can still
// send UDP anywhere, docs/apps.md). Messages are taken only from the proxy's window and
// origin, rate limited, size checked, and the view's tool calls go through the same API as
// the page's own calls, for tools whose visibility includes "app". Before any of its frames
// is removed (closed, the tool called again, another tool selected) a view that has
// initialized gets ui/resource-teardown, and up to TEARDOWN_MS to answer it.
const mcpkitApps = (function () {
  const PROTOCOL = "2026-01-26";
  const RATE_WINDOW_MS = 1000;
  const RATE_MAX = 40; // messages a view may send per window; more are dropped
  const MAX_IN_FLIGHT = 4; // tools/call and resources/read of one view at once
  const MAX_MESSAGE_CHARS = 1 << 20;
  const TEARDOWN_MS = 2000;
  const MIN_HEIGHT = 40;
  const MAX_HEIGHT = 1600;
  const MIN_WIDTH = 40;
  const APP_TOOL_MS = 30000; // how long the view may take to list or run one of its tools
  const SANDBOX_PORT = /*SANDBOX_PORT*/0; // the proxy's port, filled in by the inspector
  const RESERVED = "ui/notifications/sandbox-";
  // The view's panel in the page's palette (theme.js), readable in either theme.
  const STYLE = ".app-view{border:1px solid var(--color-border-primary);border-radius:4px;margin:.6em 0;background:var(--color-background-primary)}" +
    ".app-view.borderless{border-color:transparent}" +
    ".app-view header{display:flex;gap:.6em;align-items:center;padding:.3em .6em;background:var(--color-background-tertiary);color:var(--color-text-primary);font-size:12px}" +
    ".app-view iframe{display:block;width:100%;max-width:100%;border:0;height:150px}" +
    ".app-view .app-notes:empty{display:none}.app-view .app-notes{padding:.3em .6em;font-size:12px;border-top:1px solid var(--color-border-secondary)}" +
    ".app-view .app-tools:empty{display:none}.app-view .app-tools{padding:.3em .6em;font-size:12px;border-top:1px solid var(--color-border-secondary)}" +
    ".app-view .app-tool{margin:.3em 0}.app-view .app-tool textarea{display:block;width:100%;min-height:3em;font:12px var(--font-mono, monospace)}";

  function install(h) {
    document.head.append(h.el("style", { text: STYLE }));
    const views = new Set();
    let seq = 0;
    // The page's theme changed (its toggle, or the system's while it is followed): each
    // view that initialized is told (the variables are light-dark() pairs: unchanged).
    h.theme.subscribe((theme) => {
      for (const view of views) if (view.initialized && !view.closed) view.notify("ui/notifications/host-context-changed", { theme });
    });

    window.addEventListener("message", (event) => {
      for (const view of views) {
        if (event.source !== view.frame.contentWindow) continue;
        if (event.origin !== view.proxyOrigin) return;
        const msg = event.data;
        if (msg && typeof msg === "object" && typeof msg.method === "string" && msg.method.startsWith(RESERVED)) {
          if (msg.method === RESERVED + "proxy-ready") view.load();
          return;
        }
        view.receive(msg);
        return;
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

    // A link downloading what ui/download-file gave: an embedded resource's text or base64
    // blob (a file named after its URI's last segment), or an http(s) resource link.
    function downloadLink(item) {
      if (item && item.type === "resource_link") {
        const url = webUrl(item.uri);
        return url && h.el("a", { href: url, download: "", target: "_blank", rel: "noopener noreferrer", "data-testid": "app-download", text: url });
      }
      const r = item && item.type === "resource" ? item.resource : null;
      if (!r || typeof r.uri !== "string") return null;
      let bytes;
      if (typeof r.text === "string") bytes = new TextEncoder().encode(r.text);
      else if (typeof r.blob === "string") {
        try { bytes = Uint8Array.from(atob(r.blob), (c) => c.charCodeAt(0)); } catch (e) { return null; }
      } else return null;
      const name = r.uri.split(/[/?#]/).filter(Boolean).pop() || "download";
      const type = typeof r.mimeType === "string" ? r.mimeType : "application/octet-stream";
      const href = URL.createObjectURL(new Blob([bytes], { type }));
      return h.el("a", { href, download: name, "data-testid": "app-download", text: name });
    }

    function webUrl(url) {
      if (typeof url !== "string") return null;
      let parsed;
      try { parsed = new URL(url); } catch (e) { return null; }
      return (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.hostname ? parsed.href : null;
    }

    class View {
      constructor(tool, args, result, app, requestId) {
        this.id = ++seq;
        this.tool = tool;
        this.args = args;
        this.result = result;
        this.app = app;
        this.requestId = requestId; // the tools/call's JSON-RPC id (hostContext.toolInfo.id)
        this.loaded = false;
        this.closing = null;
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
        // The proxy: the page's host name on the proxy's port (another origin), given the
        // origins the view may reach; the inspector serves it under the view's policy.
        this.proxyOrigin = location.protocol + "//" + location.hostname + ":" + SANDBOX_PORT;
        this.frame = h.el("iframe", {
          sandbox: "allow-scripts allow-same-origin", referrerpolicy: "no-referrer", allow: "",
          title: "MCP App " + app.uri, "data-testid": "app-frame", "data-uri": app.uri,
        });
        this.frame.src = this.proxyOrigin + "/sandbox?csp=" + encodeURIComponent(JSON.stringify(app.approved || {}));
        this.status = h.el("span", { class: "hint", "data-testid": "app-status", text: "loading" });
        this.notes = h.el("div", { class: "app-notes", "data-testid": "app-notes" });
        // The tools the view offers the host (appCapabilities.tools), listed and callable.
        this.tools = h.el("div", { class: "app-tools", "data-testid": "app-tools" });
        this.appCapabilities = {};
        const close = h.el("button", { type: "button", "data-testid": "app-close", text: "Close app", onclick: () => this.close("closed in the inspector") });
        this.node = h.el("div", { class: "app-view" + (meta.prefersBorder === false ? " borderless" : ""), "data-testid": "app-view", "data-uri": app.uri },
          h.el("header", {}, h.el("strong", { text: "App" }), h.el("code", { text: app.uri }), this.status, close),
          this.frame, this.notes, this.tools);
        h.logLine("app " + app.uri + " rendered under CSP: " + app.csp, "app");
      }

      post(message) {
        if (!this.closed && this.frame.contentWindow) this.frame.contentWindow.postMessage(message, this.proxyOrigin);
      }
      // The proxy is ready: the view's HTML, once (the proxy applies its own policy).
      load() {
        if (this.loaded || this.closed) return;
        this.loaded = true;
        this.post({ jsonrpc: "2.0", method: RESERVED + "resource-ready", params: { html: this.app.html, sandbox: "allow-scripts", csp: this.app.approved || {} } });
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
        // Said beside the state (still "running"), not instead of it.
        if (this.dropped++ % 500 === 0) this.status.textContent = (this.initialized ? "running" : "loading") + " (flooding: " + this.dropped + " messages ignored)";
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
          toolInfo: this.requestId === undefined || this.requestId === null ? { tool: this.tool } : { id: this.requestId, tool: this.tool },
          theme: h.theme.current(),
          styles: h.theme.styles(),
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
          const caps = params.appCapabilities;
          this.appCapabilities = caps && typeof caps === "object" && !Array.isArray(caps) ? caps : {};
          return this.reply(id, {
            protocolVersion: PROTOCOL,
            hostInfo: this.app.hostInfo,
            // What is handled, as handled: ui/message shows text; ui/update-model-context
            // keeps (and logs) whatever it is given. No permission is granted; the origins
            // approved are those the view's policy names (a malformed one is left out).
            hostCapabilities: {
              openLinks: {}, downloadFile: {}, serverTools: {}, serverResources: {}, logging: {},
              message: { text: {} },
              updateModelContext: { text: {}, image: {}, audio: {}, resource: {}, resourceLink: {}, structuredContent: {} },
              sandbox: { permissions: {}, csp: this.app.approved || {} },
            },
            hostContext: this.hostContext(),
          });
        }
        if (method === "ping") return this.reply(id, {});
        if (method === "tools/call") return this.callTool(id, params);
        if (method === "resources/read") return this.readResource(id, params);
        // serverResources is advertised: the listings go through too (ext-apps' App has
        // listServerResources), whole, in one page.
        if (method === "resources/list") return this.forward(id, async () => ({ resources: await h.api("list/resources") }));
        if (method === "resources/templates/list") return this.forward(id, async () => ({ resourceTemplates: await h.api("list/templates") }));
        if (method === "ui/open-link") {
          const url = webUrl(params.url);
          if (!url) return this.fail(id, -32602, "Invalid URL: only http(s) links are opened");
          // Offered to the person, never opened by the view itself.
          this.note("The app offers a link: ", h.el("a", { href: url, target: "_blank", rel: "noopener noreferrer", "data-testid": "app-link", text: url }));
          return this.reply(id, {});
        }
        if (method === "ui/download-file") {
          // Offered to the person, one link each, never started by the view itself.
          const contents = Array.isArray(params.contents) ? params.contents : [];
          const links = contents.map(downloadLink);
          if (!links.length || links.includes(null)) {
            return this.fail(id, -32602, "Invalid download: embedded text or base64 blob, or an http(s) resource link");
          }
          this.note("The app offers a download: ", ...links.flatMap((a, i) => (i ? [" ", a] : [a])));
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

      // The listed tool a view means by `name`. Listed as written, that one; else, behind a
      // hub that mounted the view's server under a prefix (`p_counter` shown, the view
      // calling its server's `increment`), the listed `<prefix>_<name>` whose prefix the
      // view's own tool has, the longest such (nested mounts: `a_p_`).
      listedTool(name) {
        const tools = h.state.tools || [];
        const exact = tools.find((t) => t.name === name);
        if (exact || typeof name !== "string" || !this.tool || typeof this.tool.name !== "string") return exact;
        const own = this.tool.name;
        for (let end = own.lastIndexOf("_"); end > 0; end = own.lastIndexOf("_", end - 1)) {
          const prefixed = own.slice(0, end + 1) + name;
          const found = tools.find((t) => t.name === prefixed);
          if (found) return found;
        }
        return undefined;
      }

      async callTool(id, params) {
        const tool = this.listedTool(params.name);
        const name = tool ? tool.name : params.name;
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
          if (this.appCapabilities.tools) this.listAppTools();
          this.status.textContent = "running";
          this.notify("ui/notifications/tool-input", { arguments: this.args || {} });
          if (this.result) this.notify("ui/notifications/tool-result", this.result);
        } else if (method === "ui/notifications/size-changed") {
          // Flexible both ways (no containerDimensions): the view's size, up to the room here.
          const height = Number(params.height);
          if (Number.isFinite(height)) this.frame.style.height = Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height))) + "px";
          const width = Number(params.width);
          if (Number.isFinite(width) && width > 0) this.frame.style.width = Math.max(MIN_WIDTH, Math.ceil(width)) + "px";
        } else if (method === "notifications/message") {
          const data = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
          h.logLine("[app " + (params.level || "info") + "] " + String(data).slice(0, 1000), "app");
        } else if (method === "notifications/tools/list_changed") {
          if (this.initialized && this.appCapabilities.tools) this.listAppTools();
        } else if (method === "ui/notifications/request-teardown") {
          this.close("the app asked to close");
        }
      }

      // A request of the host's to the view (after it initialized); its result, bounded.
      ask(method, params, ms) {
        const id = "host-" + this.nextId++;
        return new Promise((ok, fail) => {
          const timer = setTimeout(() => { this.waiting.delete(id); fail(new Error(method + ": no answer within " + ms / 1000 + " s")); }, ms);
          this.waiting.set(id, (msg) => {
            clearTimeout(timer);
            if (msg && msg.error) fail(new Error(String(msg.error.message) + " (code " + msg.error.code + ")"));
            else ok(msg ? msg.result : undefined);
          });
          this.post({ jsonrpc: "2.0", id, method, params });
        });
      }

      // The view's own tools (ext-apps: an app may offer tools to its host): tools/list
      // asked of the view, each shown with its arguments (JSON) and a Call button.
      async listAppTools() {
        let result;
        try { result = await this.ask("tools/list", {}, APP_TOOL_MS); } catch (e) {
          this.tools.replaceChildren(h.el("div", { class: "error-box", "data-testid": "app-tools-error", text: "The app's tools: " + e.message }));
          return;
        }
        if (this.closed) return;
        const tools = result && Array.isArray(result.tools) ? result.tools : [];
        h.logLine("app " + this.app.uri + " offers tools: " + (tools.map((t) => t && t.name).join(", ") || "none"), "app");
        this.tools.replaceChildren(h.el("strong", { text: "Tools the app offers (" + tools.length + ")" }),
          ...tools.filter((t) => t && typeof t.name === "string").map((tool) => this.appTool(tool)));
      }

      appTool(tool) {
        const args = h.el("textarea", { "data-testid": "app-tool-args", "aria-label": "arguments of " + tool.name });
        args.value = "{}";
        const out = h.el("pre", { "data-testid": "app-tool-result" });
        const call = h.el("button", { type: "button", "data-testid": "app-tool-call", text: "Call " + tool.name, onclick: async () => {
          let parsed;
          try { parsed = JSON.parse(args.value || "{}"); } catch (e) { out.textContent = "arguments: " + e.message; return; }
          out.textContent = "calling…";
          try {
            const result = await this.ask("tools/call", { name: tool.name, arguments: parsed }, APP_TOOL_MS);
            out.textContent = JSON.stringify(result, null, 2);
          } catch (e) { out.textContent = "Error: " + e.message; }
        } });
        return h.el("div", { class: "app-tool", "data-testid": "app-tool", "data-name": tool.name },
          h.el("code", { text: tool.name }), tool.description ? " " + tool.description : "", args, call, out);
      }

      // ui/resource-teardown, answered or not within TEARDOWN_MS, then the frame goes.
      close(reason) {
        if (!this.closing) this.closing = this.teardown(reason);
        return this.closing;
      }
      async teardown(reason) {
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
      // requestId: the JSON-RPC id of the tools/call that gave `result`.
      async show(tool, args, result, out, requestId) {
        const ui = toolUi(tool);
        if (!ui || !ui.resourceUri) return null;
        for (const v of [...views]) if (!v.node.isConnected) { v.closed = true; views.delete(v); } // gone without us
        let app;
        try { app = await h.api("app", { uri: ui.resourceUri }); } catch (e) { out.append(h.errorBox(e)); return null; }
        if (!out.isConnected) return null; // its place went while the view was read
        const view = new View(tool, args, result, app, requestId);
        views.add(view);
        out.append(view.node);
        return view;
      },
      // Every view torn down (each awaited, bounded): before their place is reused. Parked:
      // their place is already out of sight; its test ids are set aside meanwhile.
      closeAll(reason, parked) {
        return Promise.all([...views].map((view) => {
          if (parked) for (const node of [view.node, view.frame, view.status, view.notes]) node.dataset.testid += "-closing";
          return view.close(reason);
        }));
      },
      count() { return views.size; },
    };
  }

  return install;
})();
