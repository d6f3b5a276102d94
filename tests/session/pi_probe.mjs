// Opens session files with the real pi's SessionManager and prints what it sees, so the
// tests can compare it with ours.
// Usage: node pi_probe.mjs context FILE | contexts FILE | list DIR | append FILE
const base = process.env.PI_PACKAGE ?? "/tmp/pi/node_modules/@mariozechner/pi-coding-agent";
const { SessionManager } = await import(`${base}/dist/core/session-manager.js`);
const [command, target] = process.argv.slice(2);

if (command === "context") {
  const session = SessionManager.open(target);
  const context = session.buildSessionContext();
  const labels = {};
  for (const entry of session.getEntries()) {
    const label = session.getLabel(entry.id);
    if (label) labels[entry.id] = label;
  }
  console.log(JSON.stringify({
    id: session.getSessionId(),
    header: session.getHeader(),
    leafId: session.getLeafId(),
    entryIds: session.getEntries().map((e) => e.id),
    name: session.getSessionName() ?? null,
    labels,
    context,
  }));
} else if (command === "contexts") {
  // The context pi builds with each entry of the file as the leaf.
  const session = SessionManager.open(target);
  const out = {};
  for (const entry of session.getEntries()) {
    session.branch(entry.id);
    out[entry.id] = session.buildSessionContext();
  }
  console.log(JSON.stringify(out));
} else if (command === "list") {
  const infos = await SessionManager.list(process.cwd(), target);
  console.log(JSON.stringify(infos.map((i) => ({
    path: i.path, id: i.id, cwd: i.cwd, name: i.name ?? null,
    parentSessionPath: i.parentSessionPath ?? null, created: i.created.getTime(),
    modified: i.modified.getTime(), messageCount: i.messageCount, firstMessage: i.firstMessage,
  }))));
} else if (command === "append") {
  // pi continues a file: a user and an assistant message under the leaf.
  const session = SessionManager.open(target);
  session.appendMessage({ role: "user", content: [{ type: "text", text: "from pi" }], timestamp: 1 });
  const id = session.appendMessage({
    role: "assistant", content: [{ type: "text", text: "pi answers" }], api: "openai-completions",
    provider: "fake-openai", model: "fake-model",
    usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
             cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop", timestamp: 2,
  });
  console.log(JSON.stringify({ leafId: id }));
} else {
  console.error(`unknown command ${command}`);
  process.exit(2);
}
