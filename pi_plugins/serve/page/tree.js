/* The session as a tree (`/tree`, or the header's Tree button): every entry of the file
 * in order, a branch indented under the entry it leaves, the current branch marked, as
 * pi's /tree shows it; choosing an entry (click, or ↑/↓ and Enter) moves there as pi's
 * /tree does: pi's question about summarizing the branch left behind first, then the
 * server's ``navigate_tree``; a user message goes to its parent and comes back into the
 * prompt box to edit. Every client then shows the conversation at the new leaf. */

import { $, button, el, toast } from "./dom.js";
import { ask, showDialog } from "./dialogs.js";
import { textOf } from "./render.js";

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

function describe(entry) {
  if (entry.type === "message") {
    const m = entry.message || {};
    const text = textOf(m.content).replace(/\s+/g, " ").trim();
    if (m.role === "toolResult") return { kind: "tool", text: `${m.toolName}: ${text}` };
    const calls = (Array.isArray(m.content) ? m.content : []).filter((b) => b.type === "toolCall").map((b) => `→ ${b.name}`);
    return { kind: m.role, text: text || calls.join(" ") || "(empty)" };
  }
  if (entry.type === "compaction") return { kind: "note", text: "[compaction]" };
  if (entry.type === "branch_summary") return { kind: "note", text: "[branch summary]" };
  if (entry.type === "model_change") return { kind: "note", text: `[model: ${entry.provider}/${entry.modelId}]` };
  if (entry.type === "thinking_level_change") return { kind: "note", text: `[thinking: ${entry.thinkingLevel}]` };
  return null;
}

/** The ids on the way from a root to ``leafId``. */
function currentPath(roots, leafId) {
  const parent = new Map();
  const stack = roots.map((node) => [node, null]);
  while (stack.length) {
    const [node, up] = stack.pop();
    parent.set(node.entry.id, up);
    for (const child of node.children) stack.push([child, node.entry.id]);
  }
  const path = new Set();
  for (let id = leafId; id; id = parent.get(id)) path.add(id);
  return path;
}

function showTree(data) {
  const list = el("ol", "tree");
  list.dataset.testid = "tree";
  list.setAttribute("role", "listbox");
  list.setAttribute("aria-label", "Entries (Enter goes there)");
  const onPath = currentPath(data.tree, data.leafId);
  const stack = [...data.tree].reverse().map((node) => [node, 0]);
  let focus = null;
  while (stack.length) {
    const [node, depth] = stack.pop();
    const shown = describe(node.entry);
    if (shown) {
      const li = el("li", `tree-${shown.kind}`);
      li.dataset.testid = "tree-entry";
      li.dataset.id = node.entry.id;
      li.setAttribute("role", "option");
      li.tabIndex = -1;
      li.style.paddingLeft = `${depth * 16 + 6}px`;
      if (onPath.has(node.entry.id)) li.classList.add("on-path");
      if (node.entry.id === data.leafId) { li.classList.add("leaf"); li.setAttribute("aria-selected", "true"); focus = li; }
      li.append(el("span", "tree-role", shown.kind), el("span", "tree-text", shown.text.slice(0, 160)));
      if (node.label) li.appendChild(el("span", "tree-label", node.label));
      li.addEventListener("click", () => choose(node.entry.id, data));
      list.appendChild(li);
    }
    const branches = node.children.length > 1 ? 1 : 0;
    for (const child of [...node.children].reverse()) stack.push([child, depth + branches]);
  }
  focus ||= list.lastElementChild;
  if (focus) focus.tabIndex = 0;
  list.addEventListener("keydown", (event) => onKey(event, list, data));
  const box = $("tree-box");
  box.replaceChildren(el("h2", null, "Session tree"),
    el("p", "tree-hint", "↑↓ move · Enter go there · Esc close"), list, el("div", "actions"));
  const close = button("Close", "tree-close", closeTree);
  box.lastElementChild.appendChild(close);
  $("tree-backdrop").hidden = false;
  (focus || close).focus();
  focus?.scrollIntoView({ block: "nearest" });
}

function onKey(event, list, data) {
  const items = [...list.children];
  const at = items.indexOf(document.activeElement);
  if (at < 0) return;
  let next = null;
  if (event.key === "ArrowDown") next = items[Math.min(at + 1, items.length - 1)];
  else if (event.key === "ArrowUp") next = items[Math.max(at - 1, 0)];
  else if (event.key === "Home") next = items[0];
  else if (event.key === "End") next = items[items.length - 1];
  else if (event.key === "Enter" || event.key === " ") { event.preventDefault(); choose(items[at].dataset.id, data); return; }
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

async function choose(entryId, data) {
  closeTree(false);
  if (entryId === data.leafId) { toast("Already at this point"); $("prompt").focus(); return; }
  const choice = data.skipSummaryPrompt ? { summarize: false, instructions: null } : await summaryChoice();
  if (!choice) { showTree(data); return; } // as pi: backing out shows the tree again
  if (choice.summarize) {
    summarizing = true;
    $("status").textContent = "summarizing branch… (Esc to cancel)";
    $("abort").disabled = false;
  }
  try {
    const moved = await page.command("navigate_tree", { entryId, ...choice });
    if (moved.cancelled) { toast("Navigation cancelled", "warning"); return; }
    const box = $("prompt");
    if (moved.editorText && !box.value.trim()) box.value = moved.editorText;
    toast("Navigated to the selected point");
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
  $("tree-box").replaceChildren();
  if (refocus) $("prompt").focus();
}
