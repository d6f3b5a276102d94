// Drives `pi --mode rpc` through every public method of pi 1.6's RpcClient and prints
// what each returned (one JSON object), for the Python test to compare between the real
// pi 1.6 and pi-harness. Usage: node rpc_client16_scenario.mjs PI16_PACKAGE_DIR CLI_PATH CWD
// Needs the scripted server's replies in the order the steps below ask for them.
// pi 1.6 keeps its system prompt as `system` messages in the session (pi-harness does
// not: its prompt is its own); they are left out of what is compared.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [packageDir, cliPath, cwd] = process.argv.slice(2);
const { RpcClient } = await import(pathToFileURL(join(packageDir, "dist/modes/rpc/rpc-client.js")).href);

const results = {};
const attempt = async (name, fn) => {
  try { results[name] = { ok: await fn() }; } catch (error) { results[name] = { error: String(error.message ?? error) }; }
};
const types = (events) => events.map((e) => e.type === "message_update" ? `update:${e.assistantMessageEvent.type}` : e.type)
  .filter((t) => !["update:text_delta", "update:toolcall_delta", "update:thinking_delta"].includes(t));
const notSystem = (entry) => !(entry.type === "message" && entry.message.role === "system");
const shape = (update) => Object.keys(update).sort().join(",") + ":" + Object.keys(update.assistantMessageEvent).sort().join(",");
const client = new RpcClient({ cliPath, cwd, args: ["--model", "local/test-model"] });
const seen = [];
await client.start();
const unsubscribe = client.onEvent((event) => seen.push(event));
const waitFor = (predicate) => new Promise((resolve) => { const off = client.onEvent((e) => { if (predicate(e)) { off(); resolve(e); } }); });

await attempt("getAvailableThinkingLevels", () => client.getAvailableThinkingLevels());
await attempt("setThinkingLevelMax", async () => { await client.setThinkingLevel("max"); return (await client.getState()).thinkingLevel; });
await attempt("setThinkingLevel", async () => { await client.setThinkingLevel("high"); return (await client.getState()).thinkingLevel; });
await attempt("cycleThinkingLevel", () => client.cycleThinkingLevel());
await attempt("promptDisposition", async () => { const settled = waitFor((e) => e.type === "agent_settled"); const d = await client.prompt("hello"); const s = await settled; return { d, settled: s }; });
await attempt("messageUpdateShape", () => [...new Set(seen.filter((e) => e.type === "message_update").map(shape))].sort());
await attempt("promptAndWait", async () => types(await client.promptAndWait("run it")).filter((t) => t !== "agent_settled"));
await attempt("waitForIdleAfterSettled", async () => { const idle = client.waitForIdle(); await client.prompt("once more"); await idle; return client.getLastAssistantText(); });
await attempt("getMessages", async () => (await client.getMessages()).map((m) => m.role).filter((r) => r !== "system"));
await attempt("getEntries", async () => {
  const { entries, leafId } = await client.getEntries();
  const kept = entries.filter(notSystem);
  return { types: kept.map((e) => e.type === "message" ? `message:${e.message.role}` : e.type), leafIsLast: leafId === entries.at(-1).id };
});
await attempt("getEntriesSince", async () => {
  const { entries } = await client.getEntries();
  const since = await client.getEntries(entries.at(-3).id);
  return { count: since.entries.length, leafId: typeof since.leafId };
});
await attempt("getEntriesUnknown", () => client.getEntries("nope1234"));
await attempt("getTree", async () => {
  const { tree, leafId } = await client.getTree();
  const walk = (node) => [node.entry.type, ...node.children.flatMap(walk)];
  return { roots: tree.length, types: walk(tree[0]).length - (await client.getEntries()).entries.filter((e) => !notSystem(e)).length, leafId: typeof leafId, keys: Object.keys(tree[0]).sort() };
});
await attempt("queueAndClear", async () => {
  const settled = waitFor((e) => e.type === "agent_settled");
  const started = waitFor((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta");
  const d = await client.prompt("slow one");
  await started;
  const steer = await client.steer("steer later");
  const followUp = await client.followUp("follow later");
  const cleared = await client.clearQueue();
  const again = await client.clearQueue();
  await client.abort();
  const s = await settled;
  return { d, steer, followUp, cleared, again, aborted: s.aborted };
});
await attempt("promptStreamingBehavior", async () => {
  const settled = waitFor((e) => e.type === "agent_settled");
  const started = waitFor((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta");
  await client.prompt("slow two");
  await started;
  const d = await client.prompt("queued by prompt", undefined, "followUp");
  await settled;
  await client.waitForIdle();
  return { d, last: await client.getLastAssistantText() };
});
await attempt("bash", async () => { const r = await client.bash("echo from-bash"); return { output: r.output, exitCode: r.exitCode, cancelled: r.cancelled, truncated: r.truncated }; });
await attempt("getSessionStats", async () => {
  const s = await client.getSessionStats();
  const system = (await client.getEntries()).entries.filter((e) => !notSystem(e)).length;
  return { userMessages: s.userMessages, assistantMessages: s.assistantMessages, toolCalls: s.toolCalls,
           toolResults: s.toolResults, totalMessages: s.totalMessages - system, tokens: s.tokens, cost: s.cost };
});
await attempt("setSessionName", async () => {
  const changed = waitFor((e) => e.type === "session_info_changed");
  await client.setSessionName("scenario");
  return { event: await changed, name: (await client.getState()).sessionName };
});
await attempt("compact", async () => {
  const r = await client.compact();
  return { summary: r.summary.includes("Scenario summary"), kept: typeof r.firstKeptEntryId, tokensBefore: typeof r.tokensBefore,
           estimatedTokensAfter: typeof r.estimatedTokensAfter, usage: r.usage === undefined ? "absent" : Object.keys(r.usage).filter((k) => k !== "reasoning").sort() };
});
await attempt("statsAfterCompact", async () => {
  const s = await client.getSessionStats();
  const system = (await client.getEntries()).entries.filter((e) => !notSystem(e)).length;
  return { totalMessages: s.totalMessages - system, tokens: s.contextUsage?.tokens ?? "absent" };
});
await attempt("getForkMessages", async () => (await client.getForkMessages()).map((m) => m.text));
const sessionFile = (await client.getState()).sessionFile;
await attempt("clone", async () => { const r = await client.clone(); return { ...r }; });
await attempt("fork", async () => { const [first] = await client.getForkMessages(); return first ? client.fork(first.entryId) : "no fork point"; });
await attempt("newSession", async () => { const r = await client.newSession(); return { ...r, entries: (await client.getEntries()).entries.filter(notSystem).map((e) => e.type) }; });
await attempt("switchSession", async () => { const r = await client.switchSession(sessionFile); return { ...r, sessionName: (await client.getState()).sessionName }; });
await attempt("exportHtml", async () => (await client.exportHtml(join(cwd, "out.html"))).path === join(cwd, "out.html"));
await attempt("setAutoCompaction", async () => { await client.setAutoCompaction(false); return (await client.getState()).autoCompactionEnabled; });
await attempt("setAutoRetry", () => client.setAutoRetry(true));
await attempt("abortRetry", () => client.abortRetry());
await attempt("abortBash", async () => {
  const running = client.bash("sleep 20; echo never");
  await new Promise((resolve) => setTimeout(resolve, 500));
  await client.abortBash();
  const r = await running;
  return { cancelled: r.cancelled, output: r.output };
});
await attempt("setSteeringMode", async () => { await client.setSteeringMode("all"); return (await client.getState()).steeringMode; });
await attempt("setFollowUpMode", async () => { await client.setFollowUpMode("all"); return (await client.getState()).followUpMode; });
await attempt("setModel", async () => { const m = await client.setModel("local", "other-model"); return `${m.provider}/${m.id}`; });
await attempt("cycleModel", async () => { const c = await client.cycleModel(); return c && { model: `${c.model.provider}/${c.model.id}`, thinkingLevel: c.thinkingLevel, isScoped: c.isScoped }; });
await attempt("getAvailableModels", async () => (await client.getAvailableModels()).map((m) => `${m.provider}/${m.id}:${m.reasoning}:${m.contextWindow}`));
await attempt("getCommands", async () => (await client.getCommands()).map((c) => `${c.source}:${c.name}`));
await attempt("unknownModel", () => client.setModel("local", "nope"));
unsubscribe();
results.stderrIsString = typeof client.getStderr() === "string";
await client.stop();
results.eventsSeen = seen.length > 0;
process.stdout.write(JSON.stringify(results) + "\n");
