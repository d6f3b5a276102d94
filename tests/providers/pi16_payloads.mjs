// Runs pi-ai 1.6's own streamSimple for each case and prints the request body it builds
// (caught with onPayload; the request itself goes to a closed port and fails). As pi 1.6's
// agent does, the transcript starts with a system message that holds the system prompt and
// declares the tools.
// argv: <pi-ai package folder>; stdin: JSON {name: {model, context, options}}
const [piAi] = process.argv.slice(2);
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const modules = {
  "anthropic-messages": "anthropic-messages", "openai-completions": "openai-completions",
  "openai-responses": "openai-responses", "google-generative-ai": "google-generative-ai",
};
const { toToolDeclaration } = await import(`${piAi}/dist/utils/transcript.js`);
const bodies = {};
for (const [name, { model, context, options }] of Object.entries(cases)) {
  const { streamSimple } = await import(`${piAi}/dist/api/${modules[model.api]}.js`);
  const declared = (context.tools ?? []).map(toToolDeclaration);
  const head = { role: "system", content: "", timestamp: 0, sections: { prompt: context.systemPrompt ?? "" },
    ...(declared.length ? { toolsAdded: declared } : {}) };
  const messages = [head, ...context.messages];
  const events = streamSimple(model, { ...context, messages }, {
    ...options, apiKey: "test-key", maxRetries: 0,
    onPayload: (body) => { bodies[name] = body; },
  });
  for await (const _ of events) { /* until the failed request ends it */ }
}
console.log(JSON.stringify(bodies));
