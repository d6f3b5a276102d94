/* Artifacts: code the model wrote (HTML, SVG, Markdown), images, and documents it made
 * (PDF, Word, Excel: ./documents.js) shown beside the chat, each in
 * <iframe sandbox="allow-scripts" src="/artifact"> (never allow-same-origin: an opaque
 * origin that cannot reach the page; the frame's policy lets it reach nothing at all),
 * several per session as tabs, each with its source and a download. The source goes to
 * the frame by postMessage once the frame says it is ready. */

import { $, button, download, el } from "./dom.js";
import { base64Of, bytesOf, documentKind, documentPage, documentRefusal, hexDump } from "./documents.js";
import { renderMarkdown } from "./markdown.js";

const artifacts = []; // {code, kind, lang, title}; a document's code is its bytes in base64, with its path and size
let shown = -1;
let showSource = false;
let fetchFile = null; // (path) => Promise<Response>, from the page
const BINARY = new Set(["pdf", "docx", "xlsx"]);

const EXTENSIONS = { html: "html", svg: "svg", markdown: "md", "image/png": "png", "image/jpeg": "jpg",
  "image/gif": "gif", "image/webp": "webp" };
const TYPES = { html: "text/html", svg: "image/svg+xml", markdown: "text/markdown" };

/** ``readFile(path)``: the response of the server's ``/file`` for the current session. */
export function initArtifacts(readFile) {
  fetchFile = readFile;
  $("artifact-close").addEventListener("click", () => { $("artifact-panel").hidden = true; $("artifact-host").replaceChildren(); });
  $("artifact-source").addEventListener("click", () => { showSource = !showSource; draw(); });
  $("artifact-download").addEventListener("click", () => {
    const a = artifacts[shown];
    if (!a) return;
    const name = `artifact-${shown + 1}.${EXTENSIONS[a.kind === "image" ? a.lang : a.kind] || "txt"}`;
    if (a.raw) download(new Blob([bytesOf(a.raw.data)], { type: a.raw.mimeType }), a.raw.fileName);
    else if (BINARY.has(a.kind)) download(new Blob([bytesOf(a.code)], { type: a.lang }), a.title);
    else if (a.kind === "image") { // a data: URL (the page's policy lets it fetch its own server only)
      const bytes = Uint8Array.from(atob(a.code.slice(a.code.indexOf(",") + 1)), (c) => c.charCodeAt(0));
      download(new Blob([bytes], { type: a.lang }), name);
    } else download(new Blob([a.code], { type: TYPES[a.kind] || "text/plain" }), name);
  });
}

function titleOf(code, kind, index) {
  if (kind === "image") return `image ${index + 1}`;
  const match = /<title>([^<]{1,60})<\/title>/i.exec(code) || /^#\s+(.{1,60})$/m.exec(code);
  return match ? match[1].trim() : `${kind} ${index + 1}`;
}

const TEXT_TYPES = /^(?:text\/|application\/(?:json|xml|javascript|x-ndjson)|image\/svg\+xml)/;

/** How a file the REPL returned (``{fileName, mimeType, contentBase64}``) opens: an
 * artifact kind, or null (a download only). */
export function returnedFileKind(file) {
  const type = String(file.mimeType || "").toLowerCase();
  if (documentKind(file.fileName)) return "document";
  if (type === "image/svg+xml") return "svg";
  if (/^image\/(?:png|jpeg|gif|webp)$/.test(type)) return "image";
  if (type === "text/html") return "html";
  if (type === "text/markdown" || /\.md$/i.test(file.fileName)) return "markdown";
  return TEXT_TYPES.test(type) ? "text" : null;
}

/** The text of base64 ``data`` read as UTF-8. */
function textOfBase64(data) { return new TextDecoder().decode(bytesOf(data)); }

/** Open a file the REPL returned as the artifact its type makes it (see returnedFileKind). */
function openReturnedFile(file) {
  const kind = returnedFileKind(file);
  const raw = { fileName: file.fileName, mimeType: file.mimeType, data: file.contentBase64 };
  if (kind === "document") {
    const bytes = bytesOf(file.contentBase64);
    return showDocument(`repl:${file.fileName}:${file.contentBase64.length}`, file.fileName, file.mimeType, bytes.buffer);
  }
  if (kind === "image") return openArtifact(`data:${file.mimeType};base64,${file.contentBase64}`, "image", file.mimeType, raw);
  if (kind) return openArtifact(textOfBase64(file.contentBase64), kind, file.mimeType, raw);
  return undefined;
}

/** Show ``code`` (``kind``: html, svg, markdown, text or image), adding it to the tabs if
 * new; ``kind`` "file": ``code`` is the path of a document to fetch (see openDocument);
 * "returned": ``code`` is a file the REPL returned. ``raw``: the file it came from, which
 * names the tab and is what Download gives. */
export function openArtifact(code, kind, lang, raw = null) {
  if (kind === "file") return openDocument(code);
  if (kind === "returned") return openReturnedFile(code);
  let index = artifacts.findIndex((a) => a.code === code);
  if (index < 0) {
    artifacts.push({ code, kind, lang, raw, title: raw ? raw.fileName : titleOf(code, kind, artifacts.length) });
    index = artifacts.length - 1;
  }
  shown = index;
  showSource = false;
  $("artifact-panel").hidden = false;
  draw();
}

function showMessage(text, isError) {
  const p = el("p", isError ? "artifact-error" : "artifact-loading", text);
  if (isError) { p.setAttribute("role", "alert"); p.dataset.testid = "artifact-error"; }
  $("artifact-host").replaceChildren(p);
}

/** Fetch the document at ``path`` (PDF, DOCX, XLSX) and show it; fetched again on each
 * open, so a file the agent rewrote shows as it is now. */
async function openDocument(path) {
  $("artifact-panel").hidden = false;
  showMessage(`Loading ${path}…`);
  let buffer, type;
  try {
    const response = await fetchFile(path);
    type = response.headers.get("content-type") || "application/octet-stream";
    buffer = await response.arrayBuffer();
  } catch (error) {
    showMessage(`Cannot open ${path}: ${error.message}`, true);
    return;
  }
  showDocument(`file:${path}`, path, type, buffer);
}

/** Show a document the user attached (a File): read here, never sent to the server, with
 * the refusals of the server's /file (a document kind, at most ``MAX_DOCUMENT_BYTES``). */
export async function openAttachedDocument(file) {
  $("artifact-panel").hidden = false;
  const refused = documentRefusal(file.name, file.size);
  if (refused) { showMessage(`Cannot open ${file.name}: ${refused}`, true); return; }
  let buffer;
  try { buffer = await file.arrayBuffer(); } catch (error) { showMessage(`Cannot open ${file.name}: ${error.message}`, true); return; }
  showDocument(`attached:${file.name}:${file.size}:${file.lastModified}`, file.name, file.type || "application/octet-stream", buffer);
}

/** Show document bytes (``name`` gives the kind) as the tab ``key``, replacing its old copy. */
export function showDocument(key, name, type, buffer) {
  const title = name.split(/[\\/]/).pop();
  let index = artifacts.findIndex((a) => a.key === key);
  const entry = { key, code: base64Of(buffer), kind: documentKind(name), lang: type, title, path: name, size: buffer.byteLength };
  if (index < 0) index = artifacts.push(entry) - 1;
  else artifacts[index] = entry;
  shown = index;
  showSource = false;
  $("artifact-panel").hidden = false;
  draw();
}

function documentFor(a) {
  if (a.kind === "svg") {
    return `<!doctype html><meta charset="utf-8"><style>body{margin:0;display:grid;place-items:center;min-height:100vh}</style>${a.code}`;
  }
  if (a.kind === "image") {
    return `<!doctype html><meta charset="utf-8"><style>body{margin:0;display:grid;place-items:center;min-height:100vh;background:#fff}img{max-width:100%;max-height:100vh}</style><img alt="" src="${a.code.replace(/"/g, "&quot;")}">`;
  }
  if (a.kind === "text") { // shown as the text it is, never parsed
    const pre = el("pre", null, a.code);
    return `<!doctype html><meta charset="utf-8"><style>body{margin:12px;font:13px/1.4 ui-monospace,monospace;color:#222;background:#fff}pre{white-space:pre-wrap;overflow-wrap:anywhere}</style>${pre.outerHTML}`;
  }
  if (a.kind === "markdown") {
    const holder = el("div");
    holder.appendChild(renderMarkdown(a.code));
    return `<!doctype html><meta charset="utf-8"><style>body{font:15px/1.5 system-ui,sans-serif;margin:16px;color:#222}pre{background:#f4f4f4;padding:8px;overflow:auto}</style>${holder.innerHTML}`;
  }
  return a.code;
}

function draw() {
  const tabs = $("artifact-tabs");
  tabs.replaceChildren();
  artifacts.forEach((a, i) => {
    const tab = button(a.title, "artifact-tab", () => { shown = i; showSource = false; draw(); });
    tab.setAttribute("aria-pressed", String(i === shown));
    tabs.appendChild(tab);
  });
  const a = artifacts[shown];
  if (!a) return;
  $("artifact-source").textContent = showSource ? "Preview" : "Source";
  $("artifact-source").disabled = a.kind === "image";
  if (showSource && a.kind !== "image") {
    const pre = el("pre", "artifact-code", BINARY.has(a.kind) ? hexDump(a) : a.code);
    pre.dataset.testid = "artifact-code";
    $("artifact-host").replaceChildren(pre);
    return;
  }
  const frame = el("iframe");
  frame.setAttribute("sandbox", "allow-scripts"); // never allow-same-origin
  frame.dataset.testid = "artifact";
  frame.title = a.title;
  const source = BINARY.has(a.kind) ? documentPage(a) : Promise.resolve(documentFor(a));
  const ready = (event) => {
    if (event.source !== frame.contentWindow || event.data !== "pi-artifact-ready") return;
    removeEventListener("message", ready);
    source.then((text) => frame.contentWindow?.postMessage(text, "*"), // "*": the frame's origin is opaque
      (error) => showMessage(`Cannot show ${a.title}: ${error.message}`, true));
  };
  addEventListener("message", ready);
  frame.src = "/artifact"; // its own policy: inline script runs there, never in the page
  $("artifact-host").replaceChildren(frame);
}
