"use strict";
// The mcpkit inspector page: talks to the inspector's JSON API (same origin, token header).
(function () {
  const TOKEN = new URLSearchParams(location.search).get("token") || "";
  history.replaceState(null, "", location.pathname); // the token leaves the address bar
  const $ = (sel, root) => (root || document).querySelector(sel);
  const state = { info: null, tools: [], resources: [], templates: [], prompts: [], history: [], logCount: 0, last: 0, calls: 0 };

  // ------------------------------------------------------------------ helpers

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (k === "checked" || k === "value") node[k] = v;
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  const json = (v) => JSON.stringify(v, null, 2);
  const kids = (list) => list.flat().filter((k) => k !== null && k !== undefined && k !== false);
  const add = (node, ...children) => node.append(...kids(children));
  const put = (node, ...children) => node.replaceChildren(...kids(children));

  // whole: the answer's envelope ({result, requestId}), not only its result.
  async function api(path, body, whole) {
    const init = { headers: { "X-Inspector-Token": TOKEN } };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch("/api/" + path, init);
    const data = await response.json();
    if (data.error) {
      const e = new Error(data.error.message || String(data.error));
      e.detail = data.error;
      throw e;
    }
    return whole ? data : data.result;
  }

  function errorBox(e) {
    return el("div", { class: "error-box", "data-testid": "error" }, "Error: " + e.message,
      e.detail && e.detail.code !== undefined && e.detail.code !== null ? " (code " + e.detail.code + ")" : "");
  }

  // The MCP Apps host (apps.js): tool views rendered under their results.
  const apps = mcpkitApps({ api, el, add, errorBox, state, theme: mcpkitTheme, logLine: (text, cls) => logLine(text, cls) });

  // ------------------------------------------------------------------ JSON Schema forms

  function resolve(schema, root) {
    let s = schema || {};
    for (let i = 0; i < 16 && s && s.$ref; i++) {
      const ref = s.$ref;
      if (!ref.startsWith("#/")) break;
      let node = root;
      for (const part of ref.slice(2).split("/")) node = node ? node[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
      if (!node) break;
      const rest = Object.assign({}, s);
      delete rest.$ref;
      s = Object.assign({}, node, rest);
    }
    return s;
  }

  function typeOf(s) {
    if (Array.isArray(s.type)) {
      const real = s.type.filter((t) => t !== "null");
      return real.length === 1 ? real[0] : null;
    }
    if (s.type) return s.type;
    if (s.enum) return "enum";
    if (s.properties) return "object";
    if (s.items) return "array";
    return null;
  }

  // A field for `schema`: {node, get() -> value (undefined: left out), set(value)}.
  function field(schema, root, name, required) {
    let s = resolve(schema, root);
    const alts = s.anyOf || s.oneOf;
    if (alts) {
      const options = alts.map((a) => resolve(a, root));
      const titled = options.filter((o) => o.const !== undefined);
      if (titled.length === options.length) {
        // oneOf of consts (titled enum)
        return enumField(s, options.map((o) => o.const), options.map((o) => o.title || String(o.const)), required);
      }
      const nonNull = options.filter((o) => o.type !== "null");
      if (nonNull.length === 1) {
        s = Object.assign({}, nonNull[0], { title: s.title || nonNull[0].title, description: s.description || nonNull[0].description, default: s.default !== undefined ? s.default : nonNull[0].default });
        required = false;
      } else {
        return unionField(s, options, root, required);
      }
    }
    if (s.const !== undefined) {
      return { node: el("code", { text: JSON.stringify(s.const) }), get: () => s.const, set() {} };
    }
    const t = typeOf(s);
    if (s.enum) return enumField(s, s.enum, s.enum.map(String), required);
    if (t === "string") return stringField(s, required);
    if (t === "integer" || t === "number") return numberField(s, t, required);
    if (t === "boolean") return boolField(s, required);
    if (t === "object" && s.properties) return objectField(s, root, name);
    if (t === "array") return arrayField(s, root, required);
    return rawField(s, required);
  }

  function enumField(s, values, labels, required) {
    const select = el("select", { "data-type": "enum" });
    if (!required || s.default === undefined) select.append(el("option", { value: "", text: required ? "(choose)" : "(unset)" }));
    values.forEach((v, i) => select.append(el("option", { value: String(i), text: labels[i] })));
    const set = (v) => { const i = values.findIndex((x) => JSON.stringify(x) === JSON.stringify(v)); select.value = i < 0 ? "" : String(i); };
    if (s.default !== undefined) set(s.default);
    return { node: select, get: () => (select.value === "" ? undefined : values[Number(select.value)]), set };
  }

  function stringField(s, required) {
    const formats = { date: "date", "date-time": "datetime-local", email: "email", uri: "url" };
    const long = (s.maxLength || 0) > 200 || /text|body|content|code/i.test(s.title || "");
    const input = long ? el("textarea", {}) : el("input", { type: formats[s.format] || "text" });
    if (s.default !== undefined) input.value = String(s.default);
    if (s.minLength) input.setAttribute("minlength", s.minLength);
    if (s.maxLength) input.setAttribute("maxlength", s.maxLength);
    if (s.pattern) input.setAttribute("pattern", s.pattern);
    input.dataset.type = "string";
    if (required) input.dataset.required = "1";
    return {
      node: input,
      get: () => (input.value === "" && !required ? undefined : input.value),
      set: (v) => { input.value = v === undefined ? "" : String(v); },
      input,
    };
  }

  function numberField(s, t, required) {
    const input = el("input", { type: "number", step: t === "integer" ? "1" : "any" });
    if (s.minimum !== undefined) input.min = s.minimum;
    if (s.maximum !== undefined) input.max = s.maximum;
    if (s.default !== undefined) input.value = String(s.default);
    input.dataset.type = t;
    if (required) input.dataset.required = "1";
    return {
      node: input,
      get: () => (input.value === "" ? undefined : t === "integer" ? parseInt(input.value, 10) : Number(input.value)),
      set: (v) => { input.value = v === undefined ? "" : String(v); },
    };
  }

  function boolField(s, required) {
    if (required || s.default !== undefined) {
      const box = el("input", { type: "checkbox", "data-type": "boolean" });
      box.checked = s.default === true;
      return { node: box, get: () => box.checked, set: (v) => { box.checked = !!v; } };
    }
    const select = el("select", { "data-type": "boolean" }, el("option", { value: "", text: "(unset)" }), el("option", { text: "true" }), el("option", { text: "false" }));
    return { node: select, get: () => (select.value === "" ? undefined : select.value === "true"), set: (v) => { select.value = v === undefined ? "" : String(!!v); } };
  }

  function objectField(s, root, name) {
    const box = el("fieldset", { "data-type": "object" }, name ? el("legend", { text: name }) : null);
    const fields = {};
    const required = new Set(s.required || []);
    for (const [key, sub] of Object.entries(s.properties || {})) {
      const subSchema = resolve(sub, root);
      const f = field(subSchema, root, key, required.has(key));
      fields[key] = f;
      const label = el("label", {}, subSchema.title || key, required.has(key) ? el("span", { class: "req", text: " *" }) : null,
        " ", el("span", { class: "hint", text: describeType(subSchema, root) }));
      const wrap = el("div", { class: "field", "data-field": key }, label, f.node,
        subSchema.description ? el("div", { class: "hint", text: subSchema.description }) : null,
        subSchema.default !== undefined ? el("div", { class: "hint", text: "default: " + JSON.stringify(subSchema.default) }) : null);
      add(box, wrap);
    }
    return {
      node: box,
      fields,
      get() {
        const out = {};
        for (const [k, f] of Object.entries(fields)) {
          const v = f.get();
          if (v !== undefined) out[k] = v;
        }
        return out;
      },
      set(v) { for (const [k, f] of Object.entries(fields)) f.set(v ? v[k] : undefined); },
    };
  }

  function arrayField(s, root, required) {
    const itemSchema = resolve(s.items || {}, root);
    if (itemSchema.enum) {
      // Many of a fixed set: checkboxes.
      const boxes = itemSchema.enum.map((v) => ({ v, box: el("input", { type: "checkbox" }) }));
      const node = el("div", { "data-type": "multi" }, boxes.map(({ v, box }) => el("label", {}, box, " " + String(v) + " ")));
      const set = (vals) => boxes.forEach(({ v, box }) => { box.checked = Array.isArray(vals) && vals.includes(v); });
      if (Array.isArray(s.default)) set(s.default);
      return { node, get: () => { const vals = boxes.filter((b) => b.box.checked).map((b) => b.v); return vals.length || required ? vals : undefined; }, set };
    }
    const items = [];
    const list = el("div", { class: "array", "data-type": "array" });
    const add = (value) => {
      const f = field(itemSchema, root, null, true);
      if (value !== undefined) f.set(value);
      const row = el("div", { class: "array-item" }, el("div", {}, f.node),
        el("button", { type: "button", text: "✕", title: "remove", onclick: () => { items.splice(items.indexOf(entry), 1); row.remove(); } }));
      const entry = { f, row };
      items.push(entry);
      list.insertBefore(row, addButton);
    };
    const addButton = el("button", { type: "button", "data-testid": "add-item", text: "+ add item", onclick: () => add() });
    list.append(addButton);
    if (Array.isArray(s.default)) s.default.forEach((v) => add(v));
    return {
      node: list,
      get: () => (items.length === 0 && !required ? undefined : items.map((e) => e.f.get())),
      set: (vals) => { items.splice(0).forEach((e) => e.row.remove()); (vals || []).forEach((v) => add(v)); },
    };
  }

  // Whether `v` is a value of the (resolved) schema `o`, as far as its type says.
  function fits(o, v) {
    if (o.const !== undefined) return JSON.stringify(o.const) === JSON.stringify(v);
    if (o.enum) return o.enum.some((x) => JSON.stringify(x) === JSON.stringify(v));
    const t = typeOf(o);
    if (v === null) return t === "null";
    if (t === "integer") return Number.isInteger(v);
    if (t === "number") return typeof v === "number";
    if (t === "string" || t === "boolean") return typeof v === t;
    if (t === "array") return Array.isArray(v);
    if (t === "object") return typeof v === "object" && !Array.isArray(v);
    return false;
  }

  // anyOf / oneOf of several kinds: the person picks the branch, then fills its field.
  function unionField(s, options, root, required) {
    const branches = options.filter((o) => o.type !== "null");
    const nullable = branches.length < options.length;
    const pick = el("select", { "data-testid": "union-branch" });
    if (!required) pick.append(el("option", { value: "", text: "(unset)" }));
    branches.forEach((o, i) => pick.append(el("option", { value: String(i), text: o.title || describeType(o, root) })));
    if (nullable) pick.append(el("option", { value: "null", text: "null" }));
    const slot = el("div", { class: "union-slot" });
    let current = null;
    const choose = (key) => {
      pick.value = key;
      current = key === "" || key === "null" ? null : field(branches[Number(key)], root, null, true);
      put(slot, current ? current.node : null);
    };
    pick.addEventListener("change", () => choose(pick.value));
    const set = (v) => {
      if (v === undefined) return choose(required ? "0" : "");
      if (v === null && nullable) return choose("null");
      const i = branches.findIndex((o) => fits(o, v));
      choose(String(i < 0 ? 0 : i));
      if (current) current.set(v);
    };
    set(s.default);
    return {
      node: el("div", { "data-type": "union" }, pick, slot),
      get: () => (pick.value === "null" ? null : current ? current.get() : undefined),
      set,
    };
  }

  function rawField(s, required) {
    const area = el("textarea", { "data-type": "json", placeholder: "JSON" });
    if (s.default !== undefined) area.value = JSON.stringify(s.default);
    return {
      node: area,
      get: () => (area.value.trim() === "" ? (required ? null : undefined) : JSON.parse(area.value)),
      set: (v) => { area.value = v === undefined ? "" : JSON.stringify(v); },
    };
  }

  function describeType(s, root) {
    s = resolve(s, root);
    if (s.enum) return "one of " + s.enum.map((v) => JSON.stringify(v)).join(", ");
    const alts = s.anyOf || s.oneOf;
    if (alts) return alts.map((a) => describeType(a, root)).join(" | ");
    const t = Array.isArray(s.type) ? s.type.join(" | ") : s.type || "any";
    return t === "array" ? "array of " + describeType(s.items || {}, root) : t + (s.format ? " (" + s.format + ")" : "");
  }

  // A form for an input schema, with a raw JSON fallback.
  function schemaForm(schema, onSubmit, submitLabel, extra) {
    const root = schema || { type: "object" };
    const form = objectField(Object.assign({ properties: {} }, root), root, null);
    const raw = el("textarea", { "data-testid": "raw-json", hidden: true });
    let rawMode = false;
    const toggle = el("button", {
      type: "button", "data-testid": "toggle-raw", text: "Raw JSON",
      onclick: () => {
        rawMode = !rawMode;
        if (rawMode) raw.value = json(form.get());
        else { try { form.set(JSON.parse(raw.value || "{}")); } catch (e) { /* keep the form */ } }
        raw.hidden = !rawMode;
        form.node.hidden = rawMode;
        toggle.textContent = rawMode ? "Form" : "Raw JSON";
      },
    });
    const submit = el("button", { type: "submit", "data-testid": "submit", text: submitLabel });
    const node = el("form", {
      onsubmit: (ev) => {
        ev.preventDefault();
        let value;
        try { value = rawMode ? JSON.parse(raw.value || "{}") : form.get(); } catch (e) { alert("Invalid JSON: " + e.message); return; }
        onSubmit(value);
      },
    }, form.node, raw, el("div", {}, submit, " ", toggle, extra || null));
    return { node, form };
  }

  // ------------------------------------------------------------------ results

  function renderContent(block) {
    const t = block.type;
    if (t === "text") return el("pre", { "data-content": "text", text: block.text });
    if (t === "image") return el("div", { "data-content": "image" }, el("img", { src: "data:" + block.mimeType + ";base64," + block.data, alt: "image result" }), el("div", { class: "hint", text: block.mimeType }));
    if (t === "audio") return el("div", { "data-content": "audio" }, el("audio", { controls: true, src: "data:" + block.mimeType + ";base64," + block.data }), el("div", { class: "hint", text: block.mimeType }));
    if (t === "resource_link") {
      return el("div", { "data-content": "resource_link" }, el("span", { class: "badge", text: "link" }), block.name || "", " ", el("code", { text: block.uri }), " ",
        el("button", { type: "button", text: "Read", onclick: () => { showTab("resources"); readResource(block.uri); } }));
    }
    if (t === "resource") {
      const r = block.resource || {};
      return el("div", { "data-content": "resource" }, el("span", { class: "badge", text: "resource" }), el("code", { text: r.uri }), renderContents([r]));
    }
    return el("pre", { "data-content": t || "unknown", text: json(block) });
  }

  function renderContents(contents) {
    return el("div", {}, (contents || []).map((c) => {
      if (c.text !== undefined) return el("div", { "data-content": "text" }, el("div", { class: "hint", text: (c.mimeType || "text") + " — " + c.uri }), el("pre", { text: c.text }));
      const mime = c.mimeType || "application/octet-stream";
      if (mime.startsWith("image/")) return el("div", { "data-content": "image" }, el("img", { src: "data:" + mime + ";base64," + c.blob, alt: c.uri }));
      if (mime.startsWith("audio/")) return el("div", { "data-content": "audio" }, el("audio", { controls: true, src: "data:" + mime + ";base64," + c.blob }));
      return el("div", { "data-content": "blob" }, el("div", { class: "hint", text: mime + " — " + c.uri }), el("pre", { text: c.blob.length > 2000 ? c.blob.slice(0, 2000) + "…" : c.blob }));
    }));
  }

  function renderToolResult(result, tool) {
    const box = el("div", { class: "result" + (result.isError ? " is-error" : ""), "data-testid": "result", "data-is-error": result.isError ? "true" : "false" },
      result.isError ? el("span", { class: "badge err", text: "isError" }) : el("span", { class: "badge", text: "ok" }));
    for (const block of result.content || []) add(box, renderContent(block));
    if (result.structuredContent !== undefined) {
      add(box, el("div", { class: "cols" },
        el("div", { "data-testid": "structured" }, el("h4", { text: "structuredContent" }), el("pre", { text: json(result.structuredContent) })),
        el("div", {}, el("h4", { text: "outputSchema" }), el("pre", { text: tool && tool.outputSchema ? json(tool.outputSchema) : "(none declared)" }))));
    }
    add(box, el("details", {}, el("summary", { text: "raw result" }), el("pre", { text: json(result) })));
    return box;
  }

  // ------------------------------------------------------------------ panels

  function showTab(name) {
    document.querySelectorAll("nav button").forEach((b) => b.classList.toggle("active", b.dataset.tab === name));
    document.querySelectorAll(".panel").forEach((p) => p.classList.toggle("active", p.id === "panel-" + name));
    if (name === "tasks") loadTasks();
  }

  function renderServer() {
    const info = state.info || {};
    const panel = $("#panel-server");
    put(panel);
    if (!info.connected) {
      add(panel, el("p", { text: "Not connected to " + (info.target || "the server") + "." }), info.error ? errorBox({ message: info.error }) : null);
      return;
    }
    const si = info.serverInfo || {};
    add(panel, 
      el("h2", { "data-testid": "server-name", text: (si.title || si.name) + " " + (si.version || "") }),
      el("p", {}, el("span", { class: "badge", text: "protocol " + info.protocolVersion }), el("span", { class: "badge", text: info.target })),
      si.description ? el("p", { text: si.description }) : null,
      info.instructions ? el("div", {}, el("h3", { text: "Instructions" }), el("pre", { text: info.instructions })) : null,
      el("h3", { text: "Capabilities" }), el("pre", { "data-testid": "capabilities", text: json(info.capabilities) }),
      el("h3", { text: "Server info" }), el("pre", { text: json(si) }));
  }

  function listItems(container, items, key, onSelect, label) {
    container.querySelectorAll(".item").forEach((n) => n.remove());
    for (const item of items) {
      const node = el("div", { class: "item", "data-name": item[key], tabindex: 0,
        onclick: () => { container.querySelectorAll(".item").forEach((n) => n.classList.remove("selected")); node.classList.add("selected"); onSelect(item); } },
      el("strong", { text: (label && label(item)) || item.title || item.name || item[key] }), item.description ? el("small", { text: item.description }) : null);
      container.append(node);
    }
  }

  // Past a dozen items a list gets a filter box (name or description, any case). A reload
  // of the list (a list_changed notification) keeps the box itself, so what is being typed
  // in it, and its focus, survive.
  const FILTER_AFTER = 12;
  function filterBox(container, count, what) {
    let box = $(".filter", container);
    if (count <= FILTER_AFTER) { if (box) box.remove(); return; }
    const apply = () => {
      const q = box.value.trim().toLowerCase();
      container.querySelectorAll(".item").forEach((n) => { n.hidden = q !== "" && !n.textContent.toLowerCase().includes(q); });
    };
    if (!box) {
      box = el("input", { type: "search", class: "filter", "aria-label": "Filter " + what, "data-testid": what + "-filter", oninput: apply });
      container.prepend(box);
    }
    box.placeholder = "Filter " + count + " " + what;
    apply();
  }

  async function loadLists() {
    for (const kind of ["tools", "resources", "templates", "prompts"]) {
      try { state[kind] = await api("list/" + kind); } catch (e) { state[kind] = []; }
    }
    listItems($("#tool-list"), state.tools, "name", selectTool, (t) => t.name);
    filterBox($("#tool-list"), state.tools.length, "tools");
    const resList = $("#resource-list");
    resList.replaceChildren(el("h3", { text: "Resources" }));
    const resHolder = el("div", {});
    resList.append(resHolder, el("h3", { text: "Templates" }));
    const tplHolder = el("div", {});
    resList.append(tplHolder, el("h3", { text: "Read any URI" }), uriReader());
    listItems(resHolder, state.resources, "uri", (r) => readResource(r.uri, r), (r) => r.name + " — " + r.uri);
    listItems(tplHolder, state.templates, "uriTemplate", selectTemplate, (t) => t.name + " — " + t.uriTemplate);
    listItems($("#prompt-list"), state.prompts, "name", selectPrompt, (p) => p.name);
  }

  function uriReader() {
    const input = el("input", { type: "text", placeholder: "scheme://…", "data-testid": "uri-input" });
    return el("form", { onsubmit: (ev) => { ev.preventDefault(); readResource(input.value); } }, input, el("button", { type: "submit", text: "Read" }));
  }

  function selectTool(tool) {
    // The views shown are torn down (answer awaited, bounded) before their frames go: the
    // old panel is hidden at once, without its id, and removed once they are done.
    let detail = $("#tool-detail");
    if (apps.count()) {
      const old = detail;
      detail = old.cloneNode(false);
      old.removeAttribute("id");
      old.style.display = "none";
      old.after(detail);
      apps.closeAll("another tool was selected", true).then(() => old.remove());
    }
    const out = el("div", {});
    const progress = el("div", { class: "progress", "data-testid": "progress" });
    const asTask = el("input", { type: "checkbox", "data-testid": "as-task" });
    const support = tool.execution && tool.execution.taskSupport;
    const { node } = schemaForm(tool.inputSchema, async (args) => {
      const id = "call-" + ++state.calls;
      await apps.closeAll("the tool is called again"); // before its view's place is reused
      progress.dataset.call = id;
      progress.textContent = "calling…";
      out.replaceChildren(el("button", { type: "button", "data-testid": "cancel-call", text: "Cancel the call",
        onclick: () => api("cancel", { id }) }));
      const started = performance.now();
      try {
        const answer = await api("call", { id, name: tool.name, arguments: args, task: asTask.checked }, true);
        const result = answer.result;
        progress.textContent = "done in " + Math.round(performance.now() - started) + " ms";
        out.replaceChildren(renderToolResult(result, tool));
        apps.show(tool, args, result, out, answer.requestId);
      } catch (e) {
        progress.textContent = "";
        out.replaceChildren(errorBox(e));
      }
    }, "Call", support && support !== "forbidden" ? el("label", {}, " ", asTask, " as a task") : null);
    put(detail, 
      el("h2", { "data-testid": "tool-name", text: tool.title || tool.name }),
      tool.description ? el("p", { text: tool.description }) : null,
      tool.annotations ? el("p", {}, Object.entries(tool.annotations).map(([k, v]) => el("span", { class: "badge", text: k + ": " + v }))) : null,
      node, progress, out,
      el("details", {}, el("summary", { text: "definition" }), el("pre", { text: json(tool) })));
  }

  async function readResource(uri, meta) {
    const detail = $("#resource-detail");
    const subscribe = el("button", { type: "button", text: "Subscribe", "data-testid": "subscribe",
      onclick: async () => {
        const on = subscribe.textContent === "Subscribe";
        try { await api("subscribe", { uri, on }); subscribe.textContent = on ? "Unsubscribe" : "Subscribe"; } catch (e) { add(detail, errorBox(e)); }
      } });
    put(detail, el("h2", { text: (meta && meta.name) || uri }), el("code", { "data-testid": "resource-uri", text: uri }), " ",
      state.info && state.info.capabilities && state.info.capabilities.resources && state.info.capabilities.resources.subscribe ? subscribe : null);
    try {
      const result = await api("read", { uri });
      add(detail, el("div", { class: "result", "data-testid": "resource-result" }, renderContents(result.contents)));
    } catch (e) { add(detail, errorBox(e)); }
  }

  // A text input offering the server's completions of `argument`.
  function completing(f, ref, argument, others) {
    if (!f.input) return;
    const box = el("div", { class: "suggestions", "data-testid": "suggestions" });
    const holder = el("div", {});
    f.input.parentNode.replaceChild(holder, f.input);
    add(holder, f.input, box);
    f.node = holder;
    let timer = null;
    f.input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        try {
          const r = await api("complete", { ref, argument, value: f.input.value, context: others() });
          put(box, ...(r.completion.values || []).map((v) => el("button", { type: "button", text: v, onclick: () => { f.input.value = v; put(box); } })));
        } catch (e) { put(box); }
      }, 150);
    });
  }

  function stringsForm(names, required, descriptions, ref, onSubmit, label) {
    const schema = { type: "object", properties: {}, required };
    names.forEach((n) => { schema.properties[n] = { type: "string", description: descriptions[n] }; });
    const form = schemaForm(schema, onSubmit, label);
    const fields = form.form.fields;
    for (const n of names) {
      const others = () => { const o = {}; for (const m of names) if (m !== n && fields[m].get()) o[m] = fields[m].get(); return o; };
      completing(fields[n], ref, n, others);
    }
    return form.node;
  }

  function selectTemplate(tpl) {
    const detail = $("#resource-detail");
    const names = [...new Set((tpl.uriTemplate.match(/\{[^}]+\}/g) || []).flatMap((x) => x.slice(1, -1).replace(/^[+#./;?&]/, "").split(",").map((v) => v.replace(/[*]|:\d+$/g, ""))))];
    const node = stringsForm(names, [], {}, { type: "ref/resource", uri: tpl.uriTemplate }, (values) => readResource(expand(tpl.uriTemplate, values), tpl), "Read");
    put(detail, el("h2", { text: tpl.name }), el("code", { text: tpl.uriTemplate }), tpl.description ? el("p", { text: tpl.description }) : null, node);
  }

  // RFC 6570 expansion (levels 1-3; enough for the forms).
  function expand(template, values) {
    return template.replace(/\{([+#./;?&]?)([^}]+)\}/g, (_, op, vars) => {
      const parts = vars.split(",").map((v) => v.replace(/[*]|:\d+$/g, "")).filter((v) => values[v] !== undefined && values[v] !== "");
      const enc = (v) => (op === "+" || op === "#" ? encodeURI(v) : encodeURIComponent(v));
      if (!parts.length) return "";
      const first = { "": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&" }[op];
      const sep = { "": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&" }[op];
      const named = op === ";" || op === "?" || op === "&";
      return first + parts.map((v) => (named ? v + "=" : "") + enc(String(values[v]))).join(sep);
    });
  }

  function selectPrompt(prompt) {
    const detail = $("#prompt-detail");
    const args = prompt.arguments || [];
    const out = el("div", {});
    const descriptions = {};
    args.forEach((a) => { descriptions[a.name] = a.description; });
    const node = stringsForm(args.map((a) => a.name), args.filter((a) => a.required).map((a) => a.name), descriptions,
      { type: "ref/prompt", name: prompt.name }, async (values) => {
        out.replaceChildren();
        try {
          const result = await api("prompt", { name: prompt.name, arguments: values });
          out.append(el("div", { class: "result", "data-testid": "prompt-result" },
            result.description ? el("p", { text: result.description }) : null,
            (result.messages || []).map((m) => el("div", {}, el("span", { class: "badge", text: m.role }), renderContent(m.content)))));
        } catch (e) { out.append(errorBox(e)); }
      }, "Get prompt");
    put(detail, el("h2", { "data-testid": "prompt-name", text: prompt.title || prompt.name }), prompt.description ? el("p", { text: prompt.description }) : null, node, out);
  }

  async function loadTasks() {
    const panel = $("#panel-tasks");
    put(panel, el("button", { type: "button", text: "Refresh", onclick: loadTasks }));
    try {
      const tasks = await api("list/tasks");
      if (!tasks.length) add(panel, el("p", { text: "No tasks (tools called \"as a task\" appear here)." }));
      const ended = ["completed", "failed", "cancelled"];
      for (const t of tasks) {
        const cancel = ended.includes(t.status) ? null : el("button", {
          type: "button", "data-testid": "cancel-task", text: "Cancel",
          onclick: async () => {
            try { await api("cancel-task", { taskId: t.taskId }); } catch (e) { add(panel, errorBox(e)); }
            loadTasks();
          },
        });
        add(panel, el("div", { class: "item", "data-testid": "task", "data-task": t.taskId, "data-status": t.status }, el("strong", { text: t.taskId }), " ", el("span", { class: "badge", text: t.status }), t.statusMessage ? " " + t.statusMessage : "", " ", cancel));
      }
    } catch (e) { add(panel, errorBox(e)); }
  }

  function renderRoots() {
    const panel = $("#panel-roots");
    const area = el("textarea", { "data-testid": "roots", placeholder: "one URI per line, e.g. file:///home/me/project" });
    put(panel, el("p", { text: "The roots this client offers the server (roots/list)." }), area,
      el("button", { type: "button", text: "Save roots", onclick: async () => {
        const roots = area.value.split("\n").map((s) => s.trim()).filter(Boolean).map((uri) => ({ uri }));
        await api("roots", { roots });
      } }));
  }

  // ------------------------------------------------------------------ the server's questions

  // `url` as an absolute http(s) URL, or null for anything else (javascript:, data:, ...).
  function webUrl(url) {
    if (typeof url !== "string") return null;
    let parsed;
    try { parsed = new URL(url); } catch (e) { return null; }
    return (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.hostname ? parsed.href : null;
  }

  function question(ev) {
    const holder = $("#questions");
    if (holder.querySelector('[data-id="' + ev.id + '"]')) return; // already shown
    const card = el("div", { class: "question", "data-testid": "question", "data-kind": ev.question, "data-id": ev.id });
    const answer = async (value) => { await api("answer", { id: ev.id, answer: value }); card.remove(); };
    const p = ev.params || {};
    if (ev.question === "sampling") {
      const messages = (p.messages || []).map((m) => el("div", {}, el("span", { class: "badge", text: m.role }), Array.isArray(m.content) ? m.content.map(renderContent) : renderContent(m.content)));
      const text = el("textarea", { "data-testid": "sampling-text", placeholder: "the model's answer" });
      const model = el("input", { type: "text", value: "inspector", "data-testid": "sampling-model" });
      add(card, el("h3", { text: "The server asks the model (sampling/createMessage)" }),
        p.systemPrompt ? el("pre", { text: "system: " + p.systemPrompt }) : null, ...messages,
        el("div", { class: "hint", text: "maxTokens: " + p.maxTokens }),
        el("label", {}, "Answer ", text), el("label", {}, "Model ", model),
        el("button", { type: "button", "data-testid": "answer", text: "Send answer",
          onclick: () => answer({ role: "assistant", content: { type: "text", text: text.value }, model: model.value, stopReason: "endTurn" }) }),
        " ", el("button", { type: "button", "data-testid": "reject", text: "Refuse", onclick: () => answer({}) }));
    } else if (ev.question === "elicitation-url" || p.mode === "url") {
      // Only a web page is a link: a javascript: or data: URL would run in this page's origin.
      const web = webUrl(p.url);
      add(card, el("h3", { text: "The server asks you to open a page (elicitation, URL mode)" }), el("p", { text: p.message }),
        web ? el("a", { href: web, target: "_blank", rel: "noopener noreferrer", "data-testid": "elicitation-url", text: web })
          : el("p", { class: "error-box", "data-testid": "elicitation-url-refused" }, "Not a web address, not opened: ", el("code", { text: String(p.url) })),
        el("div", {},
          web ? el("button", { type: "button", "data-testid": "answer", text: "Accept", onclick: () => answer({ action: "accept" }) }) : null, " ",
          el("button", { type: "button", "data-testid": "decline", text: "Decline", onclick: () => answer({ action: "decline" }) })));
    } else {
      const { node } = schemaForm(p.requestedSchema || { type: "object", properties: {} }, (content) => answer({ action: "accept", content }), "Accept",
        el("span", {}, " ", el("button", { type: "button", "data-testid": "decline", text: "Decline", onclick: () => answer({ action: "decline" }) }), " ",
          el("button", { type: "button", "data-testid": "cancel", text: "Cancel", onclick: () => answer({ action: "cancel" }) })));
      add(card, el("h3", { text: "The server asks you (elicitation)" }), el("p", { "data-testid": "elicitation-message", text: p.message }), node);
    }
    add(holder, card);
  }

  // ------------------------------------------------------------------ live events

  function logLine(text, cls) {
    const log = $("#log");
    log.prepend(el("div", { class: "log-line " + (cls || ""), text: new Date().toLocaleTimeString() + "  " + text }));
    state.logCount++;
    $("#log-count").textContent = "(" + state.logCount + ")";
  }

  function historyEntry(ev) {
    state.history.push(ev);
    const summary = (ev.direction === "out" ? "→ " : "← ") + ev.method + (ev.error ? "  ERROR" : "") + "  " + ev.ms + " ms";
    $("#history").prepend(el("details", { class: "history-entry", "data-testid": "history-entry", "data-method": ev.method },
      el("summary", { text: summary }), el("pre", { text: json({ params: ev.params, result: ev.result, error: ev.error }) })));
  }

  function handle(ev) {
    if (ev.kind === "status") {
      const status = $("#status");
      status.classList.toggle("error", ev.state === "error");
      status.textContent = ev.state === "connected" ? "connected" : ev.state === "error" ? "error: " + ev.error : ev.state + "…";
      if (ev.state === "connected") { state.info = ev.info; renderServer(); loadLists(); }
      if (ev.state === "error") { state.info = { connected: false, error: ev.error }; renderServer(); }
    } else if (ev.kind === "log") {
      const p = ev.params || {};
      logLine("[" + p.level + "] " + (p.logger ? p.logger + ": " : "") + (typeof p.data === "string" ? p.data : JSON.stringify(p.data)), "level-" + p.level);
    } else if (ev.kind === "progress") {
      const target = document.querySelector('[data-testid="progress"][data-call="' + ev.call + '"]');
      const text = "progress " + ev.progress + (ev.total !== null && ev.total !== undefined ? "/" + ev.total : "") + (ev.message ? " — " + ev.message : "");
      if (target) target.textContent = text;
      logLine(text, "progress");
    } else if (ev.kind === "notification") {
      logLine(ev.method + (ev.params ? " " + JSON.stringify(ev.params) : ""), "notification");
      if (/list_changed$/.test(ev.method)) loadLists();
    } else if (ev.kind === "question") {
      question(ev);
      logLine("the server asks: " + ev.question, "question");
    } else if (ev.kind === "answered") {
      const card = document.querySelector('[data-testid="question"][data-id="' + ev.id + '"]');
      if (card) card.remove();
    } else if (ev.kind === "task") {
      logLine("task " + ev.taskId + " started", "task");
    } else if (ev.kind === "message") {
      historyEntry(ev);
    }
  }

  async function poll() {
    for (;;) {
      try {
        const r = await api("events?after=" + state.last);
        for (const ev of r.events) handle(ev);
        state.last = r.last;
      } catch (e) {
        $("#status").textContent = "the inspector stopped answering";
        await new Promise((ok) => setTimeout(ok, 2000));
      }
    }
  }

  // ------------------------------------------------------------------ start

  document.querySelectorAll("nav button").forEach((b) => b.addEventListener("click", () => showTab(b.dataset.tab)));
  $("#reconnect").addEventListener("click", () => api("reconnect", {}));
  $("#theme").addEventListener("change", (ev) => mcpkitTheme.choose(ev.target.value));
  $("#level").addEventListener("change", (ev) => { if (ev.target.value) api("level", { level: ev.target.value }).catch((e) => logLine("setLevel: " + e.message, "error")); });
  $("#copy-history").addEventListener("click", async () => {
    const text = json(state.history);
    try { await navigator.clipboard.writeText(text); } catch (e) { /* no clipboard: the text is selected below */ }
    const area = el("textarea", { "data-testid": "history-json", readonly: true });
    area.value = text;
    $("#history").prepend(area);
    area.select();
  });
  renderRoots();
  api("info").then((info) => { state.info = info; renderServer(); if (info.connected) { $("#status").textContent = "connected"; loadLists(); } }).catch(() => {});
  api("questions").then((qs) => qs.forEach((q) => question(Object.assign({ kind: "question" }, q)))).catch(() => {});
  poll();
})();
