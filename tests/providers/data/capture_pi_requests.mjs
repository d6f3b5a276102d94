// Drive pi-ai's streamSimple against a local capture server and print each request.
import http from "node:http";
import { streamSimple } from "/tmp/pi/node_modules/@mariozechner/pi-ai/dist/index.js";
import fs from "node:fs";

const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const captured = [];
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    captured.push({ method: req.method, url: req.url, headers: req.headers, body: body ? JSON.parse(body) : null });
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "capture only", type: "invalid_request_error", code: 400, status: "INVALID_ARGUMENT" } }));
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const port = server.address().port;
const out = [];
for (const c of spec.cases) {
  captured.length = 0;
  const model = { ...c.model, baseUrl: c.model.baseUrl.replace("PORT", String(port)) };
  const s = streamSimple(model, spec.contexts[c.context], { apiKey: "test-key", maxRetries: 0, ...c.options });
  const result = await s.result();
  out.push({ name: c.name, request: captured[0], error: result.errorMessage });
}
console.log(JSON.stringify(out, null, 1));
server.close();
