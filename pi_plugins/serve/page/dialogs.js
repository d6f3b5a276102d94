/* Dialogs: a plugin's (confirm, select, input, editor, over the socket) and the page's
 * own questions (rename, delete), one at a time, answered by click or keyboard (Enter
 * answers, Escape cancels, Tab stays inside). */

import { $, button, el } from "./dom.js";

const queue = [];
let open = null; // { request, answer(value|null) }

/** Show ``request`` ({method, title, message, options, placeholder, prefill, timeout}); its
 * ``answer`` gets {confirmed}|{value}|{cancelled:true}, or null when it timed out or went. */
export function showDialog(request, answer) {
  queue.push({ request, answer });
  if (!open) next();
}

function next() {
  open = queue.shift() || null;
  const backdrop = $("dialog-backdrop");
  if (!open) { backdrop.hidden = true; $("dialog").replaceChildren(); return; }
  const { request } = open;
  const box = $("dialog");
  box.replaceChildren();
  box.dataset.method = request.method;
  box.appendChild(el("h2", null, request.title));
  box.setAttribute("aria-label", request.title);
  if (request.message) box.appendChild(el("p", null, request.message));
  const actions = el("div", "actions");
  const add = (text, testid, value) => actions.appendChild(button(text, testid, () => settle(value())));
  let focus;
  if (request.method === "confirm") {
    add("No", "dialog-no", () => ({ confirmed: false }));
    focus = add("Yes", "dialog-yes", () => ({ confirmed: true }));
  } else if (request.method === "select") {
    for (const option of request.options || []) add(option, "dialog-option", () => ({ value: option }));
    add("Cancel", "dialog-cancel", () => ({ cancelled: true }));
    focus = actions.firstElementChild;
  } else {
    const field = el(request.method === "editor" ? "textarea" : "input");
    field.dataset.testid = "dialog-input";
    if (request.method === "editor") field.rows = 8;
    field.value = request.prefill || "";
    field.placeholder = request.placeholder || "";
    box.appendChild(field);
    add("Cancel", "dialog-cancel", () => ({ cancelled: true }));
    add("OK", "dialog-ok", () => ({ value: field.value }));
    field.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (request.method !== "editor" || event.ctrlKey)) {
        event.preventDefault();
        settle({ value: field.value });
      }
    });
    focus = field;
  }
  box.appendChild(actions);
  backdrop.hidden = false;
  setTimeout(() => focus?.focus(), 0);
  const shown = open;
  if (request.timeout) setTimeout(() => open === shown && settle(null), request.timeout);
}

function settle(value) {
  const current = open;
  if (!current) return;
  open = null;
  current.answer(value);
  next();
}

/** Escape: the open dialog cancelled; true if there was one. */
export function cancelDialog() {
  if (!open) return false;
  settle(open.request.method === "confirm" ? { confirmed: false } : { cancelled: true });
  return true;
}

/** Every dialog gone unanswered (the page attaches to another session). */
export function clearDialogs() {
  queue.length = 0;
  open = null;
  next();
}

/** The page's own question, as a promise of the typed value (null: cancelled). */
export function ask(title, prefill, message) {
  return new Promise((resolve) => showDialog({ method: "input", title, prefill, message },
    (answer) => resolve(answer && "value" in answer ? answer.value : null)));
}

/** The page's own yes/no question. */
export function confirmAsk(title, message) {
  return new Promise((resolve) => showDialog({ method: "confirm", title, message },
    (answer) => resolve(Boolean(answer && answer.confirmed))));
}

/** Tab and Shift+Tab cycle inside the open modal (a dialog, the settings, the tree). */
export function trapFocus(event) {
  if (event.key !== "Tab") return;
  const modal = [["dialog-backdrop", "dialog"], ["settings-backdrop", "settings"], ["tree-backdrop", "tree-box"]]
    .find(([backdrop]) => !$(backdrop).hidden);
  if (!modal) return;
  const box = $(modal[1]);
  const items = [...box.querySelectorAll("button, input, textarea, select, [tabindex='0']")].filter((n) => !n.disabled);
  if (!items.length) return;
  const first = items[0], last = items[items.length - 1];
  if (event.shiftKey && document.activeElement === first) { event.preventDefault(); last.focus(); }
  else if (!event.shiftKey && document.activeElement === last) { event.preventDefault(); first.focus(); }
  else if (!box.contains(document.activeElement)) { event.preventDefault(); first.focus(); }
}
