"""The codemode worker: a separate process that runs one script at a time in a fresh
QuickJS context and talks to the harness in JSON lines over stdin and stdout.

A process, not a thread, so that the harness can stop a script at once (an endless
loop, an abort, its deadline) by killing it, and so that the script shares no memory
with the harness. It imports only the standard library and ``quickjs`` (the
``quickjs-ng`` wheel): QuickJS has no file, network or timer API of its own, and the
context is given none. Messages (one JSON object a line):

- harness → worker: ``{"op": "run", "code", "config"}``; ``{"op": "settle", "id", "ok", "value"}``
  (the answer to a request; ``value`` is JSON text, or ``""`` for undefined).
- worker → harness: ``{"op": "out", "kind", "value"}`` as the script writes output;
  ``{"op": "req", "id", "kind", "name", "args"}`` for a tool call or a look-up;
  ``{"op": "done", "ok", "error", "store"}`` once, when the script ends.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import quickjs  # type: ignore[import-untyped]

MEMORY_LIMIT = 256 * 1024 * 1024  # pi 1.6: a script's VM has 256 MB
STACK_LIMIT = 1024 * 1024
PRELUDE = (Path(__file__).parent / "prelude.js").read_text(encoding="utf-8")
NEVER_SETTLES = ("The script is waiting on a promise that can never settle: no tool call is pending, "
                 "and there are no timers here.")


class Script:
    """One script in its own QuickJS context."""

    def __init__(self, code: str, config: dict, write) -> None:
        self.write = write
        self.done = False
        self.context = quickjs.Context()
        self.context.set_memory_limit(MEMORY_LIMIT)
        self.context.set_max_stack_size(STACK_LIMIT)
        self.context.add_callable("__pi_send", self._send)
        self.context.set("__pi_config", json.dumps(config))
        self.context.eval(PRELUDE)
        self.code = code

    def _send(self, message: str) -> None:
        # A host function must not raise: QuickJS would see a broken call.
        try:
            if message.startswith('{"op":"done"'):
                self.done = True
            self.write(message)
        except Exception:  # noqa: BLE001 - the harness went away; the kill follows
            self.done = True

    def start(self) -> None:
        try:
            main = self.context.eval("(async () => {" + self.code + "\n})")
        except quickjs.JSException as exc:  # a syntax error: the script never starts
            fail = self.context.get("__pi_fail")
            self.context.eval("globalThis.__pi_error = null")
            self._report_syntax(str(exc), fail)
            return
        self.context.get("__pi_start")(main)
        self.drain()

    def _report_syntax(self, text: str, _fail) -> None:
        head, *frames = text.strip().split("\n")
        frames = [f.replace("<input>", "codemode.js") for f in frames
                  if "<input>" in f and "(native)" not in f][:1]
        self.write(json.dumps({"op": "done", "ok": False, "error": "\n".join([head, *frames]), "store": {}}))
        self.done = True

    def drain(self) -> None:
        """Run the script's pending jobs until it waits for the harness or ends."""
        try:
            while not self.done and self.context.execute_pending_job():
                pass
        except quickjs.JSException as exc:  # out of memory or stack inside a job
            self.write(json.dumps({"op": "done", "ok": False, "error": str(exc).strip(), "store": {}}))
            self.done = True

    def settle(self, message: dict) -> None:
        value = message.get("value")
        self.context.get("__pi_settle")(message["id"], bool(message.get("ok")),
                                        value if isinstance(value, str) else "")
        self.drain()

    def waiting_for_nothing(self) -> bool:
        return not self.done and self.context.get("__pi_pending")() == 0


def serve(stdin=None, stdout=None) -> None:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout

    def write(text: str) -> None:
        stdout.write(text + "\n")
        stdout.flush()

    script: Script | None = None
    for line in stdin:
        message = json.loads(line)
        if message["op"] == "run":
            script = Script(message["code"], message["config"], write)
            script.start()
        elif message["op"] == "settle" and script is not None and not script.done:
            script.settle(message)
        if script is not None and script.waiting_for_nothing():
            write(json.dumps({"op": "done", "ok": False, "error": "Error: " + NEVER_SETTLES, "store": {}}))
            script.done = True
        if script is not None and script.done:
            script = None


if __name__ == "__main__":
    sys.stdout.reconfigure(write_through=False)  # type: ignore[union-attr]
    serve()
