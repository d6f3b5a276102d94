// Runs pi-ai 1.6's own streamSimple for each request, in order, against a real server
// (the tests' scripted one) and prints each final assistant message (done or error).
// As pi 1.6's agent does, the transcript starts with a system message that holds the
// system prompt and declares the tools.
// argv: <pi-ai package folder>; stdin: JSON [{model, context, options}]
const [piAi] = process.argv.slice(2);
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const requests = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const modules = {
  "anthropic-messages": "anthropic-messages", "openai-completions": "openai-completions",
  "openai-responses": "openai-responses",
};
const { toToolDeclaration } = await import(`${piAi}/dist/utils/transcript.js`);
const answers = [];
for (const { model, context, options } of requests) {
  const { streamSimple } = await import(`${piAi}/dist/api/${modules[model.api]}.js`);
  const declared = (context.tools ?? []).map(toToolDeclaration);
  const head = { role: "system", content: "", timestamp: 0, sections: { prompt: context.systemPrompt ?? "" },
    ...(declared.length ? { toolsAdded: declared } : {}) };
  const events = streamSimple(model, { ...context, messages: [head, ...context.messages] },
                              { ...options, apiKey: "test-key", maxRetries: 0 });
  let answer;
  for await (const event of events) {
    if (event.type === "done") answer = event.message;
    if (event.type === "error") answer = event.error;
  }
  answers.push(answer);
}
console.log(JSON.stringify(answers));
