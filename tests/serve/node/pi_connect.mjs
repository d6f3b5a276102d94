// pi's RpcClient starts `node <cliPath> --mode rpc ...`; this cliPath runs
// `pi connect $PI_CONNECT_URL --session $PI_CONNECT_SESSION` from PATH instead (the
// arguments for a local pi are dropped), so the client drives a served session.
import { spawn } from "node:child_process";

const child = spawn("pi", ["connect", process.env.PI_CONNECT_URL, "--session", process.env.PI_CONNECT_SESSION],
                    { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("error", (error) => { process.stderr.write(`pi_connect: ${error.message}\n`); process.exit(127); });
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
