// pi 1.6's own ranker over the tools and queries given as JSON on stdin; prints the ranked
// names per query. Usage: node pi16_rank.mjs < {"tools": [...], "queries": [...], "limit": N}
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const base = process.env.PI16_PACKAGE;
const { Bm25Ranker, createToolSearchDocument } = await import(
  pathToFileURL(`${base}/dist/extensions/tool-search/tool.js`).href);
const input = JSON.parse(readFileSync(0, "utf8"));
const documents = input.tools.map((tool) => createToolSearchDocument(tool, tool.namespace));
const ranker = new Bm25Ranker();
const out = input.queries.map((query) => ranker.rank(query, documents, input.limit));
process.stdout.write(JSON.stringify(out));
