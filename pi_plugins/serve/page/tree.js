/* The session as a tree (`/tree`, or the header's Tree button): every entry of the file,
 * a branch indented under the entry it leaves, the current branch first and marked, as
 * pi's /tree shows it; choosing an entry (click, or ↑/↓ and Enter) moves there as pi's
 * /tree does: pi's question about summarizing the branch left behind first, then the
 * server's ``navigate_tree``; a user message goes to its parent and comes back into the
 * prompt box to edit; where checkpoints are on and files changed since, the chat's
 * question whether to restore them too. Every client then shows the conversation at the
 * new leaf. pi's filters (the buttons, or Alt/Ctrl and pi's letters) choose what is
 * listed; typing searches; Ctrl+←/→ fold and unfold a branch segment (or jump between
 * segments); Shift+T shows the labels' times; Shift+L or an entry's "label" button sets
 * or clears its label, which every client sees. */

import { $, button, el, toast } from "./dom.js";
import { ask, showDialog } from "./dialogs.js";
import { describe, FILTERS, foldable, labelTime, segmentStart, treeRows } from "./tree_rows.js";

const SUMMARY_CHOICES = { "No summary": "none", "Summarize": "summary", "Summarize with custom prompt": "custom" };
let page;
let summarizing = false;

/** A branch summary is being written (Escape or Abort stops it, as in pi). */
export function treeBusy() { return summarizing; }

export function initTree(app) {
  page = app;
  $("open-tree").addEventListener("click", openTree);
}

/** Fetch the tree and show it. */
export async function openTree() {
  try { showTree(await page.command("get_tree")); } catch (error) { toast(`Tree: ${error.message}`, "error"); }
}

/** The view's state while open: the tree's data, the filter, the search, the folded
 * entries, whether labels show their times, the rows listed. */
let view = null;

function filterBar(mode) {
  const bar = el("div", "tree-filters");
  bar.setAttribute("role", "group");
  bar.setAttribute("aria-label", "Filter");
  for (const name of FILTERS) {
    const chip = button(name, "tree-filter", () => setFilter(name));
    chip.dataset.mode = name;
    chip.setAttribute("aria-pressed", String(name === mode));
    bar.appendChild(chip);
  }
  return bar;
}

function searchField(query) {
  const field = el("input", "tree-search");
  field.type = "search";
  field.value = query;
  field.placeholder = "Type to search";
  field.setAttribute("aria-label", "Search entries");
  field.dataset.testid = "tree-search";
  field.addEventListener("input", () => { view.query = field.value; showTree(view.data, focusedId(), view.mode, true); });
  field.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "Enter") {
      event.preventDefault();
      const list = $("tree-box").querySelector(".tree");
      (list.querySelector('[tabindex="0"]') || list.firstElementChild)?.focus();
    }
  });
  return field;
}

function showTree(data, focusId = null, mode = view?.mode || data.filterMode || "default", inSearch = false) {
  const kept = view && view.data ? view : { query: "", folded: new Set(), times: false };
  view = { data, mode, query: kept.query, folded: kept.folded, times: kept.times };
  const list = el("ol", "tree");
  list.dataset.testid = "tree";
  list.dataset.filter = mode;
  list.setAttribute("role", "listbox");
  list.setAttribute("aria-label",
    `Entries, filter ${mode} (Enter goes there, type to search, Ctrl+←/→ fold, Shift+L labels, Shift+T label times)`);
  const rows = treeRows(data.tree, data.leafId, mode, { query: view.query, folded: view.folded });
  const byId = new Map(rows.map((row) => [row.node.entry.id, row]));
  view.rows = rows;
  let focus = null, here = null;
  for (const row of rows) {
    const { node } = row;
    const shown = describe(node.entry);
    const li = el("li", `tree-${shown.kind}`);
    li.dataset.testid = "tree-entry";
    li.dataset.id = node.entry.id;
    li.setAttribute("role", "option");
    li.tabIndex = -1;
    li.style.paddingLeft = `${row.depth * 16 + 18}px`; // room for the fold mark on the left
    const canFold = foldable(row, byId);
    if (row.onPath) li.classList.add("on-path");
    if (row.here) { li.classList.add("leaf"); li.setAttribute("aria-selected", "true"); here = li; }
    if (node.entry.id === focusId) focus = li;
    if (row.folded || canFold) {
      li.dataset.fold = row.folded ? "folded" : "open";
      li.setAttribute("aria-expanded", String(!row.folded));
      // as the chat draws it: ⊞ on a folded row, ⊟ where a branch starts (not on a root)
      if (row.folded || row.parentId) li.appendChild(el("span", "tree-fold", row.folded ? "⊞" : "⊟"));
    }
    li.append(el("span", "tree-role", shown.kind));
    if (node.label) li.appendChild(el("span", "tree-label", node.label));
    if (node.label && view.times && node.labelTimestamp) {
      li.appendChild(el("span", "tree-label-time", labelTime(node.labelTimestamp)));
    }
    li.appendChild(el("span", "tree-text", shown.text.slice(0, 160)));
    const edit = button("label", "tree-label-edit", (event) => { event.stopPropagation(); editLabel(node.entry.id); },
      "Label this entry (Shift+L)");
    edit.tabIndex = -1;
    li.appendChild(edit);
    li.addEventListener("click", () => choose(node.entry.id, data));
    list.appendChild(li);
  }
  view.hereId = here?.dataset.id || null;
  focus ||= here || list.lastElementChild;
  if (focus) focus.tabIndex = 0;
  list.addEventListener("keydown", (event) => onKey(event, list, data));
  const box = $("tree-box");
  const why = view.query ? `No entries match “${view.query}”` : `No entries match the ${mode} filter`;
  const empty = list.children.length ? [] : [el("p", "tree-empty", why)];
  const field = searchField(view.query);
  box.replaceChildren(el("h2", null, "Session tree"), filterBar(mode), field,
    el("p", "tree-hint",
      "↑↓ move · Enter go there · type to search · Ctrl+←/→ fold · Shift+L label · Shift+T times · Alt+D/T/U/L/A filter · Alt+O cycle · Esc close"),
    list, ...empty, el("div", "actions"));
  const close = button("Close", "tree-close", closeTree);
  box.lastElementChild.appendChild(close);
  $("tree-backdrop").hidden = false;
  if (inSearch) { field.focus(); field.setSelectionRange(field.value.length, field.value.length); }
  else if (focus) { focus.focus(); focus.scrollIntoView({ block: "nearest" }); } else close.focus();
  if (inSearch && focus) focus.scrollIntoView({ block: "nearest" });
}

/** The focused entry's id, to keep it focused when the listing changes. */
function focusedId() {
  const node = document.activeElement;
  return node && node.dataset && node.dataset.testid === "tree-entry" ? node.dataset.id : null;
}

function setFilter(mode) {
  if (!view) return;
  showTree(view.data, focusedId(), mode);
}

/** pi's filter keys, Ctrl+D/T/U/L/A, Ctrl+O and Shift+Ctrl+O to cycle, also with Alt,
 * as the browser keeps some Ctrl ones for itself (Ctrl+T, a new tab) and bare letters
 * search. A letter toggles its filter back to default, as in pi. */
const FILTER_KEYS = { d: "default", t: "no-tools", u: "user-only", l: "labeled-only", a: "all" };

function filterKey(event) {
  if (event.metaKey || !(event.altKey || event.ctrlKey)) return false;
  const key = (event.code.startsWith("Key") ? event.code.slice(3) : event.key).toLowerCase();
  const mode = view.mode;
  if (key === "o") {
    const step = event.shiftKey ? -1 : 1;
    setFilter(FILTERS[(FILTERS.indexOf(mode) + step + FILTERS.length) % FILTERS.length]);
    return true;
  }
  if (event.shiftKey || !(key in FILTER_KEYS)) return false;
  const chosen = FILTER_KEYS[key];
  setFilter(chosen !== "default" && chosen === mode ? "default" : chosen);
  return true;
}

/** Ctrl+← folds the focused segment, else goes to its start; Ctrl+→ unfolds, else on
 * (the chat's fold keys; not while searching, as in pi). */
function foldKey(event, at) {
  if (!(event.ctrlKey || event.altKey) || (event.key !== "ArrowLeft" && event.key !== "ArrowRight")) return false;
  if (view.query) return true;
  const rows = view.rows;
  const row = rows[at];
  const byId = new Map(rows.map((r) => [r.node.entry.id, r]));
  const id = row.node.entry.id;
  if (event.key === "ArrowLeft" && !row.folded && foldable(row, byId)) view.folded.add(id);
  else if (event.key === "ArrowRight" && row.folded) view.folded.delete(id);
  else { moveTo(rows[segmentStart(rows, at, event.key === "ArrowLeft" ? "up" : "down")].node.entry.id); return true; }
  showTree(view.data, id, view.mode);
  return true;
}

function moveTo(id) {
  const list = $("tree-box").querySelector(".tree");
  const next = list.querySelector(`li[data-id="${CSS.escape(id)}"]`);
  if (!next) return;
  for (const item of list.children) item.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
  next.scrollIntoView({ block: "nearest" });
}

/** Typing searches, as in pi's /tree: a printable key (Backspace takes one back). */
function searchKey(event) {
  if (event.ctrlKey || event.altKey || event.metaKey) return false;
  if (event.key === "Backspace") {
    if (!view.query) return false;
    view.query = view.query.slice(0, -1);
  } else if (event.key.length === 1) {
    view.query += event.key;
  } else {
    return false;
  }
  showTree(view.data, focusedId(), view.mode);
  return true;
}

/** Set or clear (an empty answer) the entry's label: a ``label`` entry in the session
 * file, as pi's /tree writes it; every client of the session sees it. */
async function editLabel(entryId) {
  const node = findNode(view.data.tree, entryId);
  const current = node?.label || "";
  const mode = view.mode;
  $("tree-backdrop").hidden = true;
  const text = await ask("Label", current, "Empty clears the label");
  if (text !== null) {
    try {
      const done = await page.command("set_label", { entryId, label: text });
      toast(done.label ? `Labelled: ${done.label}` : "Label cleared");
    } catch {
      // shown as the command's error
    }
  }
  try {
    showTree(await page.command("get_tree"), entryId, mode);
  } catch (error) {
    toast(`Tree: ${error.message}`, "error");
    closeTree();
  }
}

function findNode(roots, id) {
  const stack = [...roots];
  while (stack.length) {
    const node = stack.pop();
    if (node.entry.id === id) return node;
    stack.push(...node.children);
  }
  return null;
}

/** Another client changed the tree (a label, a move): the open view shows it. */
export async function treeChanged() {
  if (!treeOpen() || !view) return;
  const keep = focusedId(), mode = view.mode;
  try { showTree(await page.command("get_tree"), keep, mode); } catch { /* the next open fetches it */ }
}

function onKey(event, list, data) {
  const items = [...list.children];
  const at = items.indexOf(document.activeElement);
  if (at < 0) { if (filterKey(event)) event.preventDefault(); return; }
  let next = null;
  if (event.key === "ArrowDown") next = items[Math.min(at + 1, items.length - 1)];
  else if (event.key === "ArrowUp") next = items[Math.max(at - 1, 0)];
  else if (event.key === "Home") next = items[0];
  else if (event.key === "End") next = items[items.length - 1];
  else if (event.key === "Enter" || (event.key === " " && !view.query)) { event.preventDefault(); choose(items[at].dataset.id, data); return; }
  else if (event.key === "L" && event.shiftKey && !event.ctrlKey) { event.preventDefault(); editLabel(items[at].dataset.id); return; }
  else if (event.key === "T" && event.shiftKey && !event.ctrlKey && !event.altKey) {
    event.preventDefault();
    view.times = !view.times;
    showTree(view.data, items[at].dataset.id, view.mode);
    return;
  }
  else if (filterKey(event) || foldKey(event, at) || searchKey(event)) { event.preventDefault(); return; }
  if (!next) return;
  event.preventDefault();
  items[at].tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
  next.scrollIntoView({ block: "nearest" });
}

/** pi's question before leaving a branch: {summarize, instructions}, or null (backed out). */
async function summaryChoice() {
  for (;;) {
    const picked = await new Promise((resolve) => showDialog(
      { method: "select", title: "Summarize the branch you leave?", options: Object.keys(SUMMARY_CHOICES) },
      (answer) => resolve(answer && "value" in answer ? SUMMARY_CHOICES[answer.value] : null)));
    if (picked === null) return null;
    if (picked !== "custom") return { summarize: picked === "summary", instructions: null };
    const instructions = await ask("Custom summarization instructions", "");
    if (instructions !== null) return { summarize: true, instructions };
  }
}

/** Where checkpoints are on and files changed since ``entryId``, the chat's question
 * whether to put them back too: true, false, or null (backed out). */
async function restoreChoice(entryId) {
  let files = [];
  try { ({ files } = await page.command("plan_restore", { entryId })); } catch { return false; }
  if (!files.length) return false;
  const listed = files.slice(0, 4).join(", ") + (files.length > 4 ? ` and ${files.length - 4} more` : "");
  const restore = `Restore ${files.length} file${files.length === 1 ? "" : "s"}`;
  return new Promise((resolve) => showDialog(
    { method: "select", title: "Restore the files to that point too?", message: `changed since then: ${listed}`,
      options: ["Keep the files as they are", restore] },
    (answer) => resolve(answer && "value" in answer ? answer.value === restore : null)));
}

function sayRestored(moved) {
  if (moved.restoreError) { toast(`Restoring the files failed: ${moved.restoreError}`, "error"); return; }
  if (!moved.restored) return;
  const files = moved.restored.files || [];
  const listed = files.slice(0, 5).join(", ") + (files.length > 5 ? " …" : "");
  let text = `Restored ${files.length} file${files.length === 1 ? "" : "s"}${files.length ? `: ${listed}` : ""}`;
  const skipped = Object.keys(moved.restored.skipped || {});
  if (skipped.length) text += ` (left alone: ${skipped.sort().join(", ")})`;
  toast(text);
}

async function choose(entryId, data) {
  const mode = view?.mode, hereId = view?.hereId;
  closeTree(false);
  if (entryId === data.leafId || entryId === hereId) { toast("Already at this point"); $("prompt").focus(); return; }
  const choice = data.skipSummaryPrompt ? { summarize: false, instructions: null } : await summaryChoice();
  if (!choice) { showTree(data, entryId, mode); return; } // as pi: backing out shows the tree again
  const restoreFiles = await restoreChoice(entryId);
  if (restoreFiles === null) { showTree(data, entryId, mode); return; }
  if (choice.summarize) {
    summarizing = true;
    $("status").textContent = "summarizing branch… (Esc to cancel)";
    $("abort").disabled = false;
  }
  try {
    const moved = await page.command("navigate_tree", { entryId, ...choice, restoreFiles });
    if (moved.cancelled) { toast("Navigation cancelled", "warning"); return; }
    const box = $("prompt");
    if (moved.editorText && !box.value.trim()) box.value = moved.editorText;
    toast("Navigated to the selected point");
    sayRestored(moved);
  } catch {
    // the failure (an aborted summary too) was shown as the command's error
  } finally {
    summarizing = false;
    page.refreshState();
    $("prompt").focus();
  }
}

/** Escape in the tree: a search is cleared first (as in pi); true if there was one. */
export function clearTreeSearch() {
  if (!view || !view.query) return false;
  view.query = "";
  showTree(view.data, focusedId(), view.mode);
  return true;
}

export function treeOpen() { return !$("tree-backdrop").hidden; }

export function closeTree(refocus = true) {
  $("tree-backdrop").hidden = true;
  view = null;
  $("tree-box").replaceChildren();
  if (refocus) $("prompt").focus();
}
