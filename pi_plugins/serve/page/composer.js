/* The prompt box: Enter sends (steers while a turn runs; Alt+Enter queues a follow-up),
 * ↑/↓ walk the prompts sent before, the page's slash commands run here (with completion,
 * together with the session's own: plugins, templates, skills), and files come in by the
 * button, a paste or a drop: images go to the model as images, text files as text; a
 * document (PDF, Word, Excel) opens in the document viewer, and the model is told its
 * name (its bytes stay in the page, where javascript_repl's code can read them, as it can
 * every file attached: ./attachment_store.js). */

import { $, el, toast } from "./dom.js";
import { openTree } from "./tree.js";
import { openAttachedDocument } from "./artifacts.js";
import { base64Of, documentKind, documentRefusal } from "./documents.js";
import { keepAttachments } from "./attachment_store.js";

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];
const HISTORY_KEY = "pi-prompt-history";
const MAX_TEXT_FILE = 512 * 1024;

let page;
let history = [];
let historyAt = -1;
let attachments = []; // {name, image?: {type, data, mimeType}, text?, document?: File}
let serverCommands = [];
let choices = [];
let chosen = 0;

/** The page's own commands: what each does in the page. */
const LOCAL = {
  name: { description: "Name the session (as pi -r lists it)", run: (arg) => (arg ? page.rename(arg) : toast("Usage: /name <name>", "warning")) },
  new: { description: "Start a new session", run: () => page.newSession() },
  compact: { description: "Compact the context (optional instructions)", run: (arg) => page.command("compact", arg ? { customInstructions: arg } : {}) },
  model: { description: "Switch model: /model <provider/id or part of it>", run: (arg) => switchModel(arg) },
  thinking: { description: `Thinking level: ${LEVELS.join(", ")}`, run: (arg) => setThinking(arg) },
  export: { description: "Download the session as HTML", run: () => page.exportCurrent() },
  tree: { description: "Show the session's tree and go to another point in it", run: () => openTree() },
};

export function initComposer(app) {
  page = app;
  try { history = JSON.parse(localStorage.getItem(HISTORY_KEY) || "[]"); } catch { history = []; }
  const box = $("prompt");
  $("composer").addEventListener("submit", (event) => { event.preventDefault(); submit(); });
  box.addEventListener("keydown", onKey);
  box.addEventListener("input", complete);
  box.addEventListener("paste", (event) => {
    const files = [...(event.clipboardData?.files || [])];
    if (files.length) { event.preventDefault(); addFiles(files); }
  });
  $("attach").addEventListener("click", () => $("file-input").click());
  $("file-input").addEventListener("change", (event) => { addFiles([...event.target.files]); event.target.value = ""; });
  const main = $("main");
  main.addEventListener("dragover", (event) => { event.preventDefault(); main.classList.add("dropping"); });
  main.addEventListener("dragleave", () => main.classList.remove("dropping"));
  main.addEventListener("drop", (event) => {
    event.preventDefault();
    main.classList.remove("dropping");
    addFiles([...(event.dataTransfer?.files || [])]);
  });
}

function onKey(event) {
  const box = event.currentTarget;
  if (!$("completions").hidden) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      chosen = (chosen + (event.key === "ArrowDown" ? 1 : choices.length - 1)) % choices.length;
      drawChoices();
      return;
    }
    const exact = choices.some((c) => box.value === `/${c.name}`);
    if (event.key === "Tab" || (event.key === "Enter" && !exact)) {
      event.preventDefault();
      accept(choices[chosen]);
      return;
    }
    if (event.key === "Escape") { event.stopPropagation(); hideChoices(); return; }
  }
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit(event.altKey ? "followUp" : "steer");
  } else if (event.key === "ArrowUp" && box.selectionStart === 0 && box.selectionEnd === 0 && history.length) {
    event.preventDefault();
    historyAt = Math.min(historyAt + 1, history.length - 1);
    box.value = history[history.length - 1 - historyAt];
  } else if (event.key === "ArrowDown" && historyAt >= 0 && box.selectionStart === box.value.length) {
    event.preventDefault();
    historyAt -= 1;
    box.value = historyAt >= 0 ? history[history.length - 1 - historyAt] : "";
  }
}

function remember(text) {
  if (history[history.length - 1] !== text) history.push(text);
  history = history.slice(-100);
  historyAt = -1;
  try { localStorage.setItem(HISTORY_KEY, JSON.stringify(history)); } catch { /* full: not kept */ }
}

async function submit(behavior) {
  const box = $("prompt");
  const text = box.value;
  if (!text.trim() && !attachments.length) return;
  if (!page.state.ws || page.state.ws.readyState !== WebSocket.OPEN) {
    toast("Not connected: the message stays in the box and can be sent once the page is back.", "warning");
    return;
  }
  hideChoices();
  remember(text);
  const slash = /^\/(\S+)\s*([\s\S]*)$/.exec(text.trim());
  if (slash && LOCAL[slash[1]] && !attachments.length) {
    box.value = "";
    try { await LOCAL[slash[1]].run(slash[2].trim()); } catch (error) { toast(`/${slash[1]}: ${error.message}`, "error"); }
    return;
  }
  const files = attachments;
  let kept;
  try {
    kept = keepAttachments(page.state.sessionId, await Promise.all(files.map(recordOf)));
  } catch (error) {
    toast(`Attachments: ${error.message}`, "error");
    return;
  }
  const fields = { message: text + files.filter((f) => f.text !== undefined)
    .map((f) => `\n\n<file name="${f.name}">\n${f.text}\n</file>`).join("")
    + files.map((f, i) => [f, kept[i]]).filter(([f]) => f.document)
      .map(([f, record]) => `\n\n[The user attached ${f.name} (${f.document.size} bytes): it is shown to them in the `
        + `page's document viewer and its content is not included here; javascript_repl's code can read it with `
        + `readBinaryAttachment("${record.id}")]`).join("") };
  const images = files.filter((f) => f.image).map((f) => f.image);
  if (images.length) fields.images = images;
  if (page.state.isStreaming) fields.streamingBehavior = behavior || "steer";
  box.value = "";
  setAttachments([]);
  page.stick(); // sending is wanting to see the answer
  page.command("prompt", fields).catch(() => { box.value = text; setAttachments(files); });
}

// ------------------------------------------------------------ slash commands

async function switchModel(arg) {
  const models = page.state.models;
  const wanted = (arg || "").toLowerCase();
  const found = models.find((m) => `${m.provider}/${m.id}`.toLowerCase() === wanted)
    || models.find((m) => `${m.provider}/${m.id}`.toLowerCase().includes(wanted));
  if (!wanted || !found) {
    toast(`Models: ${models.map((m) => `${m.provider}/${m.id}`).join(", ") || "none"}`, wanted ? "warning" : "info");
    return;
  }
  await page.command("set_model", { provider: found.provider, modelId: found.id });
  await page.refreshState();
}

async function setThinking(arg) {
  if (!LEVELS.includes(arg)) { toast(`Usage: /thinking ${LEVELS.join("|")}`, "warning"); return; }
  await page.command("set_thinking_level", { level: arg });
  await page.refreshState();
}

async function complete() {
  const value = $("prompt").value;
  const match = /^\/(\S*)$/.exec(value);
  if (!match) { hideChoices(); return; }
  if (!serverCommands.length && page.state.ws) {
    try { serverCommands = (await page.command("get_commands")).commands; } catch { serverCommands = []; }
  }
  const all = [...Object.entries(LOCAL).map(([name, c]) => ({ name, description: c.description })), ...serverCommands];
  choices = all.filter((c) => c.name.startsWith(match[1]));
  chosen = 0;
  if (!choices.length) { hideChoices(); return; }
  drawChoices();
}

function drawChoices() {
  const list = $("completions");
  list.replaceChildren();
  choices.forEach((c, i) => {
    const li = el("li", i === chosen ? "chosen" : null);
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", String(i === chosen));
    li.dataset.testid = "completion";
    li.append(el("b", null, `/${c.name}`), document.createTextNode(c.description ? ` ${c.description}` : ""));
    li.addEventListener("mousedown", (event) => { event.preventDefault(); accept(c); });
    list.appendChild(li);
  });
  list.hidden = false;
}

function hideChoices() { $("completions").hidden = true; }

function accept(choice) {
  $("prompt").value = `/${choice.name} `;
  hideChoices();
  $("prompt").focus();
}

// ------------------------------------------------------------ attachments

/** An attachment as javascript_repl's code reads it: {fileName, mimeType, size, base64}. */
async function recordOf(file) {
  if (file.image) {
    return { fileName: file.name, mimeType: file.image.mimeType, size: Math.floor(file.image.data.length * 3 / 4), base64: file.image.data };
  }
  if (file.document) {
    const buffer = await file.document.arrayBuffer();
    return { fileName: file.name, mimeType: file.document.type || "application/octet-stream", size: buffer.byteLength, base64: base64Of(buffer) };
  }
  const bytes = new TextEncoder().encode(file.text || "");
  return { fileName: file.name, mimeType: file.mimeType || "text/plain", size: bytes.length, base64: base64Of(bytes.buffer) };
}

function readAs(file, how) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    if (how === "data") reader.readAsDataURL(file); else reader.readAsText(file);
  });
}

async function addFiles(files) {
  const added = [];
  for (const file of files) {
    try {
      if (documentKind(file.name)) {
        const refused = documentRefusal(file.name, file.size);
        if (refused) throw new Error(refused);
        added.push({ name: file.name, document: file });
        openAttachedDocument(file);
      } else if (file.type.startsWith("image/")) {
        const url = await readAs(file, "data");
        added.push({ name: file.name, image: { type: "image", data: url.slice(url.indexOf(",") + 1), mimeType: file.type } });
      } else if (file.size <= MAX_TEXT_FILE) {
        const text = await readAs(file, "text");
        if (text.includes("\u0000")) throw new Error("not a text file");
        added.push({ name: file.name, text, mimeType: file.type || "text/plain" });
      } else {
        throw new Error(`larger than ${MAX_TEXT_FILE / 1024} KB`);
      }
    } catch (error) {
      toast(`${file.name}: ${error.message}`, "error");
    }
  }
  setAttachments([...attachments, ...added]);
}

function setAttachments(list) {
  attachments = list;
  const holder = $("attachments");
  holder.replaceChildren();
  holder.hidden = !list.length;
  list.forEach((file, i) => {
    const chip = el("span", "chip");
    chip.dataset.testid = "attachment";
    if (file.image) {
      const img = el("img");
      img.alt = file.name;
      img.src = `data:${file.image.mimeType};base64,${file.image.data}`;
      chip.appendChild(img);
    }
    chip.appendChild(el("span", null, file.name));
    if (file.document) {
      const open = el("button", "chip-open", "Open");
      open.type = "button";
      open.dataset.testid = "attachment-open";
      open.title = `Show ${file.name} in the document viewer`;
      open.addEventListener("click", () => openAttachedDocument(file.document));
      chip.appendChild(open);
    }
    const remove = el("button", null, "×");
    remove.type = "button";
    remove.title = `Remove ${file.name}`;
    remove.setAttribute("aria-label", remove.title);
    remove.addEventListener("click", () => setAttachments(attachments.filter((_, j) => j !== i)));
    chip.appendChild(remove);
    holder.appendChild(chip);
  });
}
