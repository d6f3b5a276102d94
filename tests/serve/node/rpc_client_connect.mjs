// pi's own RpcClient through `pi connect`: state, a prompt to its end, a steer during a
// run, the messages. Prints one JSON object. Usage: node rpc_client_connect.mjs PI_PACKAGE CLI_PATH CWD
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [packageDir, cliPath, cwd] = process.argv.slice(2);
const { RpcClient } = await import(pathToFileURL(join(packageDir, "dist/modes/rpc/rpc-client.js")).href);
const client = new RpcClient({ cliPath, cwd });
const out = {};
await client.start();
const state = await client.getState();
out.state = { model: `${state.model.provider}/${state.model.id}`, sessionId: state.sessionId, isStreaming: state.isStreaming };
const events = await client.promptAndWait("hello through the server");
out.events = events.map((e) => e.type).filter((t) => t !== "message_update");
out.seqs = events.every((e) => Number.isInteger(e.seq));
out.lastText = await client.getLastAssistantText();
out.messages = (await client.getMessages()).map((m) => m.role);
await client.stop();
console.log(JSON.stringify(out));
