"""pi's ``unregisterProvider``: a plugin's provider and its models leave the model
registry, and so the /model list, at once (tmux)."""

import pytest
from support.llm_server import Reply

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
    term.wait_drawn("unregistered True then False")  # printed: typing now reaches the editor
    term.submit("/model")
    screen = term.wait_for("→ test-model [local]")
    assert "proxy-model" not in screen and "my-proxy" not in screen


OVERRIDE_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Command


async def replace(args, ctx):
    ctx.register_provider("anthropic", {"base_url": "http://127.0.0.1:9/v1", "api_key": "PROXY_KEY",
                                        "api": "openai-completions",
                                        "models": [{"id": "proxy-claude", "name": "Proxy Claude"}]})
    ctx.ui.notify("replaced anthropic", "info")


async def repoint(args, ctx):
    ctx.register_provider("anthropic", {"base_url": "SERVER_URL"})
    ctx.ui.notify("anthropic re-pointed", "info")


async def restore(args, ctx):
    done = ctx.unregister_provider("anthropic")
    model = ctx.model_registry.find("anthropic", "claude-sonnet-4-5")
    ctx.ui.notify(f"restored {done}: claude-sonnet-4-5 at {model.base_url}", "info")


@hookimpl
def register_commands():
    return [Command("replace", "Own anthropic models", replace), Command("repoint", "Anthropic elsewhere", repoint),
            Command("restore", "Anthropic as built", restore)]
'''


def test_unregistering_a_provider_that_replaced_a_built_in_ones_models_brings_them_back(pi_tui):
    term = pi_tui(plugin=OVERRIDE_PLUGIN, env={"ANTHROPIC_API_KEY": "sk-test"})
    term.submit("/replace")
    term.wait_drawn("replaced anthropic")
    term.submit("/model anthropic")
    screen = term.wait_for("proxy-claude [anthropic]")
    assert "claude-sonnet-4-5" not in screen and "claude-3-5-haiku" not in screen
    term.press("Escape")
    term.wait_drawn(lambda s: "Select a model" not in s)
    term.submit("/restore")
    term.wait_drawn("restored True: claude-sonnet-4-5 at https://api.anthropic.com")
    term.submit("/model sonnet-4-5")  # the catalogue's Claudes are more than a screen
    screen = term.wait_for(lambda s: any(line.strip().startswith("claude-sonnet-4-5 ") and "[anthropic]" in line
                                         for line in s.splitlines()))
    assert "proxy-claude" not in screen


def test_a_re_pointed_built_in_provider_goes_back_to_its_own_url(pi_tui, server):
    server.push(Reply(text="Answered by the local server."))
    term = pi_tui(plugin=OVERRIDE_PLUGIN.replace("SERVER_URL", server.url), env={"ANTHROPIC_API_KEY": "sk-test"})
    term.submit("/repoint")
    term.wait_drawn("anthropic re-pointed")
    term.submit("/model anthropic/claude-sonnet-4-5")
    term.wait_drawn("claude-sonnet-4-5")
    term.submit("hello there")
    term.wait_for("Answered by the local server.")
    assert server.requests[0].body["model"] == "claude-sonnet-4-5"
    term.wait_idle()
    term.submit("/restore")
    term.wait_drawn("restored True: claude-sonnet-4-5 at https://api.anthropic.com")
