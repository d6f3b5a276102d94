/* Small DOM helpers shared by the page's modules: building elements, toasts, copying. */

export const $ = (id) => document.getElementById(id);

/** A new ``tag`` element with ``className`` and, if given, ``text`` as its text node. */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A ``<button type=button>`` that runs ``onClick``; ``testid`` names it for tests. */
export function button(text, testid, onClick, title) {
  const node = el("button", null, text);
  node.type = "button";
  if (testid) node.dataset.testid = testid;
  if (title) { node.title = title; node.setAttribute("aria-label", title); }
  node.addEventListener("click", onClick);
  return node;
}

export function toast(text, level) {
  const node = el("div", `toast ${level || "info"}`, text);
  node.setAttribute("role", level === "error" ? "alert" : "status");
  $("toasts").appendChild(node);
  setTimeout(() => node.remove(), 5000);
}

/** ``text`` onto the clipboard (the API where the page is a secure context, else the
 * old copy command), then ``done`` on the button that asked for it. */
export async function copyText(text, from) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = el("textarea");
    area.value = text;
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  if (from) {
    from.dataset.label = "Copied";
    setTimeout(() => { from.dataset.label = "Copy"; }, 1200);
  }
}

/** A copy button for ``text()``: its label is drawn by CSS, so it is no part of the
 * message's text (a copy of the page's text, a screen reader's reading of the message). */
export function copyButton(testid, text, title) {
  const node = button("", testid, (event) => copyText(text(), event.currentTarget), title);
  node.classList.add("copy");
  node.dataset.label = "Copy";
  return node;
}

/** A file download of ``blob`` named ``name``. */
export function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = el("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
