// `node pi_from_path.mjs ARGS...` runs `pi ARGS...` from PATH with this process's stdio:
// pi's RpcClient always starts `node <cliPath>`, so this lets it start whichever pi is
// first on PATH (the real one or pi-harness). Signals are passed on; the exit code too.
import { spawn } from "node:child_process";

const child = spawn("pi", process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  process.stderr.write(`pi_from_path: cannot start pi: ${error.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
