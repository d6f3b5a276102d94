"""A plugin file with a model that needs no network and no key, and uses a tool: it asks
the bash tool for ``ls``, then answers with what the tool printed. The whole agent loop
runs (tool call, execution, the session file), so it shows pi working on a fresh machine:

    pi -e docs/examples/offline_tools.py --model scripted/lister -p "What is in this folder?"
"""

from pi_core import hookimpl
from pi_core.testing import Reply, ScriptedProvider, scripted_model


def answer(context):
    last = context.messages[-1]
    if last.role != "toolResult":
        return Reply(text="Let me look.", tool_calls=[("bash", {"command": "ls"})])
    listing = "".join(block.text for block in last.content if block.type == "text")
    return Reply(text=f"This folder holds:\n{listing.strip()}")


provider = ScriptedProvider(router=answer)


@hookimpl
def register_providers():
    return [provider]


@hookimpl
def register_models():
    return [scripted_model("lister")]
