// The real pi 1.6's built-in tools and its template arguments, for side-by-side tests (Node 22).
// Usage: node pi16_tools_probe.mjs TOOL CWD ARGS_JSON | template CONTENT ARGS_TEXT
//   TOOL (find, edit, grep, bash, …): runs the tool in CWD, prints {text, details} (or {error});
//   template: prints {args, expanded}: the arguments pi parses and the content it fills in.
const base = process.env.PI16_PACKAGE;
const [command, first, second] = process.argv.slice(2);

if (command === "template") {
  const { parseCommandArgs, substituteArgs } = await import(`${base}/dist/core/prompt-templates.js`);
  const args = parseCommandArgs(second);
  console.log(JSON.stringify({ args, expanded: substituteArgs(first, args) }));
} else {
  const tools = await import(`${base}/dist/core/tools/${command}.js`);
  const create = tools[`create${command[0].toUpperCase()}${command.slice(1)}Tool`];
  const tool = create(first);
  try {
    const result = await tool.execute("call-1", JSON.parse(second), undefined, undefined);
    console.log(JSON.stringify({ text: result.content.map((c) => c.text).join(""), details: result.details ?? null }));
  } catch (error) {
    console.log(JSON.stringify({ error: String(error?.message ?? error) }));
  }
}
