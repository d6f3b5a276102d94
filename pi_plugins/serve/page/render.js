/* One message of the session as a list entry: the user's prompt, the assistant's
 * answer (thinking, Markdown, tool calls), a tool's result (bash output, an edit's diff,
 * a read's excerpt), and the rest (summaries, custom messages). */

import { button, copyButton as copy, download, el } from "./dom.js";
import { returnedFileKind } from "./artifacts.js";
import { namesDocument } from "./documents.js";
import { renderMarkdown } from "./markdown.js";

function entry(role) {
  const li = el("li", "message");
  li.dataset.testid = "message";
  li.dataset.role = role;
  return li;
}

export function textOf(content) {
  if (typeof content === "string") return content;
  return (content || []).filter((b) => b.type === "text").map((b) => b.text).join("");
}

function copyButton(text) {
  const actions = el("div", "message-actions");
  actions.appendChild(copy("copy-message", () => text, "Copy this message"));
  return actions;
}

export function summarise(name, args) {
  if (!args || typeof args !== "object") return "";
  if (name === "bash") return args.command || "";
  if (name === "javascript_repl") return args.title || "";
  if (args.path) return args.path + (args.offset ? `:${args.offset}` : "");
  if (args.pattern) return args.pattern;
  const text = JSON.stringify(args);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

function userEntry(m) {
  const li = entry("user");
  const body = el("div", "user-text", textOf(m.content));
  li.appendChild(body);
  const images = Array.isArray(m.content) ? m.content.filter((b) => b.type === "image") : [];
  for (const image of images) {
    const img = el("img", "attached");
    img.alt = "attached image";
    img.src = `data:${image.mimeType};base64,${image.data}`;
    li.appendChild(img);
  }
  li.appendChild(copyButton(textOf(m.content)));
  return li;
}

function assistantEntry(m, complete, options) {
  const li = entry("assistant");
  for (const block of m.content || []) {
    if (block.type === "thinking" && block.thinking) {
      const details = el("details", "thinking");
      details.append(el("summary", null, "Thinking"), el("div", "thinking-text", block.thinking));
      li.appendChild(details);
    } else if (block.type === "text") {
      const body = el("div", "markdown");
      body.appendChild(renderMarkdown(block.text, { onArtifact: options.onArtifact, complete }));
      li.appendChild(body);
    } else if (block.type === "toolCall") {
      li.appendChild(el("div", "tool-call", `→ ${block.name} ${summarise(block.name, block.arguments)}`));
    }
  }
  if (!complete) li.lastElementChild?.classList.add("cursor");
  if (m.stopReason === "error" || m.stopReason === "aborted") {
    li.appendChild(el("div", "error", m.stopReason === "aborted" ? "Aborted" : `Error: ${m.errorMessage || "the request failed"}`));
  }
  const text = textOf(m.content);
  if (complete && text) li.appendChild(copyButton(text));
  return li;
}

function imagesOf(result, options) {
  const images = result && Array.isArray(result.content) ? result.content.filter((b) => b.type === "image") : [];
  return images.map((image) => {
    const url = `data:${image.mimeType};base64,${image.data}`;
    const img = el("img", "tool-image");
    img.alt = "image from the tool";
    img.src = url;
    img.dataset.testid = "tool-image";
    img.tabIndex = 0;
    img.title = "Open as an artifact";
    const open = () => options?.onArtifact?.(url, "image", image.mimeType);
    img.addEventListener("click", open);
    img.addEventListener("keydown", (event) => { if (event.key === "Enter") open(); });
    return img;
  });
}

/** The files a javascript_repl call returned (``details.files``): each with a download
 * and, where the page can show its kind, an "Open" as an artifact. */
function returnedFiles(result, options) {
  const files = result && result.details && Array.isArray(result.details.files) ? result.details.files : [];
  const valid = files.filter((f) => f && typeof f.fileName === "string" && typeof f.contentBase64 === "string");
  if (!valid.length) return [];
  const list = el("ul", "repl-files");
  for (const file of valid) {
    const item = el("li", "repl-file");
    item.dataset.testid = "repl-file";
    const size = typeof file.size === "number" ? ` · ${file.size.toLocaleString("en")} bytes` : "";
    item.append(el("span", "repl-file-name", file.fileName), el("span", "repl-file-type", ` ${file.mimeType}${size} `));
    item.appendChild(button("Download", "repl-file-download", () => {
      const bytes = Uint8Array.from(atob(file.contentBase64), (c) => c.charCodeAt(0));
      download(new Blob([bytes], { type: file.mimeType }), file.fileName);
    }, `Download ${file.fileName}`));
    if (returnedFileKind(file) && options?.onArtifact) {
      item.appendChild(button("Open", "repl-file-open", () => options.onArtifact(file, "returned"), `Show ${file.fileName} in a sandboxed frame`));
    }
    list.appendChild(item);
  }
  return [list];
}

export function toolEntry(name, args, result, isError, running, options) {
  const li = entry("tool");
  li.dataset.tool = name;
  const head = el("div", "tool-head");
  head.append(el("b", null, name), document.createTextNode(` ${summarise(name, args)}${running ? " (running…)" : ""}`));
  li.appendChild(head);
  const path = args && typeof args.path === "string" ? args.path : "";
  if (!running && !isError && namesDocument(path) && options?.onArtifact) { // a PDF, DOCX or XLSX it wrote or read
    head.append(" ", button("Open", "document-open", () => options.onArtifact(path, "file"), `Show ${path} in a sandboxed frame`));
  }
  if (name === "javascript_repl" && args && typeof args.code === "string") { // its code, folded (pi web-ui's)
    const code = el("details", "repl-code");
    code.append(el("summary", null, "Code"), el("pre", null, args.code));
    li.appendChild(code);
  }
  const diff = result && result.details && typeof result.details.diff === "string" ? result.details.diff : null;
  if (diff && !isError) {
    const pre = el("pre", "diff");
    for (const line of diff.split("\n")) {
      pre.appendChild(el("span", line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx", line || " "));
    }
    li.appendChild(pre);
  } else {
    const output = result ? textOf(result.content) : "";
    if (output || running) {
      const pre = el("pre", "output", output);
      if (isError) pre.classList.add("error");
      li.appendChild(pre);
    }
    li.append(...imagesOf(result, options), ...returnedFiles(result, options));
  }
  return li;
}

/** ``m`` as an entry (null for what is not shown); ``calls``: the tool calls by id, for
 * a result's arguments; ``complete`` false while it streams. */
export function renderMessage(m, calls, complete, options) {
  if (m.role === "user") return userEntry(m);
  if (m.role === "assistant") return assistantEntry(m, complete, options);
  if (m.role === "toolResult") {
    const call = calls.get(m.toolCallId);
    return toolEntry(m.toolName, call ? call.arguments : {}, m, m.isError, false, options);
  }
  if (m.role === "bashExecution") {
    const li = entry("tool");
    li.append(el("div", "tool-head", `$ ${m.command}`), el("pre", null, m.output || ""));
    return li;
  }
  const text = textOf(m.content) || m.summary;
  if (!text) return null;
  const li = entry("tool");
  li.appendChild(renderMarkdown(text, { onArtifact: options.onArtifact }));
  return li;
}
