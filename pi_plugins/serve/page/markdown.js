/* The model's Markdown as DOM: parsed by marked (GitHub's flavour: tables, task lists,
 * strikethrough), cleaned by DOMPurify, code highlighted by highlight.js (all three
 * vendored in ./vendor, see its README). HTML the model writes is shown as the text it
 * is, never parsed; DOMPurify is the second wall, for links and anything marked builds.
 * Each code block gets its language, a copy button and, for html/svg, an "open" control
 * that shows it as an artifact; so does a `report.pdf` (.docx, .xlsx, .xls) the answer
 * names in inline code, or a Markdown link to one on this machine ([the report](out/r.pdf),
 * a file:// address): the file, fetched from the session's folder (the server's /file
 * refuses what is outside it, too big or of another kind, and the viewer says why). */

import { Marked } from "./vendor/marked.esm.js";
import DOMPurify from "./vendor/purify.esm.js";
import hljs from "./vendor/highlight.min.js";
import { button, copyButton, el } from "./dom.js";
import { documentKind, namesDocument } from "./documents.js";

const ARTIFACT_LANGS = new Map([["html", "html"], ["xhtml", "html"], ["svg", "svg"],
  ["markdown", "markdown"], ["md", "markdown"]]);
const SAFE_URL = /^(?:https?:|mailto:|#)/i;

const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The path a link's address names if it is a document on this machine (a relative or
 * absolute path, or a file:// address, ending in .pdf, .docx, .xlsx or .xls), else null. */
export function localDocument(href) {
  let path = String(href || "").trim();
  if (/^file:/i.test(path)) {
    try { path = new URL(path).pathname; } catch { return null; }
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith("//")) {
    return null; // http(s), mailto, data: … are links, not local files
  }
  path = path.replace(/[?#].*$/, "");
  try { path = decodeURIComponent(path); } catch { return null; }
  return path && documentKind(path) ? path : null;
}

const marked = new Marked({
  gfm: true,
  renderer: {
    html({ text }) { return escapeHtml(text); }, // the model's HTML, as text
    checkbox({ checked }) { return `<span class="task" data-done="${checked}">${checked ? "☑" : "☐"}</span> `; },
    link({ href, tokens }) { // a local document: a control that opens it (see renderMarkdown)
      const path = localDocument(href);
      if (!path) return false; // marked's own link
      return `<span class="document-link" data-document="${escapeHtml(path)}">${this.parser.parseInline(tokens)}</span>`;
    },
    image({ href, text }) { // no remote images (nor tracking pixels): a link to it
      return SAFE_URL.test(href || "") ? `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>` : escapeHtml(text || "");
    },
  },
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

const PURIFY = {
  RETURN_DOM_FRAGMENT: true,
  FORBID_TAGS: ["style", "img", "form", "button", "iframe", "svg", "math"],
  FORBID_ATTR: ["style"],
  ALLOWED_URI_REGEXP: SAFE_URL,
};

function languageOf(code) {
  const match = /(?:^|\s)language-([\w+#.-]+)/.exec(code.className);
  return match ? match[1].toLowerCase() : "";
}

function decorateCode(pre, options) {
  const code = pre.querySelector("code") || pre;
  const source = code.textContent.replace(/\n$/, "");
  const lang = languageOf(code);
  if (lang && hljs.getLanguage(lang)) {
    // highlight.js escapes the text it wraps in its spans
    code.innerHTML = hljs.highlight(source, { language: lang, ignoreIllegals: true }).value;
    code.classList.add("hljs");
  }
  const wrap = el("div", "code-block");
  const head = el("div", "code-head");
  head.appendChild(el("span", "code-lang", lang || "text")).dataset.testid = "code-lang";
  const kind = ARTIFACT_LANGS.get(lang) || (lang === "xml" && /<svg[\s>]/i.test(source) ? "svg" : null);
  if (kind && options.onArtifact && options.complete !== false) {
    head.appendChild(button("Open", "artifact-open", () => options.onArtifact(source, kind, lang),
      "Show this in a sandboxed frame"));
  }
  head.appendChild(copyButton("copy-code", () => source, "Copy the code"));
  pre.replaceWith(wrap);
  wrap.append(head, pre);
}

/** The Markdown ``text`` as a DocumentFragment; ``options.onArtifact(code, kind, lang)``
 * is called by a block's "open" control; ``options.complete`` is false while streaming. */
export function renderMarkdown(text, options = {}) {
  const html = marked.parse(String(text ?? ""), { async: false });
  const fragment = DOMPurify.sanitize(html, PURIFY);
  // a link whose address DOMPurify refused (javascript:, data:) is its text alone
  for (const a of [...fragment.querySelectorAll("a:not([href])")]) a.replaceWith(...a.childNodes);
  for (const pre of [...fragment.querySelectorAll("pre")]) decorateCode(pre, options);
  for (const span of [...fragment.querySelectorAll("span.document-link[data-document]")]) {
    const path = span.dataset.document;
    if (!options.onArtifact || options.complete === false) { span.replaceWith(...span.childNodes); continue; }
    const open = button("", "document-link", () => options.onArtifact(path, "file"));
    open.className = "document-link";
    open.title = `Show ${path} in a sandboxed frame`;
    open.append(...span.childNodes);
    span.replaceWith(open);
  }
  if (options.onArtifact && options.complete !== false) {
    for (const code of [...fragment.querySelectorAll(":not(pre) > code")]) {
      const path = code.textContent.trim();
      if (namesDocument(path)) {
        code.after(button("Open", "document-open", () => options.onArtifact(path, "file"), `Show ${path} in a sandboxed frame`));
      }
    }
  }
  for (const table of [...fragment.querySelectorAll("table")]) {
    const scroller = el("div", "table-wrap"); // a wide table scrolls, the page does not
    table.replaceWith(scroller);
    scroller.appendChild(table);
  }
  return fragment;
}
