// A pi 1.6 extension for recording a fixture: the bash tool's result reports nested model
// usage, the turn that ran it has the result's content replaced by a context edit, and
// the final answer is left out of the context by another.
let edited = false;
let omitted = false;
export default function (pi: any) {
  pi.on("tool_result", async () => ({
    usage: { input: 7, output: 3, cacheRead: 0, cacheWrite: 0, totalTokens: 10,
             cost: { input: 0.125, output: 0.125, cacheRead: 0, cacheWrite: 0, total: 0.25 } },
  }));
  pi.on("turn_end", async (event: any) => {
    if (!edited && event.toolResults.length > 0) {
      edited = true;
      return { entries: [...event.entries,
        { type: "context_edit", targetId: event.toolResultEntryIds[0], replacement: { content: "hi (edited by pi 1.6)" } }] };
    }
    if (edited && !omitted && event.outcome === "completed" && event.toolResults.length === 0) {
      omitted = true;
      return { entries: [...event.entries, { type: "context_edit", targetId: event.messageEntryId, replacement: null }] };
    }
  });
}
