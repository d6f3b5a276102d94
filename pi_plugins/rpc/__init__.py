"""RPC mode (``pi --mode rpc``): pi's JSONL command protocol on stdin and stdout.

- ``protocol``: framing (LF-only lines), responses, the stdin reader;
- ``commands``: every command pi's RPC mode takes, with pi's response shapes;
- ``ui``: ``ctx.ui`` as pi's extension-UI sub-protocol (dialogs answered by the client);
- ``session``: one harness as the protocol, whatever the transport: events as frames,
  each command dispatched as a task, shutdown (``pi serve`` drives it over WebSockets);
- ``server``: the stdin/stdout transport, signals.

Events are written as pi writes them: ``message_update`` carries the current message
snapshot (pi's RPC clients read it) unless ``--events lean`` asks for JSON mode's lean
lines (the delta only).
"""

from pi_core import hookimpl
from pi_core.protocol.shell import Mode


async def run_rpc(app) -> int:
    # imported when the mode runs: every other mode registers this one too
    from pi_plugins.rpc.server import run_rpc as run

    return await run(app)


@hookimpl
def register_modes():
    return [Mode("rpc", run_rpc, "pi's JSONL command protocol on stdin/stdout")]
