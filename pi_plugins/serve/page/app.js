/* The page of `pi serve`: a session list, the chat of one live session over its
 * WebSocket (pi's RPC protocol), plugin dialogs, and artifacts in a sandboxed frame.
 *
 * Attaching (and every reload or reconnect) connects with since=0, so the server first
 * replays the held events of the current or last run, then asks get_messages: its
 * response comes after every event it accounts for, so the list is rebuilt from it and
 * the events after it carry on. Nothing from the model is parsed as HTML. */
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const state = {
    token: null, sessionId: null, ws: null, seq: 0, nextId: 1, pending: new Map(),
    messages: [], streaming: null, tools: new Map(), isStreaming: false, rendered: 0,
    sessions: [], dialogs: new Map(), models: [], model: null, cwd: null, retry: null,
  };

  // ------------------------------------------------------------ token and HTTP

  function readToken() {
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
    if (fromHash) {
      sessionStorage.setItem("pi-token", fromHash);
      // out of the address bar (and the history, a screenshot, a shared screen)
      history.replaceState(null, "", location.pathname + location.search);
    }
    return fromHash || sessionStorage.getItem("pi-token");
  }

  async function api(method, path, body) {
    const response = await fetch(path, {
      method, headers: { Authorization: `Bearer ${state.token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = response.status === 204 ? null : await response.json().catch(() => null);
    if (!response.ok) throw new Error((data && data.error) || `${response.status} ${response.statusText}`);
    return data;
  }

  function toast(text, level) {
    const node = document.createElement("div");
    node.className = `toast ${level || "info"}`;
    node.textContent = text;
    $("toasts").appendChild(node);
    setTimeout(() => node.remove(), 5000);
  }

  // ------------------------------------------------------------ sessions

  async function loadSessions() {
    try {
      state.sessions = (await api("GET", "/api/sessions")).sessions;
    } catch (error) {
      toast(`Sessions: ${error.message}`, "error");
      return;
    }
    const list = $("sessions");
    list.replaceChildren();
    for (const row of state.sessions) {
      const li = document.createElement("li");
      li.dataset.id = row.id;
      if (row.id === state.sessionId) li.className = "current";
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = row.name || row.id.slice(0, 8);
      const meta = document.createElement("span");
      meta.className = "meta";
      meta.textContent = `${row.cwd.split("/").pop() || row.cwd} · ${row.messageCount} messages · ${new Date(row.modified).toLocaleString()}`;
      if (row.live) {
        const live = document.createElement("span");
        live.className = "live";
        live.textContent = " ● live";
        meta.appendChild(live);
      }
      li.append(name, meta);
      li.title = row.path;
      li.addEventListener("click", () => openRow(row));
      list.appendChild(li);
    }
  }

  async function openRow(row) {
    try {
      const opened = row.live ? row : await api("POST", "/api/sessions", { cwd: row.cwd, session: row.path });
      attach(opened.id);
    } catch (error) {
      toast(`Open: ${error.message}`, "error");
    }
  }

  async function newSession() {
    try {
      const body = state.cwd ? { cwd: state.cwd } : {};
      if (state.model) body.model = `${state.model.provider}/${state.model.id}`;
      const created = await api("POST", "/api/sessions", body);
      attach(created.id);
      loadSessions();
    } catch (error) {
      toast(`New session: ${error.message}`, "error");
    }
  }

  // ------------------------------------------------------------ the socket

  function attach(sessionId) {
    if (state.ws) { state.ws.onclose = null; state.ws.close(); }
    clearTimeout(state.retry);
    state.sessionId = sessionId;
    sessionStorage.setItem("pi-session", sessionId);
    Object.assign(state, { messages: [], streaming: null, tools: new Map(), rendered: 0, seq: 0 });
    $("messages").replaceChildren();
    closeDialog();
    setStatus("connecting…");
    const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}` +
      `/api/sessions/${encodeURIComponent(sessionId)}/rpc?token=${encodeURIComponent(state.token)}&since=0`);
    state.ws = ws;
    ws.onopen = () => {
      setStatus("connected");
      command("get_state").then(applyState);
      command("get_available_models").then((data) => { state.models = data.models; renderModels(); });
      command("get_messages").then((data) => {
        state.messages = data.messages;
        rebuild();
      });
    };
    ws.onmessage = (frame) => receive(JSON.parse(frame.data));
    ws.onclose = () => {
      setStatus("disconnected");
      state.retry = setTimeout(() => state.sessionId === sessionId && attach(sessionId), 1000);
    };
    for (const li of $("sessions").children) li.classList.toggle("current", li.dataset.id === sessionId);
  }

  function command(type, fields) {
    const id = `page-${state.nextId++}`;
    return new Promise((resolve, reject) => {
      state.pending.set(id, { resolve, reject });
      state.ws.send(JSON.stringify({ id, type, ...(fields || {}) }));
    });
  }

  // pi 1.6's message_update: one stream event, applied to the message message_start began.
  function applyDelta(message, event) {
    const content = message.content || (message.content = []);
    const i = event.contentIndex ?? content.length - 1;
    switch (event.type) {
      case "text_start": content[i] = { type: "text", text: "" }; break;
      case "text_delta": (content[i] ||= { type: "text", text: "" }).text += event.delta || ""; break;
      case "text_end": if (typeof event.content === "string") content[i] = { type: "text", text: event.content }; break;
      case "thinking_start": content[i] = { type: "thinking", thinking: "" }; break;
      case "thinking_delta": (content[i] ||= { type: "thinking", thinking: "" }).thinking += event.delta || ""; break;
      case "thinking_end":
        if (typeof event.content === "string") content[i] = { type: "thinking", thinking: event.content };
        break;
      case "toolcall_start": content[i] = { type: "toolCall", id: event.id, name: event.toolName, arguments: {} }; break;
      case "toolcall_end": if (event.toolCall) content[i] = event.toolCall; break;
    }
  }

  function receive(frame) {
    if (frame.type === "response") {
      const waiting = state.pending.get(frame.id);
      if (!waiting) return;
      state.pending.delete(frame.id);
      if (frame.success) waiting.resolve(frame.data);
      else { toast(`${frame.command}: ${frame.error}`, "error"); waiting.reject(new Error(frame.error)); }
      return;
    }
    if (typeof frame.seq === "number") state.seq = frame.seq;
    switch (frame.type) {
      case "agent_start": setStreaming(true); break;
      case "agent_end": setStreaming(false); state.streaming = null; renderLive(); loadSessions(); break;
      case "message_start":
        if (frame.message.role === "assistant") { state.streaming = structuredClone(frame.message); scheduleLive(); }
        break;
      case "message_update":
        if (frame.message && frame.message.role === "assistant") state.streaming = frame.message; // pi 0.73's snapshots
        else if (state.streaming) applyDelta(state.streaming, frame.assistantMessageEvent || {});
        scheduleLive();
        break;
      case "message_end":
        if (frame.message.role === "assistant") state.streaming = null;
        state.messages.push(frame.message);
        appendRendered();
        break;
      case "tool_execution_start":
        state.tools.set(frame.toolCallId, { name: frame.toolName, args: frame.args, result: null });
        scheduleLive();
        break;
      case "tool_execution_update": {
        const tool = state.tools.get(frame.toolCallId);
        if (tool) { tool.result = frame.partialResult; scheduleLive(); }
        break;
      }
      case "tool_execution_end": state.tools.delete(frame.toolCallId); scheduleLive(); break;
      case "queue_update": renderQueue(frame.steering || [], frame.followUp || []); break;
      case "model_select": case "thinking_level_changed": command("get_state").then(applyState); break;
      case "extension_ui_request": uiRequest(frame); break;
      case "extension_error": toast(`Plugin error (${frame.event}): ${frame.error}`, "error"); break;
      case "auto_retry_start": setStatus(`retrying (${frame.attempt}/${frame.maxAttempts})`); break;
      default: break;
    }
  }

  function applyState(s) {
    state.model = s.model;
    state.cwd = state.sessions.find((r) => r.id === s.sessionId)?.cwd || state.cwd;
    $("title").textContent = `${s.sessionName || s.sessionId.slice(0, 8)}${state.cwd ? ` · ${state.cwd}` : ""}`;
    $("title").title = s.sessionFile || "";
    setStreaming(s.isStreaming);
    renderModels();
  }

  function setStreaming(on) {
    state.isStreaming = on;
    $("abort").disabled = !on;
    $("send").textContent = on ? "Steer" : "Send";
    setStatus(on ? "working…" : "ready");
  }

  function setStatus(text) { $("status").textContent = text; }

  // ------------------------------------------------------------ rendering

  function rebuild() {
    $("messages").replaceChildren();
    state.rendered = 0;
    appendRendered();
  }

  function toolCalls() {
    const calls = new Map();
    for (const m of state.messages) if (m.role === "assistant") for (const b of m.content || []) if (b.type === "toolCall") calls.set(b.id, b);
    return calls;
  }

  function appendRendered() {
    const list = $("messages");
    for (const node of list.querySelectorAll(".live-entry")) node.remove();
    const calls = toolCalls();
    for (; state.rendered < state.messages.length; state.rendered++) {
      const node = renderMessage(state.messages[state.rendered], calls, true);
      if (node) list.appendChild(node);
    }
    renderLive();
  }

  let liveScheduled = false;
  function scheduleLive() {
    if (liveScheduled) return;
    liveScheduled = true;
    requestAnimationFrame(() => { liveScheduled = false; renderLive(); });
  }

  function renderLive() {
    const list = $("messages");
    const stick = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    // thinking the reader unfolded stays unfolded while the answer streams
    const unfolded = [...list.querySelectorAll(".live-entry details.thinking")].map((d) => d.open);
    for (const node of list.querySelectorAll(".live-entry")) node.remove();
    if (state.streaming) {
      const node = liveEntry(renderMessage(state.streaming, toolCalls(), false));
      node.querySelectorAll("details.thinking").forEach((d, i) => { d.open = Boolean(unfolded[i]); });
      list.appendChild(node);
    }
    for (const [id, tool] of state.tools) {
      if (state.messages.some((m) => m.role === "toolResult" && m.toolCallId === id)) continue;
      list.appendChild(liveEntry(toolEntry(tool.name, tool.args, tool.result, false, true)));
    }
    if (stick) list.scrollTop = list.scrollHeight;
  }

  function liveEntry(node) { node.classList.add("live-entry"); return node; }

  function entry(role) {
    const li = document.createElement("li");
    li.className = "message";
    li.dataset.testid = "message";
    li.dataset.role = role;
    return li;
  }

  function textOf(content) {
    if (typeof content === "string") return content;
    return (content || []).filter((b) => b.type === "text").map((b) => b.text).join("");
  }

  function renderMessage(m, calls, complete) {
    if (m.role === "user") {
      const li = entry("user");
      li.textContent = textOf(m.content);
      const images = (m.content || []).filter?.((b) => b.type === "image") || [];
      if (images.length) li.appendChild(document.createTextNode(` [${images.length} image${images.length > 1 ? "s" : ""}]`));
      return li;
    }
    if (m.role === "assistant") {
      const li = entry("assistant");
      for (const block of m.content || []) {
        if (block.type === "thinking" && block.thinking) {
          const details = document.createElement("details");
          details.className = "thinking";
          const summary = document.createElement("summary");
          summary.textContent = "Thinking";
          const text = document.createElement("div");
          text.className = "thinking-text";
          text.textContent = block.thinking;
          details.append(summary, text);
          li.appendChild(details);
        } else if (block.type === "text") {
          const body = document.createElement("div");
          body.className = "markdown";
          body.appendChild(PiMarkdown.render(block.text, { onArtifact: openArtifact, complete }));
          li.appendChild(body);
        } else if (block.type === "toolCall") {
          const call = document.createElement("div");
          call.className = "tool-call";
          call.textContent = `→ ${block.name} ${summarise(block.name, block.arguments)}`;
          li.appendChild(call);
        }
      }
      if (!complete) li.lastElementChild?.classList.add("cursor");
      if (m.stopReason === "error" || m.stopReason === "aborted") {
        const error = document.createElement("div");
        error.className = "error";
        error.textContent = m.stopReason === "aborted" ? "Aborted" : `Error: ${m.errorMessage || "the request failed"}`;
        li.appendChild(error);
      }
      return li;
    }
    if (m.role === "toolResult") {
      const call = calls.get(m.toolCallId);
      return toolEntry(m.toolName, call ? call.arguments : {}, m, m.isError, false);
    }
    if (m.role === "bashExecution") {
      const li = entry("tool");
      const head = document.createElement("div");
      head.className = "tool-head";
      head.textContent = `$ ${m.command}`;
      const pre = document.createElement("pre");
      pre.textContent = m.output || "";
      li.append(head, pre);
      return li;
    }
    const text = textOf(m.content) || m.summary;
    if (!text) return null;
    const li = entry("tool");
    li.appendChild(PiMarkdown.render(text, { onArtifact: openArtifact }));
    return li;
  }

  function summarise(name, args) {
    if (!args || typeof args !== "object") return "";
    if (name === "bash") return args.command || "";
    if (args.path) return args.path + (args.offset ? `:${args.offset}` : "");
    if (args.pattern) return args.pattern;
    const text = JSON.stringify(args);
    return text.length > 120 ? `${text.slice(0, 117)}…` : text;
  }

  function toolEntry(name, args, result, isError, running) {
    const li = entry("tool");
    li.dataset.tool = name;
    const head = document.createElement("div");
    head.className = "tool-head";
    const b = document.createElement("b");
    b.textContent = name;
    head.append(b, document.createTextNode(` ${summarise(name, args)}${running ? " (running…)" : ""}`));
    li.appendChild(head);
    const diff = result && result.details && typeof result.details.diff === "string" ? result.details.diff : null;
    if (diff && !isError) {
      const pre = document.createElement("pre");
      pre.className = "diff";
      for (const line of diff.split("\n")) {
        const span = document.createElement("span");
        span.className = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
        span.textContent = line || " ";
        pre.appendChild(span);
      }
      li.appendChild(pre);
    } else {
      const output = result ? textOf(result.content) : "";
      if (output || running) {
        const pre = document.createElement("pre");
        pre.className = "output";
        if (isError) pre.classList.add("error");
        pre.textContent = output;
        li.appendChild(pre);
      }
    }
    return li;
  }

  function renderQueue(steering, followUp) {
    const queue = $("queue");
    const parts = [...steering.map((t) => `steer: ${t}`), ...followUp.map((t) => `follow-up: ${t}`)];
    queue.hidden = parts.length === 0;
    queue.textContent = parts.length ? `Queued — ${parts.join(" · ")}` : "";
  }

  function renderModels() {
    const select = $("model");
    select.replaceChildren();
    const models = state.models.length ? state.models : (state.model ? [state.model] : []);
    for (const m of models) {
      const option = document.createElement("option");
      option.value = `${m.provider}/${m.id}`;
      option.textContent = `${m.provider}/${m.id}`;
      select.appendChild(option);
    }
    if (state.model) select.value = `${state.model.provider}/${state.model.id}`;
    select.disabled = models.length === 0;
  }

  // ------------------------------------------------------------ artifacts

  function openArtifact(code, kind) {
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts"); // never allow-same-origin: an opaque origin
    frame.dataset.testid = "artifact";
    frame.title = "Artifact";
    frame.srcdoc = kind === "svg"
      ? `<!doctype html><meta charset="utf-8"><style>body{margin:0;display:grid;place-items:center;min-height:100vh}</style>${code}`
      : code;
    $("artifact-host").replaceChildren(frame);
    $("artifact-panel").hidden = false;
  }

  // ------------------------------------------------------------ plugin dialogs

  function uiRequest(request) {
    switch (request.method) {
      case "confirm": case "select": case "input": case "editor": showDialog(request); break;
      case "notify": toast(request.message, request.notifyType); break;
      case "setTitle": document.title = request.title; break;
      case "setStatus": setStatus(request.statusText || ""); break;
      case "set_editor_text": $("prompt").value = request.text; break;
      default: break;
    }
  }

  function showDialog(request) {
    state.dialogs.set(request.id, request);
    if (!$("dialog-backdrop").hidden) return; // one at a time; the next follows
    const box = $("dialog");
    box.replaceChildren();
    box.dataset.method = request.method;
    const title = document.createElement("h2");
    title.textContent = request.title;
    box.appendChild(title);
    if (request.message) {
      const p = document.createElement("p");
      p.textContent = request.message;
      box.appendChild(p);
    }
    const actions = document.createElement("div");
    actions.className = "actions";
    const button = (text, testid, answer) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = text;
      b.dataset.testid = testid;
      b.addEventListener("click", () => answerDialog(request, answer()));
      actions.appendChild(b);
      return b;
    };
    if (request.method === "confirm") {
      button("No", "dialog-no", () => ({ confirmed: false }));
      setTimeout(() => button("Yes", "dialog-yes", () => ({ confirmed: true })).focus(), 0);
    } else if (request.method === "select") {
      for (const option of request.options || []) button(option, "dialog-option", () => ({ value: option }));
      button("Cancel", "dialog-cancel", () => ({ cancelled: true }));
    } else {
      const field = document.createElement(request.method === "editor" ? "textarea" : "input");
      field.dataset.testid = "dialog-input";
      if (request.method === "editor") { field.rows = 8; field.value = request.prefill || ""; }
      else field.placeholder = request.placeholder || "";
      box.appendChild(field);
      button("Cancel", "dialog-cancel", () => ({ cancelled: true }));
      button("OK", "dialog-ok", () => ({ value: field.value }));
      setTimeout(() => field.focus(), 0);
    }
    box.appendChild(actions);
    $("dialog-backdrop").hidden = false;
    if (request.timeout) setTimeout(() => state.dialogs.has(request.id) && answerDialog(request, null), request.timeout);
  }

  function answerDialog(request, answer) {
    state.dialogs.delete(request.id);
    if (answer && state.ws && state.ws.readyState === WebSocket.OPEN) {
      state.ws.send(JSON.stringify({ type: "extension_ui_response", id: request.id, ...answer }));
    }
    closeDialog(false);
    const next = state.dialogs.values().next().value;
    if (next) { state.dialogs.delete(next.id); showDialog(next); }
  }

  function closeDialog(clear = true) {
    if (clear) state.dialogs.clear();
    $("dialog-backdrop").hidden = true;
    $("dialog").replaceChildren();
  }

  // ------------------------------------------------------------ the composer

  function submit(behavior) {
    const box = $("prompt");
    const text = box.value;
    if (!text.trim() || !state.ws || state.ws.readyState !== WebSocket.OPEN) return;
    box.value = "";
    const fields = { message: text };
    if (state.isStreaming) fields.streamingBehavior = behavior || "steer";
    command("prompt", fields).catch(() => { box.value = text; });
  }

  function start() {
    state.token = readToken();
    if (!state.token) {
      setStatus("no token: open the address pi serve printed");
      return;
    }
    $("composer").addEventListener("submit", (event) => { event.preventDefault(); submit(); });
    $("prompt").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        submit(event.altKey ? "followUp" : "steer");
      }
    });
    $("abort").addEventListener("click", () => command("abort").catch(() => {}));
    $("new-session").addEventListener("click", newSession);
    $("model").addEventListener("change", (event) => {
      const [provider, ...rest] = event.target.value.split("/");
      command("set_model", { provider, modelId: rest.join("/") }).then((model) => { state.model = model; renderModels(); });
    });
    $("artifact-close").addEventListener("click", () => { $("artifact-panel").hidden = true; $("artifact-host").replaceChildren(); });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !$("dialog-backdrop").hidden) {
        const open = [...state.dialogs.values()].pop();
        if (open) answerDialog(open, open.method === "confirm" ? { confirmed: false } : { cancelled: true });
      } else if (event.key === "Escape" && state.isStreaming) command("abort").catch(() => {});
    });
    setInterval(loadSessions, 15000); // sessions other clients open
    loadSessions().then(() => {
      const remembered = sessionStorage.getItem("pi-session");
      const row = state.sessions.find((r) => r.id === remembered) || state.sessions.find((r) => r.live);
      if (row) openRow(row);
    });
  }

  start();
})();
