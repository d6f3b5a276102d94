/* The page of `pi serve`: the session list, the chat of one live session over its
 * WebSocket (pi's RPC protocol), plugin dialogs, and artifacts in a sandboxed frame.
 *
 * Attaching connects with since=0, so the server first replays the held events of the
 * current or last run, then answers get_messages: its response comes after every event
 * it accounts for, so the list is rebuilt from it and the events after it carry on. A
 * connection that drops keeps what is shown, says so, and comes back by itself with
 * since=<the last seq seen> (reopening the session from its file after a restart). */

import { $, download, toast } from "./dom.js";
import { Follower } from "./follow.js";
import { renderMessage, toolEntry } from "./render.js";
import { ask, cancelDialog, clearDialogs, confirmAsk, showDialog, trapFocus } from "./dialogs.js";
import { getRows, initSessions, sessionTitle, setCurrent, setDrawer, setRows } from "./sessions.js";
import { renderStats } from "./stats.js";
import { openArtifact, initArtifacts } from "./artifacts.js";
import { initComposer } from "./composer.js";
import { closeSettings, initSettings, settingsOpen } from "./settings.js";
import { clearTreeSearch, closeTree, initTree, treeBusy, treeChanged, treeOpen } from "./tree.js";
import { cancelAll, cancelRequest, offerTools, runRequest } from "./repl.js";
import { attachmentsOf } from "./attachment_store.js";

const state = {
  token: null, sessionId: null, sessionFile: null, ws: null, seq: 0, nextId: 1, pending: new Map(),
  messages: [], streaming: null, tools: new Map(), isStreaming: false, rendered: 0,
  models: [], model: null, thinkingLevel: null, cwd: null, retry: null, online: false, name: null,
};
let follower;

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

export async function api(method, path, body, raw) {
  const response = await fetch(path, {
    method, headers: { Authorization: `Bearer ${state.token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (raw && response.ok) return response;
  const data = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) throw new Error((data && data.error) || `${response.status} ${response.statusText}`);
  return data;
}

// ------------------------------------------------------------ sessions

async function loadSessions() {
  try {
    setRows((await api("GET", "/api/sessions")).sessions);
    if (state.sessionId) showTitle();
  } catch (error) {
    if (state.online) toast(`Sessions: ${error.message}`, "error");
  }
}

async function openRow(row) {
  setDrawer(false);
  return reopen(row);
}

/** Attach to a row without touching the drawer: the start-up reopening must not close
 * a drawer the user opened while the list was loading. */
async function reopen(row) {
  try {
    const opened = row.live ? row : await api("POST", "/api/sessions", { cwd: row.cwd, session: row.path });
    return attach(opened.id);
  } catch (error) {
    toast(`Open: ${error.message}`, "error");
    return null;
  }
}

async function newSession() {
  try {
    const body = state.cwd ? { cwd: state.cwd } : {};
    if (state.model) body.model = `${state.model.provider}/${state.model.id}`;
    const created = await api("POST", "/api/sessions", body);
    setDrawer(false);
    const attached = attach(created.id);
    loadSessions();
    return attached;
  } catch (error) {
    toast(`New session: ${error.message}`, "error");
    return null;
  }
}

async function renameRow(row) {
  if (row.id !== state.sessionId && !(await openRow(row))) return;
  const name = await ask("Rename session", state.name || row.name || "", "The name `pi -r` lists it by.");
  if (name !== null && name.trim()) await rename(name.trim());
}

export async function rename(name) {
  await command("set_session_name", { name });
  state.name = name;
  showTitle();
  loadSessions();
}

async function exportRow(row) {
  try {
    const id = row.live ? row.id : (await api("POST", "/api/sessions", { cwd: row.cwd, session: row.path })).id;
    const response = await api("GET", `/api/sessions/${encodeURIComponent(id)}/export`, null, true);
    download(await response.blob(), `pi-session-${id.slice(0, 8)}.html`);
  } catch (error) {
    toast(`Export: ${error.message}`, "error");
  }
}

async function removeRow(row) {
  if (!(await confirmAsk("Delete this session?", `${sessionTitle(row)}\n${row.path}\nThe file is deleted for good.`))) return;
  try {
    await api("DELETE", `/api/session-files?path=${encodeURIComponent(row.path)}`);
    if (row.id === state.sessionId) detach();
    toast("Session deleted");
  } catch (error) {
    toast(`Delete: ${error.message}`, "error");
  }
  loadSessions();
}

// ------------------------------------------------------------ the socket

function detach() {
  if (state.ws) { state.ws.onclose = null; state.ws.close(); }
  state.ws = null;
  state.sessionId = null;
  sessionStorage.removeItem("pi-session");
  $("messages").replaceChildren();
  $("title").textContent = "No session";
  setCurrent(null);
}

/** The page on session ``sessionId``: a promise that settles once it is connected. */
function attach(sessionId, since) {
  if (state.ws) { state.ws.onclose = null; state.ws.close(); }
  cancelAll();
  clearTimeout(state.retry);
  const resuming = since !== undefined && sessionId === state.sessionId;
  state.sessionId = sessionId;
  sessionStorage.setItem("pi-session", sessionId);
  if (!resuming) {
    Object.assign(state, { messages: [], streaming: null, tools: new Map(), rendered: 0, seq: 0, name: null });
    $("messages").replaceChildren();
    clearDialogs();
    follower.toEnd();
  }
  setCurrent(sessionId);
  setStatus(resuming ? "reconnecting…" : "connecting…");
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}` +
    `/api/sessions/${encodeURIComponent(sessionId)}/rpc?token=${encodeURIComponent(state.token)}&since=${resuming ? state.seq : 0}`);
  state.ws = ws;
  return new Promise((resolve) => {
    ws.onopen = () => {
      setOnline(true);
      resolve(sessionId);
      offerTools(command); // javascript_repl runs here
      command("get_state").then(applyState);
      command("get_available_models").then((data) => { state.models = data.models; renderModels(); });
      command("get_messages").then((data) => { state.messages = data.messages; rebuild(); });
      refreshStats();
    };
    ws.onmessage = (frame) => receive(JSON.parse(frame.data));
    ws.onclose = () => {
      resolve(null);
      cancelAll();
      for (const waiting of state.pending.values()) waiting.reject(new Error("the connection closed"));
      state.pending.clear();
      if (state.ws === ws) reconnect(sessionId, 1);
    };
  });
}

/** The server went away: keep what is shown, say so, and try again (with a growing
 * pause) until it answers; then reopen the session from its file if it is not live. */
function reconnect(sessionId, attempt) {
  setOnline(false);
  state.retry = setTimeout(async () => {
    if (state.sessionId !== sessionId) return;
    try {
      await api("GET", "/api/health");
      const live = (await api("GET", "/api/sessions")).sessions;
      setRows(live);
      const row = live.find((r) => r.id === sessionId);
      if (!row?.live && state.sessionFile) {
        await api("POST", "/api/sessions", { cwd: state.cwd || undefined, session: state.sessionFile });
      }
      attach(sessionId, state.seq);
    } catch {
      reconnect(sessionId, Math.min(attempt + 1, 5));
    }
  }, 500 * attempt);
}

function setOnline(online) {
  state.online = online;
  $("offline").hidden = online;
  document.body.classList.toggle("offline", !online);
  if (!online) setStatus("disconnected");
}

export function command(type, fields) {
  const id = `page-${state.nextId++}`;
  return new Promise((resolve, reject) => {
    if (!state.ws || state.ws.readyState !== WebSocket.OPEN) { reject(new Error("not connected")); return; }
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
    case "agent_end": setStreaming(false); state.streaming = null; renderLive(); loadSessions(); refreshStats(); break;
    case "message_start":
      if (frame.message.role === "assistant") { state.streaming = structuredClone(frame.message); scheduleLive(); }
      break;
    case "message_update":
      if (frame.message && frame.message.role === "assistant") state.streaming = frame.message; // pi 0.73's snapshots
      else if (state.streaming && frame.assistantMessageEvent) applyDelta(state.streaming, frame.assistantMessageEvent);
      scheduleLive();
      break;
    case "message_end":
      if (frame.message.role === "assistant") { state.streaming = null; refreshStats(); }
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
    case "model_select": case "thinking_level_changed": command("get_state").then(applyState); refreshStats(); break;
    case "session_info_changed": command("get_state").then(applyState); loadSessions(); break;
    case "tree_navigated": // a client moved in the tree: the conversation at the new leaf
      command("get_messages").then((data) => { state.messages = data.messages; rebuild(); follower.toEnd(); });
      refreshStats();
      treeChanged();
      break;
    case "label_changed": treeChanged(); break; // a client labelled an entry
    case "compaction_end": command("get_messages").then((data) => { state.messages = data.messages; rebuild(); }); refreshStats(); break;
    case "extension_ui_request": uiRequest(frame); break;
    case "browser_tool_request": runRequest(frame, command, attachmentsOf(state.sessionId)); break;
    case "browser_tool_cancel": cancelRequest(frame.id); break;
    case "extension_error": toast(`Plugin error (${frame.event}): ${frame.error}`, "error"); break;
    case "auto_retry_start": setStatus(`retrying (${frame.attempt}/${frame.maxAttempts})`); break;
    default: break;
  }
}

function applyState(s) {
  state.model = s.model;
  state.thinkingLevel = s.thinkingLevel;
  state.sessionFile = s.sessionFile || state.sessionFile;
  state.name = s.sessionName || null;
  state.cwd = getRows().find((r) => r.id === s.sessionId)?.cwd || state.cwd;
  if (!s.isStreaming && state.streaming) { state.streaming = null; state.tools.clear(); renderLive(); }
  setStreaming(s.isStreaming);
  showTitle();
  renderModels();
}

function showTitle() {
  const row = getRows().find((r) => r.id === state.sessionId);
  const name = state.name || row?.firstMessage || (state.sessionId || "").slice(0, 8);
  $("title").textContent = `${name}${state.cwd ? ` · ${state.cwd}` : ""}`;
  $("title").title = `${state.sessionId}\n${state.sessionFile || ""}`;
}

async function refreshStats() {
  try { renderStats(await command("get_session_stats"), state.model); } catch { /* offline: the last figures stay */ }
}

function setStreaming(on) {
  state.isStreaming = on;
  $("abort").disabled = !on;
  $("send").textContent = on ? "Steer" : "Send";
  setStatus(on ? "working…" : "ready");
}

function setStatus(text) { $("status").textContent = text; }

// ------------------------------------------------------------ rendering

const options = { onArtifact: (code, kind, lang) => openArtifact(code, kind, lang) };

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
    const node = renderMessage(state.messages[state.rendered], calls, true, options);
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
  // thinking the reader unfolded stays unfolded while the answer streams
  const unfolded = [...list.querySelectorAll(".live-entry details.thinking")].map((d) => d.open);
  const live = [];
  if (state.streaming) {
    const node = renderMessage(state.streaming, toolCalls(), false, options);
    node.querySelectorAll("details.thinking").forEach((d, i) => { d.open = Boolean(unfolded[i]); });
    live.push(node);
  }
  for (const [id, tool] of state.tools) {
    if (state.messages.some((m) => m.role === "toolResult" && m.toolCallId === id)) continue;
    live.push(toolEntry(tool.name, tool.args, tool.result, false, true));
  }
  for (const node of list.querySelectorAll(".live-entry")) node.remove();
  for (const node of live) { node.classList.add("live-entry"); list.appendChild(node); }
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
  const thinking = $("thinking");
  thinking.disabled = !state.model?.reasoning;
  thinking.value = state.thinkingLevel || "off";
}

// ------------------------------------------------------------ plugin dialogs

function uiRequest(request) {
  switch (request.method) {
    case "confirm": case "select": case "input": case "editor":
      showDialog(request, (answer) => {
        if (answer && state.ws && state.ws.readyState === WebSocket.OPEN) {
          state.ws.send(JSON.stringify({ type: "extension_ui_response", id: request.id, ...answer }));
        }
      });
      break;
    case "notify": toast(request.message, request.notifyType); break;
    case "setTitle": document.title = request.title; break;
    case "setStatus": setStatus(request.statusText || ""); break;
    case "set_editor_text": $("prompt").value = request.text; break;
    default: break;
  }
}

// ------------------------------------------------------------ start

export const page = {
  state, command, api, rename, newSession, exportCurrent: () => exportRow({ id: state.sessionId, live: true }),
  stick: () => follower.toEnd(), rebuildFrom: (messages) => { state.messages = messages; rebuild(); },
  refreshState: () => command("get_state").then(applyState),
};

function start() {
  follower = new Follower($("messages"), $("jump-latest"));
  state.token = readToken();
  if (!state.token) {
    setStatus("no token: open the address pi serve printed");
    return;
  }
  initSessions({ open: openRow, rename: renameRow, exportRow, remove: removeRow });
  initArtifacts((path) => api("GET", `/api/sessions/${encodeURIComponent(state.sessionId)}/file?path=${encodeURIComponent(path)}`, null, true));
  initComposer(page);
  initSettings(api, () => state.cwd);
  initTree(page);
  $("abort").addEventListener("click", () => command("abort").catch(() => {}));
  $("new-session").addEventListener("click", newSession);
  $("model").addEventListener("change", (event) => {
    const [provider, ...rest] = event.target.value.split("/");
    command("set_model", { provider, modelId: rest.join("/") }).then((model) => { state.model = model; renderModels(); refreshStats(); });
  });
  $("thinking").addEventListener("change", (event) => {
    command("set_thinking_level", { level: event.target.value }).then(() => page.refreshState()).catch(() => {});
  });
  document.addEventListener("keydown", (event) => {
    trapFocus(event);
    if (event.key !== "Escape") return;
    if (cancelDialog()) return;
    if (settingsOpen()) closeSettings();
    else if (treeOpen()) { if (!clearTreeSearch()) closeTree(); }
    else if (document.body.classList.contains("drawer-open")) setDrawer(false);
    else if (state.isStreaming || treeBusy()) command("abort").catch(() => {});
  });
  setInterval(() => state.online && loadSessions(), 15000); // sessions other clients open
  loadSessions().then(() => {
    const remembered = sessionStorage.getItem("pi-session");
    const rows = getRows();
    const row = rows.find((r) => r.id === remembered) || rows.find((r) => r.live);
    if (row) reopen(row);
    else setOnline(true);
  });
}

start();
