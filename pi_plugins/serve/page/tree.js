/* The session as a tree (`/tree`, or the header's Tree button): every entry of the file
 * in order, a branch indented under the entry it leaves, the current branch marked, as
 * pi's /tree shows it; choosing an entry (click, or ↑/↓ and Enter) moves there as pi's
 * /tree does: pi's question about summarizing the branch left behind first, then the
 * server's ``navigate_tree``; a user message goes to its parent and comes back into the
 * prompt box to edit; where checkpoints are on and files changed since, the chat's
 * question whether to restore them too. Every client then shows the conversation at the
 * new leaf. pi's filters (the buttons, or pi's keys) choose what is listed; Shift+L or
 * an entry's "label" button sets or clears its label, which every client sees. */

import { $, button, el, toast } from "./dom.js";
import { ask, showDialog } from "./dialogs.js";
import { describe, FILTERS, treeRows } from "./tree_rows.js";

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

/** The view's state while open: the tree's data, the filter, the entry focused. */
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

function showTree(data, focusId = null, mode = view?.mode || data.filterMode || "default") {
  view = { data, mode };
  const list = el("ol", "tree");
  list.dataset.testid = "tree";
  list.dataset.filter = mode;
  list.setAttribute("role", "listbox");
  list.setAttribute("aria-label", `Entries, filter ${mode} (Enter goes there, Shift+L labels)`);
  let focus = null, here = null;
  for (const row of treeRows(data.tree, data.leafId, mode)) {
    const { node } = row;
    const shown = describe(node.entry);
    const li = el("li", `tree-${shown.kind}`);
    li.dataset.testid = "tree-entry";
    li.dataset.id = node.entry.id;
    li.setAttribute("role", "option");
    li.tabIndex = -1;
    li.style.paddingLeft = `${row.depth * 16 + 6}px`;
    if (row.onPath) li.classList.add("on-path");
    if (row.here) { li.classList.add("leaf"); li.setAttribute("aria-selected", "true"); here = li; }
    if (node.entry.id === focusId) focus = li;
    li.append(el("span", "tree-role", shown.kind));
    if (node.label) li.appendChild(el("span", "tree-label", node.label));
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
  const empty = list.children.length ? [] : [el("p", "tree-empty", `No entries match the ${mode} filter`)];
  box.replaceChildren(el("h2", null, "Session tree"), filterBar(mode),
    el("p", "tree-hint", "↑↓ move · Enter go there · Shift+L label · d t u l a filter · o cycle · Esc close"),
    list, ...empty, el("div", "actions"));
  const close = button("Close", "tree-close", closeTree);
  box.lastElementChild.appendChild(close);
  $("tree-backdrop").hidden = false;
  if (focus) { focus.focus(); focus.scrollIntoView({ block: "nearest" }); } else close.focus();
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

/** pi's filter keys (Ctrl+D/T/U/L/A, Ctrl+O and Shift+Ctrl+O to cycle), also without
 * Ctrl, as the browser keeps some of those for itself (Ctrl+T, a new tab). A letter
 * toggles its filter back to default, as in pi. */
const FILTER_KEYS = { d: "default", t: "no-tools", u: "user-only", l: "labeled-only", a: "all" };

function filterKey(event) {
  if (event.altKey || event.metaKey) return false;
  const key = event.key.toLowerCase();
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
  else if (event.key === "Enter" || event.key === " ") { event.preventDefault(); choose(items[at].dataset.id, data); return; }
  else if (event.key === "L" && event.shiftKey && !event.ctrlKey) { event.preventDefault(); editLabel(items[at].dataset.id); return; }
  else if (filterKey(event)) { event.preventDefault(); return; }
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

export function treeOpen() { return !$("tree-backdrop").hidden; }

export function closeTree(refocus = true) {
  $("tree-backdrop").hidden = true;
  view = null;
  $("tree-box").replaceChildren();
  if (refocus) $("prompt").focus();
}
