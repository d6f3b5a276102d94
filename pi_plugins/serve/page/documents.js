/* Document artifacts (PDF, Word, Excel): files the agent made in the session's folder,
 * fetched from the server by path and shown read-only in the same sandboxed frame as the
 * other kinds. The libraries that read them (vendored in ./vendor) are fetched only when
 * the first such artifact opens, and run in the frame, never in the page. */

const KINDS = { pdf: "pdf", docx: "docx", xlsx: "xlsx", xls: "xlsx" };
const EXTENSION = /\.(pdf|docx|xlsx|xls)$/i;
//: the libraries each kind needs, in order, and whether each is an ES module
const LIBRARIES = {
  pdf: [["vendor/pdf.worker.min.mjs", true], ["vendor/pdf.min.mjs", true]],
  docx: [["vendor/mammoth.browser.min.js", false]],
  xlsx: [["vendor/read-excel-file.min.js", false]],
};
const STYLE = `body{margin:0;font:15px/1.5 system-ui,sans-serif;color:#222;background:#eee}
#view{padding:8px}.error{color:#a00;background:#fff;border:1px solid #d88;padding:12px;margin:8px;font-weight:600;overflow-wrap:anywhere}
.note{color:#555;margin:8px}.page{position:relative;margin:0 auto 8px;background:#fff;box-shadow:0 1px 3px #0004}
.page canvas{position:absolute;inset:0;width:100%;height:100%}
.textLayer{position:absolute;inset:0;overflow:clip;line-height:1;text-align:initial;transform-origin:0 0;z-index:0;
--min-font-size:1;--text-scale-factor:calc(var(--total-scale-factor)*var(--min-font-size));--min-font-size-inv:calc(1/var(--min-font-size))}
.textLayer :is(span,br){color:transparent;position:absolute;white-space:pre;cursor:text;transform-origin:0% 0%}
.textLayer>:not(.markedContent),.textLayer .markedContent span:not(.markedContent){z-index:1;--font-height:0;
font-size:calc(var(--text-scale-factor)*var(--font-height));--scale-x:1;--rotate:0deg;
transform:rotate(var(--rotate)) scaleX(var(--scale-x)) scale(var(--min-font-size-inv))}
.textLayer .markedContent{display:contents}
.docx{background:#fff;padding:16px 24px;max-width:900px;margin:0 auto;overflow-wrap:anywhere}.docx img{max-width:100%}
.docx table,.sheet table{border-collapse:collapse}.docx td,.docx th{border:1px solid #ccc;padding:4px}
.sheet{background:#fff;padding:8px 12px;margin-bottom:8px}.sheet h2{font-size:16px;margin:4px 0 8px}
.table-wrap{overflow:auto}.sheet td{border:1px solid #ddd;padding:2px 6px;white-space:nowrap}.sheet td.number{text-align:right}`;

const texts = new Map();

function asset(path) { // fetched once per page, and again after a failure
  if (!texts.has(path)) {
    texts.set(path, fetch(`/assets/${path}`).then((r) => {
      if (!r.ok) throw new Error(`${path}: ${r.status}`);
      return r.text();
    }).catch((error) => { texts.delete(path); throw error; }));
  }
  return texts.get(path);
}

/** The artifact kind of a file at ``path`` (pdf, docx or xlsx), or null. */
export function documentKind(path) {
  const match = EXTENSION.exec(String(path || "").trim());
  return match ? KINDS[match[1].toLowerCase()] : null;
}

/** The server's cap on a document (``files.MAX_DOCUMENT_BYTES``), kept here too. */
export const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024;

/** Why a document named ``name`` of ``size`` bytes is not shown (the server's /file
 * refusals, for one the user attached), or null. */
export function documentRefusal(name, size) {
  if (!documentKind(name)) return `not a document artifact (only .pdf, .docx, .xlsx, .xls)`;
  if (size > MAX_DOCUMENT_BYTES) {
    return `${size.toLocaleString("en")} bytes; documents are shown up to ${MAX_DOCUMENT_BYTES.toLocaleString("en")}`;
  }
  return null;
}

/** Whether ``text`` names a document file: one word ending in a document extension. */
export function namesDocument(text) {
  return /^[^\s<>"'`]+$/.test(text) && documentKind(text) !== null;
}

export function base64Of(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function bytesOf(base64) {
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

/** What the source view shows of a binary document: its name, type and size, and its
 * first 4 KiB as a hex dump (the whole file is a download away). */
export function hexDump(a, limit = 4096) {
  const bytes = bytesOf(a.code.slice(0, Math.ceil(limit / 3) * 4));
  const lines = [`${a.path} — ${a.lang}, ${a.size.toLocaleString("en")} bytes; a binary file: its first ${Math.min(limit, a.size).toLocaleString("en")} bytes in hexadecimal (Download for the whole file)`, ""];
  for (let at = 0; at < Math.min(limit, bytes.length); at += 16) {
    const row = bytes.subarray(at, at + 16);
    const hex = [...row].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = [...row].map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${at.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join("\n");
}

/** The frame's document for the document artifact ``a``: the viewer script with the
 * bytes and the libraries' text, as JSON (``<`` escaped, so nothing closes its script). */
export async function documentPage(a) {
  const [viewer, ...libraries] = await Promise.all([asset("document_view.js"),
    ...LIBRARIES[a.kind].map(([path]) => asset(path))]);
  const data = { kind: a.kind, name: a.path, data: a.code,
    libraries: libraries.map((text, i) => ({ text, module: LIBRARIES[a.kind][i][1] })) };
  const json = JSON.stringify(data).replace(/</g, "\\u003c");
  return `<!doctype html><meta charset="utf-8"><style>${STYLE}</style><main id="view"><p class="note">Loading ${a.path.replace(/[&<>"]/g, "")}…</p></main>`
    + `<script>window.PI_DOCUMENT = ${json};</script><script>${viewer.replace(/<\/script/gi, "<\\/script")}</script>`;
}
