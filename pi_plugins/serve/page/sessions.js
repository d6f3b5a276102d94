/* The session list: named as `pi -r` names them (the name given, else the first
 * message), searchable, walked with the arrow keys (Enter opens, F2 renames, Delete
 * deletes), with rename, export and delete on each row; a drawer on narrow screens. */

import { $, button, el } from "./dom.js";

let rows = [];
let currentId = null;
let handlers = null;

/** ``on``: {open(row), rename(row), exportRow(row), remove(row)}. */
export function initSessions(on) {
  handlers = on;
  $("session-search").addEventListener("input", draw);
  $("session-search").addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") { event.preventDefault(); $("sessions").querySelector("li")?.focus(); }
  });
  $("sessions").addEventListener("keydown", onKey);
  $("sessions-toggle").addEventListener("click", () => setDrawer(!document.body.classList.contains("drawer-open")));
  $("drawer-backdrop").addEventListener("click", () => setDrawer(false));
}

export function setDrawer(open) {
  document.body.classList.toggle("drawer-open", open);
  $("sessions-toggle").setAttribute("aria-expanded", String(open));
  if (open) ($("sessions").querySelector("li.current") || $("session-search")).focus();
}

export function sessionTitle(row) {
  return row.name || row.firstMessage || "(no messages)";
}

export function setRows(list) { rows = list; draw(); }
export function getRows() { return rows; }
export function setCurrent(id) { currentId = id; draw(); }

function matches(row, query) {
  if (!query) return true;
  const haystack = `${row.name || ""} ${row.firstMessage || ""} ${row.cwd} ${row.id}`.toLowerCase();
  return query.toLowerCase().split(/\s+/).every((word) => haystack.includes(word));
}

function draw() {
  const list = $("sessions");
  const focused = document.activeElement?.closest?.("#sessions li")?.dataset.id;
  const query = $("session-search").value.trim();
  list.replaceChildren();
  for (const row of rows.filter((r) => matches(r, query))) list.appendChild(rowNode(row));
  const current = list.querySelector("li.current") || list.querySelector("li");
  if (current) current.tabIndex = 0;
  if (focused) list.querySelector(`li[data-id="${CSS.escape(focused)}"]`)?.focus();
}

function rowNode(row) {
  const li = el("li");
  li.dataset.id = row.id;
  li.tabIndex = -1;
  li.setAttribute("role", "option");
  li.setAttribute("aria-selected", String(row.id === currentId));
  if (row.id === currentId) li.className = "current";
  const name = el("span", "name", sessionTitle(row));
  name.dataset.testid = "session-name";
  const meta = el("span", "meta", `${row.cwd.split("/").pop() || row.cwd} · ${row.messageCount} messages · ${new Date(row.modified).toLocaleString()}`);
  if (row.live) meta.appendChild(el("span", "live", " ● live"));
  const actions = el("span", "row-actions");
  const act = (text, testid, title, run) => actions.appendChild(button(text, testid, (event) => {
    event.stopPropagation();
    run(row);
  }, title));
  act("✎", "session-rename", "Rename", handlers.rename);
  act("⤓", "session-export", "Export as HTML", handlers.exportRow);
  act("✕", "session-delete", "Delete", handlers.remove);
  for (const b of actions.children) b.tabIndex = -1;
  li.append(name, meta, actions);
  li.title = `${sessionTitle(row)}\n${row.id}\n${row.path}`;
  li.addEventListener("click", () => handlers.open(row));
  return li;
}

function onKey(event) {
  const li = event.target.closest("li");
  if (!li) return;
  const row = rows.find((r) => r.id === li.dataset.id);
  const move = (to) => {
    if (!to) return;
    event.preventDefault();
    li.tabIndex = -1;
    to.tabIndex = 0;
    to.focus();
  };
  switch (event.key) {
    case "ArrowDown": move(li.nextElementSibling); break;
    case "ArrowUp": if (li.previousElementSibling) move(li.previousElementSibling); else { event.preventDefault(); $("session-search").focus(); } break;
    case "Home": move(li.parentElement.firstElementChild); break;
    case "End": move(li.parentElement.lastElementChild); break;
    case "Enter": case " ": event.preventDefault(); handlers.open(row); break;
    case "F2": event.preventDefault(); handlers.rename(row); break;
    case "Delete": event.preventDefault(); handlers.remove(row); break;
    default: break;
  }
}
