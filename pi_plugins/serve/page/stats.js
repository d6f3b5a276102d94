/* Tokens, cost and context use of the session, as pi's footer shows them:
 * ↑input ↓output Rcache-read Wcache-write $cost  context%/window. */

import { $ } from "./dom.js";

export function formatTokens(n) {
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1)}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** ``stats``: get_session_stats's answer. */
export function renderStats(stats) {
  const node = $("stats");
  if (!stats) { node.textContent = ""; return; }
  const t = stats.tokens || {};
  const parts = [`↑${formatTokens(t.input || 0)}`, `↓${formatTokens(t.output || 0)}`];
  if (t.cacheRead) parts.push(`R${formatTokens(t.cacheRead)}`);
  if (t.cacheWrite) parts.push(`W${formatTokens(t.cacheWrite)}`);
  parts.push(`$${(stats.cost || 0).toFixed(3)}`);
  const context = stats.contextUsage;
  if (context) {
    const percent = context.percent == null ? "?" : `${context.percent.toFixed(1)}%`;
    parts.push(`${percent}/${formatTokens(context.contextWindow)}`);
    node.classList.toggle("high", (context.percent || 0) > 80);
  }
  node.textContent = parts.join(" ");
  node.title = `Input ${t.input || 0} · output ${t.output || 0} · cache read ${t.cacheRead || 0} · cache write ${t.cacheWrite || 0} tokens\n` +
    `Cost $${(stats.cost || 0).toFixed(6)}` + (context ? `\nContext ${context.tokens ?? "?"} of ${context.contextWindow} tokens` : "") +
    `\n${stats.userMessages} prompts, ${stats.toolCalls} tool calls`;
}
