/* Runs inside an artifact's sandboxed frame, never in the page: shows a PDF, Word or Excel
 * document read-only. The page writes this script into the frame with the document's
 * bytes (base64) and the text of the libraries its kind needs (vendored in ./vendor),
 * in window.PI_DOCUMENT; the libraries run here as inline scripts, which the frame's
 * policy allows and the page's does not. Anything that fails is said in the frame. */

(() => {
  const doc = window.PI_DOCUMENT;
  const view = document.getElementById("view");
  const MAX_PAGES = 1000; // drawn as they come near the view, so a long one costs what is seen
  const MAX_ROWS = 2000;

  function load({ text, module }) { // one library; resolves once it has run
    return new Promise((resolve, reject) => {
      const key = `piLoaded${Math.random().toString(36).slice(2)}`;
      const failed = (event) => { removeEventListener("error", failed); reject(event.error || new Error(event.message)); };
      window[key] = () => { removeEventListener("error", failed); delete window[key]; resolve(); };
      addEventListener("error", failed);
      const script = document.createElement("script");
      if (module) script.type = "module";
      script.textContent = `${text}\n;window[${JSON.stringify(key)}]();`;
      document.head.appendChild(script);
    });
  }

  const node = (tag, className, text) => {
    const n = document.createElement(tag);
    if (className) n.className = className;
    if (text !== undefined) n.textContent = text;
    return n;
  };

  async function showPdf(bytes) {
    const lib = globalThis.pdfjsLib; // its worker's handler is in globalThis.pdfjsWorker: no Worker needed
    const pdf = await lib.getDocument({ data: bytes, isEvalSupported: false }).promise;
    view.replaceChildren();
    const width = Math.min(document.documentElement.clientWidth - 16, 900);
    const draw = async (sheet, page, viewport) => { // a page's pixels and text, once it comes near the view
      const canvas = node("canvas");
      const ratio = window.devicePixelRatio || 1;
      canvas.width = Math.floor(viewport.width * ratio);
      canvas.height = Math.floor(viewport.height * ratio);
      const text = node("div", "textLayer");
      text.style.setProperty("--total-scale-factor", String(viewport.scale));
      sheet.append(canvas, text);
      await page.render({ canvas, canvasContext: canvas.getContext("2d"), viewport,
        transform: ratio === 1 ? undefined : [ratio, 0, 0, ratio, 0, 0] }).promise;
      await new lib.TextLayer({ textContentSource: page.streamTextContent(), container: text, viewport }).render();
      sheet.dataset.drawn = "true";
    };
    const pending = new Map();
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting || !pending.has(entry.target)) continue;
        const [page, viewport] = pending.get(entry.target);
        pending.delete(entry.target);
        observer.unobserve(entry.target);
        draw(entry.target, page, viewport).catch((error) => {
          entry.target.appendChild(node("p", "error", `Page ${entry.target.dataset.page}: ${error.message || error}`));
        });
      }
    }, { rootMargin: "400px" });
    for (let n = 1; n <= Math.min(pdf.numPages, MAX_PAGES); n++) {
      const page = await pdf.getPage(n);
      const viewport = page.getViewport({ scale: width / page.getViewport({ scale: 1 }).width });
      const sheet = node("div", "page");
      sheet.dataset.page = String(n);
      sheet.style.width = `${viewport.width}px`;
      sheet.style.height = `${viewport.height}px`;
      view.appendChild(sheet);
      if (n === 1) await draw(sheet, page, viewport); // the first at once: an unreadable page fails the whole
      else { pending.set(sheet, [page, viewport]); observer.observe(sheet); }
    }
    if (pdf.numPages > MAX_PAGES) view.appendChild(node("p", "note", `The first ${MAX_PAGES} of ${pdf.numPages} pages; download it for the rest.`));
  }

  async function showDocx(bytes) {
    const result = await globalThis.mammoth.convertToHtml({ arrayBuffer: bytes.buffer });
    const body = node("article", "docx");
    body.innerHTML = result.value; // mammoth's own HTML: the document's text escaped, its images as data: URLs
    for (const a of body.querySelectorAll("a[href]")) {
      if (!/^(?:https?:|mailto:|#)/i.test(a.getAttribute("href"))) a.removeAttribute("href");
    }
    view.replaceChildren(body);
    if (!body.textContent.trim() && !body.querySelector("img")) view.appendChild(node("p", "note", "This document has no text."));
  }

  function cellText(value) {
    if (value === null || value === undefined) return "";
    if (value instanceof Date) return value.toISOString().replace(/T00:00:00\.000Z$/, "");
    return String(value);
  }

  async function showSheets(bytes) {
    if (bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0) {
      throw new Error("this is an Excel 97-2003 workbook (.xls, a binary format); the page reads .xlsx workbooks only. Download it, or save it as .xlsx");
    }
    const sheets = await globalThis.readXlsxFile(new Blob([bytes]));
    view.replaceChildren();
    for (const { sheet, data } of sheets) {
      const section = node("section", "sheet");
      section.appendChild(node("h2", null, sheet));
      const table = node("table");
      for (const row of data.slice(0, MAX_ROWS)) {
        const tr = node("tr");
        for (const value of row) tr.appendChild(node("td", typeof value === "number" ? "number" : null, cellText(value)));
        table.appendChild(tr);
      }
      const scroller = node("div", "table-wrap");
      scroller.appendChild(table);
      section.appendChild(scroller);
      if (data.length > MAX_ROWS) section.appendChild(node("p", "note", `The first ${MAX_ROWS} of ${data.length} rows.`));
      if (!data.length) section.appendChild(node("p", "note", "An empty sheet."));
      view.appendChild(section);
    }
  }

  const SHOW = { pdf: showPdf, docx: showDocx, xlsx: showSheets };
  const NAMES = { pdf: "PDF", docx: "Word document", xlsx: "Excel workbook" };

  (async () => {
    try {
      for (const library of doc.libraries) await load(library);
      const bytes = Uint8Array.from(atob(doc.data), (c) => c.charCodeAt(0));
      await SHOW[doc.kind](bytes);
      document.body.dataset.state = "shown";
    } catch (error) {
      const message = node("p", "error", `Cannot show ${doc.name} as a ${NAMES[doc.kind]}: ${(error && error.message) || error}`);
      message.setAttribute("role", "alert");
      view.replaceChildren(message);
      document.body.dataset.state = "error";
    }
  })();
})();
