/* The rows the tree view lists under a filter, as the chat's /tree lists them (pi's
 * filters: default, no-tools, user-only, labeled-only, all): an entry the filter hides
 * gives its place to its shown children, so the listing stays a tree; a branch is
 * indented one step under the entry it leaves. Pure functions over ``get_tree``'s data. */

import { textOf } from "./render.js";

/** pi's ``treeFilterMode`` values, in the order Ctrl+O (or O) cycles them. */
export const FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"];
const BOOKKEEPING = new Set(["label", "custom", "model_change", "thinking_level_change", "session_info"]);
const KEEPS_EMPTY = new Set(["error", "aborted", "length"]);

function oneLine(text) { return String(text || "").replace(/\s+/g, " ").trim(); }

/** How an entry is listed: its kind (a CSS class) and one line of text. */
export function describe(entry) {
  const m = entry.type === "message" ? entry.message || {} : null;
  if (m) {
    const text = oneLine(textOf(m.content));
    if (m.role === "toolResult") return { kind: "tool", text: `${m.toolName}: ${text}` };
    const calls = (Array.isArray(m.content) ? m.content : []).filter((b) => b.type === "toolCall").map((b) => `→ ${b.name}`);
    return { kind: m.role, text: text || calls.join(" ") || "(empty)" };
  }
  switch (entry.type) {
    case "compaction": return { kind: "note", text: "[compaction]" };
    case "branch_summary": return { kind: "note", text: "[branch summary]" };
    case "model_change": return { kind: "note", text: `[model: ${entry.provider}/${entry.modelId}]` };
    case "thinking_level_change": return { kind: "note", text: `[thinking: ${entry.thinkingLevel}]` };
    case "label": return { kind: "note", text: `[label: ${entry.label || "(cleared)"}]` };
    case "session_info": return { kind: "note", text: `[name: ${entry.name || ""}]` };
    case "custom": return { kind: "note", text: `[custom: ${entry.customType}]` };
    case "custom_message": return { kind: "custom", text: `[${entry.customType}]: ${oneLine(textOf(entry.content))}` };
    default: return { kind: "note", text: `[${entry.type}]` };
  }
}

/** Whether ``node`` is listed under ``mode`` (the chat's rule, tree_view.shown). */
export function shown(node, mode, leafId) {
  const entry = node.entry;
  const m = entry.type === "message" ? entry.message || {} : null;
  if (m && m.role === "assistant" && entry.id !== leafId && !oneLine(textOf(m.content)) && !KEEPS_EMPTY.has(m.stopReason)) {
    return false; // only tool calls: the tool rows stand for it
  }
  if (mode === "all") return true;
  if (mode === "user-only") return Boolean(m && m.role === "user");
  if (mode === "labeled-only") return node.label != null;
  if (BOOKKEEPING.has(entry.type)) return false;
  if (mode === "no-tools") return !(m && m.role === "toolResult");
  return true;
}

/** ``[{node, depth, onPath, here}]`` top to bottom, in file order (iterative: a session
 * may be thousands of entries deep). ``here`` is the leaf, or its nearest listed
 * ancestor when the filter hides the leaf (a label just set is the leaf, for one). */
export function treeRows(roots, leafId, mode) {
  const parent = new Map(); // id -> the parent node (null for a root)
  const byId = new Map();
  const stack = roots.map((node) => [node, null]);
  while (stack.length) {
    const [node, up] = stack.pop();
    parent.set(node.entry.id, up);
    byId.set(node.entry.id, node);
    for (const child of node.children) stack.push([child, node]);
  }
  const visible = (node) => shown(node, mode, leafId);
  const onPath = new Set();
  let here = null;
  for (let node = byId.get(leafId); node; node = parent.get(node.entry.id)) {
    onPath.add(node.entry.id);
    if (here === null && visible(node)) here = node.entry.id;
  }
  const visibleChildren = (children) => {
    const found = [];
    const pending = [...children].reverse();
    while (pending.length) {
      const child = pending.pop();
      if (visible(child)) found.push(child);
      else pending.push(...[...child.children].reverse());
    }
    return found;
  };
  const rows = [];
  const walk = visibleChildren(roots).reverse().map((node) => [node, 0]);
  while (walk.length) {
    const [node, depth] = walk.pop();
    const id = node.entry.id;
    rows.push({ node, depth, onPath: onPath.has(id), here: id === here });
    const children = visibleChildren(node.children);
    const step = children.length > 1 ? 1 : 0;
    for (const child of children.reverse()) walk.push([child, depth + step]);
  }
  return rows;
}
