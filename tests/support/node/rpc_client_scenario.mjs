// Drives `pi --mode rpc` through every public method of pi's own RpcClient and prints
// what each returned (one JSON object) for the Python test to compare between the real
// pi and pi-harness. Usage: node rpc_client_scenario.mjs PI_PACKAGE_DIR CLI_PATH CWD MODE
// MODE "full" needs the scripted server's replies in the order the steps below ask;
// MODE "no-model" starts without a model configured.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [packageDir, cliPath, cwd, mode] = process.argv.slice(2);
const { RpcClient } = await import(pathToFileURL(join(packageDir, "dist/modes/rpc/rpc-client.js")).href);

const results = {};
const record = (name, value) => { results[name] = value; };
const attempt = async (name, fn) => {
  try { record(name, { ok: await fn() }); } catch (error) { record(name, { error: String(error.message ?? error) }); }
};
const types = (events) => events.map((e) => e.type === "message_update" ? `update:${e.assistantMessageEvent.type}` : e.type)
  .filter((t) => t !== "update:text_delta" && t !== "update:toolcall_delta" && t !== "update:thinking_delta");
const client = new RpcClient({ cliPath, cwd, args: mode === "no-model" ? ["--no-session"] : ["--model", "local/test-model"] });
const seen = [];
await client.start();
const unsubscribe = client.onEvent((event) => seen.push(event));

if (mode === "no-model") {
  await attempt("getAvailableModels", () => client.getAvailableModels());
  await attempt("getState", async () => { const s = await client.getState(); return { model: s.model?.id ?? null, isStreaming: s.isStreaming }; });
  await attempt("prompt", () => client.prompt("hi"));
  await attempt("getSessionStats", async () => (await client.getSessionStats()).totalMessages);
  await attempt("getCommands", () => client.getCommands());
} else {
  await attempt("getState", async () => {
    const s = await client.getState();
    return { model: `${s.model.provider}/${s.model.id}`, thinkingLevel: s.thinkingLevel, isStreaming: s.isStreaming,
             isCompacting: s.isCompacting, steeringMode: s.steeringMode, followUpMode: s.followUpMode,
             hasSessionFile: typeof s.sessionFile === "string", autoCompactionEnabled: s.autoCompactionEnabled,
             messageCount: s.messageCount, pendingMessageCount: s.pendingMessageCount };
  });
  await attempt("getAvailableModels", async () => (await client.getAvailableModels()).map((m) => `${m.provider}/${m.id}:${m.reasoning}:${m.contextWindow}`));
  await attempt("setThinkingLevel", async () => { await client.setThinkingLevel("high"); return (await client.getState()).thinkingLevel; });
  await attempt("cycleThinkingLevel", () => client.cycleThinkingLevel());
  await attempt("setModel", async () => { const m = await client.setModel("local", "other-model"); return `${m.provider}/${m.id}`; });
  await attempt("cycleModel", async () => { const c = await client.cycleModel(); return c && { model: `${c.model.provider}/${c.model.id}`, thinkingLevel: c.thinkingLevel, isScoped: c.isScoped }; });
  await attempt("setSteeringMode", async () => { await client.setSteeringMode("all"); return (await client.getState()).steeringMode; });
  await attempt("setFollowUpMode", async () => { await client.setFollowUpMode("all"); return (await client.getState()).followUpMode; });
  await attempt("promptAndWait", async () => types(await client.promptAndWait("hello")));
  await attempt("getLastAssistantText", () => client.getLastAssistantText());
  await attempt("toolRun", async () => {
    const events = await client.promptAndWait("run it");
    return events.filter((e) => e.type.startsWith("tool_execution")).map((e) => `${e.type}:${e.toolName}${e.type === "tool_execution_end" ? `:${e.isError}:${e.result.content[0].text.trim()}` : ""}`);
  });
  await attempt("getMessages", async () => (await client.getMessages()).map((m) => m.role));
  await attempt("getSessionStats", async () => {
    const s = await client.getSessionStats();
    return { userMessages: s.userMessages, assistantMessages: s.assistantMessages, toolCalls: s.toolCalls,
             toolResults: s.toolResults, totalMessages: s.totalMessages, tokens: s.tokens, cost: s.cost,
             contextWindow: s.contextUsage?.contextWindow };
  });
  await attempt("followUpWhileStreaming", async () => {
    const done = client.collectEvents();
    await client.prompt("slow one");
    await client.followUp("and then?");
    const events = await done;
    return { userMessages: events.filter((e) => e.type === "message_end" && e.message.role === "user").length,
             last: await client.getLastAssistantText() };
  });
  await attempt("steerWhileStreaming", async () => {
    const idle = client.waitForIdle();
    await client.prompt("slow two");
    await client.steer("steer this way");
    await idle;
    return client.getLastAssistantText();
  });
  await attempt("abort", async () => {
    const done = client.collectEvents();
    await client.prompt("talk for long");
    await new Promise((resolve) => { const off = client.onEvent((e) => { if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") { off(); resolve(); } }); });
    await client.abort();
    const events = await done;
    const end = events.filter((e) => e.type === "message_end").at(-1);
    return { stopReason: end.message.stopReason, textEnd: types(events).includes("update:text_end") };
  });
  await attempt("bash", async () => { const r = await client.bash("echo from-bash"); return { output: r.output, exitCode: r.exitCode, cancelled: r.cancelled, truncated: r.truncated }; });
  await attempt("abortBash", async () => {
    const running = client.bash("sleep 20; echo never");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await client.abortBash();
    const r = await running;
    return { cancelled: r.cancelled, output: r.output };
  });
  await attempt("setAutoCompaction", async () => { await client.setAutoCompaction(false); return (await client.getState()).autoCompactionEnabled; });
  await attempt("setAutoRetry", () => client.setAutoRetry(true));
  await attempt("abortRetry", () => client.abortRetry());
  await attempt("setSessionName", async () => { await client.setSessionName("scenario"); return (await client.getState()).sessionName; });
  await attempt("getCommands", async () => (await client.getCommands()).map((c) =>
    `${c.source}:${c.name}:${c.description}:${c.sourceInfo?.source}:${c.sourceInfo?.scope}:${c.sourceInfo?.path === undefined ? "" : c.sourceInfo.path.replace(cwd, "<cwd>")}`));
  await attempt("exportHtml", async () => (await client.exportHtml(join(cwd, "out.html"))).path === join(cwd, "out.html"));
  await attempt("compact", async () => { const r = await client.compact(); return { summary: r.summary.includes("Scenario summary"), kept: typeof r.firstKeptEntryId }; });
  await attempt("statsAfterCompact", async () => { const s = await client.getSessionStats(); return { totalMessages: s.totalMessages, tokens: s.contextUsage?.tokens ?? "absent" }; });
  await attempt("getForkMessages", async () => (await client.getForkMessages()).map((m) => m.text));
  const sessionFile = (await client.getState()).sessionFile;
  // clone before fork: after a fork the real pi 0.73.1 cannot clone ("Entry … not found")
  await attempt("clone", async () => { const r = await client.clone(); return { ...r, messageCount: (await client.getState()).messageCount }; });
  await attempt("fork", async () => {
    const [first] = await client.getForkMessages();
    return first ? client.fork(first.entryId) : "no fork point";
  });
  await attempt("newSession", async () => { const r = await client.newSession(); return { ...r, messageCount: (await client.getState()).messageCount }; });
  await attempt("switchSession", async () => { const r = await client.switchSession(sessionFile); return { ...r, sessionName: (await client.getState()).sessionName }; });
  await attempt("unknownModel", () => client.setModel("local", "nope"));
}
unsubscribe();
record("stderrIsString", typeof client.getStderr() === "string");
await client.stop();
record("eventsSeen", seen.length > 0 || mode === "no-model");
process.stdout.write(JSON.stringify(results) + "\n");
