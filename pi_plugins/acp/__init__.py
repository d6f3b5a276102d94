"""ACP mode (``pi --mode acp``): the Agent Client Protocol on stdin and stdout, so editors
(Zed and others) talk to pi directly, without an adapter such as pi-acp.

- ``agent``: the protocol's agent side (initialize, sessions, prompts, cancel, modes,
  models, commands), over the ``agent-client-protocol`` package (the ``acp`` extra);
- ``updates``: harness events as ``session/update`` notifications (message and thought
  chunks, tool calls with their status and diffs);
- ``ui``: ``ctx.ui`` as the editor's permission requests.
"""

from pi_core import hookimpl
from pi_core.protocol.shell import Mode


async def run_acp(app) -> int:
    # imported when the mode runs: every other mode registers this one too
    from pi_plugins.acp.agent import run_acp as run

    return await run(app)


@hookimpl
def register_modes():
    return [Mode("acp", run_acp, "the Agent Client Protocol on stdin/stdout, for editors")]
