/* The page side of javascript_repl (pi web-ui's JavaScript REPL): the server sends a
 * browser_tool_request to this page alone; its code runs in a hidden
 * <iframe sandbox="allow-scripts" src="/artifact"> (never allow-same-origin: an opaque
 * origin that cannot reach the page, its storage or its token; the frame's policy lets it
 * reach no network at all), as the body of an async function. What it logs, the value it
 * returns or the error it throws go back as the browser_tool_result command, with the
 * files it handed to returnDownloadableFile(fileName, content, mimeType?) (pi web-ui's:
 * a string, an object as JSON, a Blob or bytes with their MIME type) in base64. The
 * files the user attached in the session are there too, as pi web-ui's listAttachments(),
 * readTextAttachment(id) and readBinaryAttachment(id). A
 * browser_tool_cancel (the timeout, an abort) removes the frame, and the code with it. */

import { el } from "./dom.js";

const running = new Map(); // request id -> stop(answer|null)

/** The frame's document: console captured, the code run, one message to the page. The
 * code travels as a JSON string inside the script, its "<" escaped so it cannot end it. */
function documentFor(code, attachments) {
  const json = (value) => JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
  const literal = json(code);
  return `<!doctype html><meta charset="utf-8"><body><script>
(() => {
  const logs = [];
  const attached = ${json(attachments.map(({ id, fileName, mimeType, size, base64 }) => ({ id, fileName, mimeType, size, base64 })))};
  const bytesOf = (id) => {
    const found = attached.find((a) => a.id === id);
    if (!found) throw new Error("Attachment not found: " + id);
    return Uint8Array.from(atob(found.base64), (c) => c.charCodeAt(0));
  };
  window.listAttachments = () => attached.map(({ id, fileName, mimeType, size }) => ({ id, fileName, mimeType, size }));
  window.readBinaryAttachment = (id) => bytesOf(id);
  window.readTextAttachment = (id) => new TextDecoder().decode(bytesOf(id));
  let settled = false;
  const show = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof Error) return String(v.stack || v);
    if (typeof v === "object" && v !== null) { try { return JSON.stringify(v, null, 2); } catch { return String(v); } }
    return String(v);
  };
  const files = [], pending = [];
  const base64 = (bytes) => {
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(text);
  };
  const needType = (what) => new Error("returnDownloadableFile: MIME type is required for " + what
    + " content. Please provide a mimeType parameter (e.g., 'image/png').");
  window.returnDownloadableFile = (fileName, content, mimeType) => {
    const work = (async () => {
      let bytes, type;
      if (content instanceof Blob) {
        if (!mimeType && !content.type) throw needType("Blob");
        bytes = new Uint8Array(await content.arrayBuffer()); type = mimeType || content.type;
      } else if (content instanceof Uint8Array || content instanceof ArrayBuffer) {
        if (!mimeType) throw needType("Uint8Array");
        bytes = new Uint8Array(content); type = mimeType;
      } else if (typeof content === "string") {
        bytes = new TextEncoder().encode(content); type = mimeType || "text/plain";
      } else {
        bytes = new TextEncoder().encode(JSON.stringify(content, null, 2)); type = mimeType || "application/json";
      }
      files.push({ fileName: String(fileName), mimeType: String(type), contentBase64: base64(bytes) });
    })();
    pending.push(work.catch(() => {}));
    return work;
  };
  const done = (m) => {
    if (settled) return;
    settled = true;
    Promise.all(pending).then(() => parent.postMessage({ piRepl: true, console: logs, files, ...m }, "*"));
  };
  const failed = (e) => done({ error: { message: String(e && e.message !== undefined ? e.message : e), stack: String((e && e.stack) || "") } });
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    const original = console[level].bind(console);
    console[level] = (...args) => { logs.push({ type: level, text: args.map(show).join(" ") }); original(...args); };
  }
  addEventListener("unhandledrejection", (event) => failed(event.reason));
  let run;
  try { run = new (Object.getPrototypeOf(async function () {}).constructor)(${literal}); }
  catch (e) { failed(e); return; }
  run().then((value) => done(value === undefined ? {} : { returnText: show(value) }), failed);
})();
</script>`;
}

/** The returned files as sent: past ``limit`` bytes in all (the server's cap), a file
 * goes without its content, marked ``omitted``, so the server names it instead of the
 * connection failing under a frame too big. */
function withinLimit(files, limit) {
  if (!Array.isArray(files)) return [];
  let total = 0;
  return files.map((file) => {
    const size = Math.floor(String(file.contentBase64 || "").length * 3 / 4);
    if (typeof limit === "number" && total + size > limit) return { fileName: file.fileName, mimeType: file.mimeType, omitted: true };
    total += size;
    return file;
  });
}

/** Run ``request`` (a browser_tool_request) and answer it through ``command``. */
export function runRequest(request, command, attachments = []) {
  const code = request.arguments && typeof request.arguments.code === "string" ? request.arguments.code : "";
  const frame = el("iframe", "repl-frame");
  frame.setAttribute("sandbox", "allow-scripts"); // never allow-same-origin
  frame.hidden = true;
  frame.tabIndex = -1;
  frame.dataset.testid = "repl-frame";
  frame.dataset.request = request.id;
  frame.title = "JavaScript REPL";
  const source = documentFor(code, attachments);
  // the server stops a call at timeoutMs; this is the page's own backstop, a little later
  const backstop = setTimeout(() => stop(null), (request.timeoutMs || 30000) + 5000);
  const listen = (event) => {
    if (event.source !== frame.contentWindow) return;
    if (event.data === "pi-artifact-ready") frame.contentWindow.postMessage(source, "*"); // opaque origin: "*"
    else if (event.data && event.data.piRepl === true) stop(event.data);
  };
  function stop(answer) {
    if (!running.has(request.id)) return;
    running.delete(request.id);
    clearTimeout(backstop);
    removeEventListener("message", listen);
    frame.remove(); // the code goes with its frame
    if (answer) {
      const { console: logs, returnText, error, files } = answer;
      command("browser_tool_result", {
        requestId: request.id, console: Array.isArray(logs) ? logs : [], files: withinLimit(files, request.filesLimit),
        ...(typeof returnText === "string" ? { returnText } : {}), ...(error ? { error } : {}),
      }).catch(() => {}); // timed out or aborted meanwhile: the server has answered already
    }
  }
  running.set(request.id, stop);
  addEventListener("message", listen);
  frame.src = "/artifact";
  document.body.appendChild(frame);
}

/** The server gave up on ``id`` (timeout, abort): drop its frame, send nothing. */
export function cancelRequest(id) {
  running.get(id)?.(null);
}

/** The connection went or the page left its session: every frame goes. */
export function cancelAll() {
  for (const stop of [...running.values()]) stop(null);
}

/** What this page offers to run, said after each connect. */
export function offerTools(command) {
  return command("offer_browser_tools", { tools: ["javascript_repl"] }).catch(() => {});
}
