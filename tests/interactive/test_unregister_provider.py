"""pi's ``unregisterProvider``: a plugin's provider and its models leave the model
registry, and so the /model list, at once (tmux)."""

import pytest

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

PROXY_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Command
from pi_core.protocol.model import Model


@hookimpl
def register_models():
    return [Model(id="proxy-model", provider="my-proxy", api="openai-completions", name="Proxy model",
                  base_url="http://127.0.0.1:9/v1")]


async def drop(args, ctx):
    first = ctx.unregister_provider("my-proxy")
    again = ctx.unregister_provider("my-proxy")  # no effect the second time, as pi
    ctx.ui.notify(f"unregistered {first} then {again}", "info")


@hookimpl
def register_commands():
    return [Command("drop-proxy", "Remove the proxy provider", drop)]
'''


def test_an_unregistered_providers_models_leave_the_model_list(pi_tui):
    term = pi_tui(plugin=PROXY_PLUGIN)
    term.submit("/model proxy")
    term.wait_for("proxy-model [my-proxy]")
    term.press("Escape")
    term.wait_drawn(lambda s: "Select a model" not in s)
    term.submit("/drop-proxy")
    term.wait_for("unregistered True then False")
    term.submit("/model")
    screen = term.wait_for("→ test-model [local]")
    assert "proxy-model" not in screen and "my-proxy" not in screen
