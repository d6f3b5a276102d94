/* The session as a tree (`/tree`, read-only): every entry of the file in order, a branch
 * indented under the entry it leaves, the current branch marked, as pi's /tree shows it. */

import { $, button, el } from "./dom.js";
import { textOf } from "./render.js";

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

export function showTree(data) {
  const list = el("ol", "tree");
  list.dataset.testid = "tree";
  const onPath = currentPath(data.tree, data.leafId);
  const stack = [...data.tree].reverse().map((node) => [node, 0]);
  while (stack.length) {
    const [node, depth] = stack.pop();
    const shown = describe(node.entry);
    if (shown) {
      const li = el("li", `tree-${shown.kind}`);
      li.dataset.testid = "tree-entry";
      li.style.paddingLeft = `${depth * 16 + 6}px`;
      if (onPath.has(node.entry.id)) li.classList.add("on-path");
      if (node.entry.id === data.leafId) li.classList.add("leaf");
      li.append(el("span", "tree-role", shown.kind), el("span", "tree-text", shown.text.slice(0, 160)));
      if (node.label) li.appendChild(el("span", "tree-label", node.label));
      list.appendChild(li);
    }
    const branches = node.children.length > 1 ? 1 : 0;
    for (const child of [...node.children].reverse()) stack.push([child, depth + branches]);
  }
  const box = $("tree-box");
  box.replaceChildren(el("h2", null, "Session tree"), list,
    el("div", "actions"));
  const close = button("Close", "tree-close", closeTree);
  box.lastElementChild.appendChild(close);
  $("tree-backdrop").hidden = false;
  close.focus();
}

export function treeOpen() { return !$("tree-backdrop").hidden; }

export function closeTree() {
  $("tree-backdrop").hidden = true;
  $("tree-box").replaceChildren();
  $("prompt").focus();
}
