/* The rows the tree view lists under a filter, as the chat's /tree lists them (pi's
 * filters: default, no-tools, user-only, labeled-only, all): an entry the filter hides
 * gives its place to its shown children, so the listing stays a tree; a branch is
 * indented one step under the entry it leaves; the current branch comes first, a search
 * narrows it, a folded segment hides its rows. Pure functions over ``get_tree``'s data. */

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

/** Whether ``node`` matches every word of a search (its label and its line). */
function matches(node, words) {
  if (!words.length) return true;
  const text = `${node.label || ""} ${describe(node.entry).text}`.toLowerCase();
  return words.every((word) => text.includes(word));
}

/** ``[{node, depth, onPath, here, parentId, childIds, folded}]`` top to bottom, as the
 * chat's /tree lists them: the branch holding the current leaf first among its siblings,
 * a search's words all in an entry's label or line, the rows under a ``folded`` one left
 * out (iterative: a session may be thousands of entries deep). ``here`` is the leaf, or
 * its nearest listed ancestor when the filter hides the leaf (a label just set is the
 * leaf, for one). */
export function treeRows(roots, leafId, mode, { query = "", folded = new Set() } = {}) {
  const parent = new Map(); // id -> the parent node (null for a root)
  const byId = new Map();
  const stack = roots.map((node) => [node, null]);
  while (stack.length) {
    const [node, up] = stack.pop();
    parent.set(node.entry.id, up);
    byId.set(node.entry.id, node);
    for (const child of node.children) stack.push([child, node]);
  }
  const words = String(query).toLowerCase().split(/\s+/).filter(Boolean);
  const visible = (node) => shown(node, mode, leafId) && matches(node, words);
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
    // the current branch first (a stable sort keeps file order among the rest)
    return found.sort((a, b) => Number(!onPath.has(a.entry.id)) - Number(!onPath.has(b.entry.id)));
  };
  const rows = [];
  const walk = visibleChildren(roots).reverse().map((node) => [node, 0, null]);
  while (walk.length) {
    const [node, depth, parentId] = walk.pop();
    const id = node.entry.id;
    const children = visibleChildren(node.children);
    const isFolded = folded.has(id) && children.length > 0;
    rows.push({ node, depth, onPath: onPath.has(id), here: id === here, parentId,
      childIds: children.map((child) => child.entry.id), folded: isFolded });
    if (isFolded) continue;
    const step = children.length > 1 ? 1 : 0;
    for (const child of children.reverse()) walk.push([child, depth + step, id]);
  }
  return rows;
}

/** As pi: a row with listed children that starts a root or a branch segment can fold. */
export function foldable(row, byId) {
  if (!row.childIds.length) return false;
  const up = row.parentId ? byId.get(row.parentId) : null;
  return !up || up.childIds.length > 1;
}

/** Where Ctrl+←/→ goes when there is nothing to fold or unfold (the chat's
 * ``segment_start``): up to the start of this branch segment (or the one before), down
 * to the next branch point's first child or the branch's end. Returns a row index. */
export function segmentStart(rows, index, direction) {
  const byId = new Map(rows.map((row) => [row.node.entry.id, row]));
  const position = new Map(rows.map((row, i) => [row.node.entry.id, i]));
  let current = rows[index];
  if (direction === "down") {
    for (;;) {
      const children = current.childIds.filter((id) => byId.has(id));
      if (current.folded || !children.length) return position.get(current.node.entry.id);
      if (current.childIds.length > 1) return position.get(children[0]);
      current = byId.get(children[0]);
    }
  }
  for (;;) {
    const up = current.parentId ? byId.get(current.parentId) : null;
    if (!up) return position.get(current.node.entry.id);
    if (up.childIds.length > 1 && position.get(current.node.entry.id) < index) return position.get(current.node.entry.id);
    current = up;
  }
}

/** A label's time as pi shows it: ``14:05`` today, ``3/7 14:05`` this year, else
 * ``25/3/7 14:05``; "" for none or one that does not parse. */
export function labelTime(stamp, now = new Date()) {
  const when = stamp ? new Date(stamp) : null;
  if (!when || Number.isNaN(when.getTime())) return "";
  const time = `${String(when.getHours()).padStart(2, "0")}:${String(when.getMinutes()).padStart(2, "0")}`;
  if (when.toDateString() === now.toDateString()) return time;
  const day = `${when.getMonth() + 1}/${when.getDate()} ${time}`;
  if (when.getFullYear() === now.getFullYear()) return day;
  return `${String(when.getFullYear() % 100).padStart(2, "0")}/${day}`;
}
