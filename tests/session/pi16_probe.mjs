// The real pi 1.6's SessionManager, for the tests to compare with ours (run on Node 22).
// Usage: node pi16_probe.mjs contexts FILE | stats FILE | write DIR CWD | edit FILE TARGET JSON
//   contexts: the context pi builds with each entry as the leaf;
//   stats: the session's token and cost totals as pi 1.6's getSessionStats sums them;
//   write: a new session with context edits, usage entries and summaries that carry usage;
//   edit: appends a context edit (JSON: the replacement, or null) under the file's leaf.
const base = process.env.PI16_PACKAGE;
const { SessionManager } = await import(`${base}/dist/core/session-manager.js`);
const { createUsageTotals, addUsageToTotals } = await import(`${base}/dist/core/usage-totals.js`);
const [command, target, ...rest] = process.argv.slice(2);

const usage = (input, output, cost) => ({
  input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output,
  cost: { input: cost / 2, output: cost / 2, cacheRead: 0, cacheWrite: 0, total: cost },
});
const answer = (text, calls = []) => ({
  role: "assistant", api: "openai-completions", provider: "local", model: "test-model",
  content: [{ type: "text", text }, ...calls.map((id) => ({ type: "toolCall", id, name: "bash", arguments: { command: "echo hi" } }))],
  usage: usage(100, 10, 0.5), stopReason: calls.length ? "toolUse" : "stop", timestamp: Date.now(),
});
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });

if (command === "contexts") {
  const session = SessionManager.open(target);
  const out = {};
  for (const entry of session.getEntries()) {
    session.branch(entry.id);
    out[entry.id] = session.buildSessionContext();
  }
  console.log(JSON.stringify(out));
} else if (command === "stats") {
  // what AgentSession.getSessionStats adds up (every entry of the file)
  const totals = createUsageTotals();
  for (const entry of SessionManager.open(target).getEntries()) {
    if (entry.type === "usage") addUsageToTotals(totals, entry.usage);
    else if ((entry.type === "branch_summary" || entry.type === "compaction") && entry.usage) addUsageToTotals(totals, entry.usage);
    else if (entry.type === "message" && entry.message.role === "toolResult" && entry.message.usage) addUsageToTotals(totals, entry.message.usage);
    else if (entry.type === "message" && entry.message.role === "assistant") addUsageToTotals(totals, entry.message.usage);
  }
  console.log(JSON.stringify(totals));
} else if (command === "write") {
  const session = SessionManager.create(rest[0], target);
  session.appendModelChange("local", "test-model");
  session.appendThinkingLevelChange("off");
  const secret = session.appendMessage(user("My password is hunter2, remember it."));
  session.appendMessage(answer("Noted the password."));
  session.appendMessage(user("Run echo hi"));
  session.appendMessage(answer("Running it.", ["call_1"]));
  const result = session.appendMessage({ role: "toolResult", toolCallId: "call_1", toolName: "bash",
    content: [{ type: "text", text: "hi\n".repeat(50) }], isError: false, usage: usage(7, 3, 0.25), timestamp: Date.now() });
  const said = session.appendMessage(answer("It printed hi fifty times."));
  session.appendContextEdit(secret, null);
  session.appendContextEdit(result, { content: "hi (x50, trimmed)" });
  session.appendContextEdit(said, { content: "It printed hi." });
  session.appendUsage("cache_warm", "local", "test-model", usage(0, 0, 0.125), "warming");
  session.appendCustomMessageEntry("reminder", "Keep it short.", true);
  const custom = session.getLeafId();
  session.appendContextEdit(custom, { content: "Keep it very short." });
  session.appendMessage(user("Summarise"));
  session.appendMessage(answer("Done so far: echo."));
  const kept = session.appendMessage(user("after that"));
  session.appendMessage(answer("ok"));
  session.appendCompaction("## Goal\nEcho things", kept, 1234, { readFiles: [], modifiedFiles: [] }, false, usage(50, 20, 1));
  session.appendMessage(user("after compaction"));
  const last = session.appendMessage(answer("still here"));
  session.appendContextEdit(kept, { content: "after that (edited after the compaction)" });
  session.branchWithSummary(said, "We left a branch.", { readFiles: [] }, false, usage(30, 5, 2));
  session.appendMessage(user("on the new branch"));
  session.appendMessage(answer("new branch answer"));
  session.appendContextEdit(said, null);
  console.log(JSON.stringify({ file: session.getSessionFile(), last }));
} else if (command === "edit") {
  const session = SessionManager.open(target);
  const id = session.appendContextEdit(rest[0], JSON.parse(rest[1]));
  console.log(JSON.stringify({ id }));
} else {
  console.error(`unknown command ${command}`);
  process.exit(2);
}
