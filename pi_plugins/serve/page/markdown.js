/* A small Markdown renderer that builds DOM nodes and never parses HTML: every piece of
 * the model's text becomes a text node (or the value of an attribute we set), so no raw
 * HTML or script from a model reaches the page. The subset: paragraphs, headings, fenced
 * code (html/svg fences get an "open" control for artifacts), lists, block quotes, rules,
 * inline code, bold, italic, and http(s)/mailto links. */
(function () {
  "use strict";

  const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^\n]*$/;
  const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
  const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const QUOTE = /^\s{0,3}>\s?(.*)$/;
  const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__|\*(?=[^\s*])([^*]*?[^\s*])\*|\[([^\]\n]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()"']+[^\s<>()"'.,;:!?])/g;
  const SAFE_URL = /^(https?:|mailto:)/i;
  const ARTIFACT_LANGS = new Set(["html", "svg", "xhtml"]);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function inline(text, into) {
    let last = 0;
    const pattern = new RegExp(INLINE.source, "g"); // its own: the calls nest
    let match;
    while ((match = pattern.exec(text)) !== null) {
      if (match.index > last) into.appendChild(document.createTextNode(text.slice(last, match.index)));
      if (match[2] !== undefined) into.appendChild(el("code", null, match[2]));
      else if (match[3] !== undefined || match[4] !== undefined) inline(match[3] ?? match[4], into.appendChild(el("strong")));
      else if (match[5] !== undefined) inline(match[5], into.appendChild(el("em")));
      else if (match[6] !== undefined) {
        if (SAFE_URL.test(match[7])) {
          const a = el("a");
          a.href = match[7];
          a.rel = "noopener noreferrer";
          a.target = "_blank";
          inline(match[6], a);
          into.appendChild(a);
        } else {
          into.appendChild(document.createTextNode(match[0]));
        }
      } else if (match[8] !== undefined) {
        const a = el("a", null, match[8]);
        a.href = match[8];
        a.rel = "noopener noreferrer";
        a.target = "_blank";
        into.appendChild(a);
      }
      last = pattern.lastIndex;
    }
    if (last < text.length) into.appendChild(document.createTextNode(text.slice(last)));
    return into;
  }

  function lines(into, textLines) {
    textLines.forEach((line, i) => {
      if (i) into.appendChild(el("br"));
      inline(line, into);
    });
    return into;
  }

  function codeBlock(code, lang, options) {
    const wrap = el("div", "code-block");
    const pre = el("pre");
    const codeNode = el("code", lang ? `language-${lang}` : null, code);
    pre.appendChild(codeNode);
    wrap.appendChild(pre);
    const kind = (lang || "").toLowerCase();
    const isArtifact = ARTIFACT_LANGS.has(kind) || (kind === "xml" && /<svg[\s>]/i.test(code));
    if (isArtifact && options.onArtifact && options.complete !== false) {
      const open = el("button", "open", "open");
      open.type = "button";
      open.dataset.testid = "artifact-open";
      open.title = "Render this in a sandboxed frame";
      open.addEventListener("click", () => options.onArtifact(code, kind === "html" || kind === "xhtml" ? "html" : "svg"));
      wrap.appendChild(open);
    }
    return wrap;
  }

  function blocks(source, options) {
    const out = document.createDocumentFragment();
    const all = source.replace(/\r\n?/g, "\n").split("\n");
    let i = 0;
    while (i < all.length) {
      const line = all[i];
      let m;
      if (!line.trim()) { i++; continue; }
      if ((m = FENCE.exec(line))) {
        const fence = m[1], lang = m[2];
        const body = [];
        i++;
        let closed = false;
        while (i < all.length) {
          const t = all[i].trim();
          if (t.startsWith(fence[0].repeat(fence.length)) && !t.replace(/[`~]/g, "").trim()) { closed = true; i++; break; }
          body.push(all[i]);
          i++;
        }
        out.appendChild(codeBlock(body.join("\n"), lang, { ...options, complete: closed || options.complete !== false }));
        continue;
      }
      if ((m = HEADING.exec(line))) {
        out.appendChild(inline(m[2], el(`h${Math.min(6, m[1].length + 2)}`)));
        i++;
        continue;
      }
      if (RULE.test(line)) { out.appendChild(el("hr")); i++; continue; }
      if (QUOTE.test(line)) {
        const body = [];
        while (i < all.length && (m = QUOTE.exec(all[i]))) { body.push(m[1]); i++; }
        const quote = el("blockquote");
        quote.appendChild(blocks(body.join("\n"), options));
        out.appendChild(quote);
        continue;
      }
      if ((m = ITEM.exec(line))) {
        const ordered = /\d/.test(m[2]);
        const list = el(ordered ? "ol" : "ul");
        if (ordered && parseInt(m[2], 10) !== 1) list.start = parseInt(m[2], 10);
        const indent = m[1].length;
        while (i < all.length) {
          const item = ITEM.exec(all[i]);
          if (!item || item[1].length !== indent || /\d/.test(item[2]) !== ordered) break;
          const body = [item[3]];
          i++;
          while (i < all.length && all[i].trim() && !ITEM.exec(all[i]) && !FENCE.exec(all[i])) { body.push(all[i].trim()); i++; }
          const li = el("li");
          // nested items (indented deeper) belong to this one
          const nested = [];
          while (i < all.length && (m = ITEM.exec(all[i])) && m[1].length > indent) { nested.push(all[i].slice(indent + 2)); i++; }
          lines(li, body);
          if (nested.length) li.appendChild(blocks(nested.join("\n"), options));
          list.appendChild(li);
          while (i < all.length && !all[i].trim() && i + 1 < all.length && ITEM.exec(all[i + 1])?.[1].length === indent) i++;
        }
        out.appendChild(list);
        continue;
      }
      const para = [];
      while (i < all.length && all[i].trim() && !FENCE.exec(all[i]) && !HEADING.exec(all[i])
             && !QUOTE.test(all[i]) && !ITEM.exec(all[i]) && !RULE.test(all[i])) { para.push(all[i]); i++; }
      out.appendChild(lines(el("p"), para));
    }
    return out;
  }

  window.PiMarkdown = {
    /** The Markdown ``text`` as DOM nodes; ``options.onArtifact(code, kind)`` is called
     * by an html/svg block's "open" control; ``options.complete`` false while streaming. */
    render(text, options) { return blocks(String(text ?? ""), options || {}); },
  };
})();
