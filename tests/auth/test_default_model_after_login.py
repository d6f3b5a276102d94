"""With no model selected, a sign-in selects the provider's default model, as pi
0.73.1's chat does after ``/login``; and a start without a configured model takes pi's
default of the first provider with a key, so ``pi auth login openai-codex`` and then
``pi`` use pi's Codex model. The chat starts without any model, as pi's does, so that
``/login`` is there to get one."""

import asyncio
import json
import os
import subprocess
import time

import pytest

from pi_plugins.models.default_models import DEFAULT_MODEL_PER_PROVIDER
from pi_plugins.models.start_model import choose_model
from pi_plugins.cli.run_args import RunArgs, UsageError
from pi_plugins.cli.wiring import build_app
from pi_core.protocol.model import is_unknown
from pi_core.testing.ui import RecordingUI
from pi_plugins.signin import chat


@pytest.fixture(autouse=True)
def nobody(tmp_path, monkeypatch):
    """An agent dir with nothing in it, and no key anywhere."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_OFFLINE", "1")
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name.startswith(("AWS_", "GOOGLE_", "GCLOUD_")):
            monkeypatch.delenv(name)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")


def login_in_a_fresh_chat(tmp_path, ui, args=""):
    async def scenario():
        app = await build_app(RunArgs(), cwd=str(tmp_path / "project"), ui=ui, chat=True)
        try:
            before = app.harness.model
            await chat.login(args, app.harness.ctx)
            return before, app.harness.model, None
        finally:
            await app.harness.close()
    return asyncio.run(scenario())


def test_the_chat_starts_without_a_model_and_login_selects_the_providers_default(tmp_path):
    ui = RecordingUI(selects=["Sign in with an API key", "Anthropic • "], inputs=["sk-ant-api03-chat"])
    before, after, saved = login_in_a_fresh_chat(tmp_path, ui)
    assert is_unknown(before)
    assert after.key == "anthropic/claude-opus-5-5"
    assert any(n.startswith("Saved API key for anthropic. Selected claude-opus-5-5. Credentials saved to ")
               for n in ui.messages())


def test_without_a_default_to_take_the_sign_in_says_to_use_model_in_pis_words():
    from pi_plugins.providers.catalogue import builtin_models
    from pi_plugins.signin.chat import select_after_login

    models = builtin_models()
    assert select_after_login("corp", models, "Saved API key for corp") == (
        None, 'Saved API key for corp, but no default model is configured for provider "corp". '
              "Use /model to select a model.")
    assert select_after_login("anthropic", [], "Logged in to Anthropic")[1] == (
        "Logged in to Anthropic, but no models are available for that provider. Use /model to select a model.")
    without = [m for m in models if m.key != "openai-codex/gpt-6.2-sol"]
    assert select_after_login("openai-codex", without, "Logged in to ChatGPT")[1] == (
        'Logged in to ChatGPT, but its default model "gpt-6.2-sol" is not available. Use /model to select a model.')


def test_a_chat_that_has_a_model_keeps_it_after_login(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    ui = RecordingUI(selects=["Sign in with an API key", "Anthropic • "], inputs=["sk-ant-api03-chat"])
    before, after, _ = login_in_a_fresh_chat(tmp_path, ui)
    assert before.key == after.key == "openai/gpt-6.2-sol"  # pi's default for openai, the one with a key
    assert any(n.startswith("Saved API key for anthropic. Credentials saved to ") for n in ui.messages())


def test_without_the_chat_no_model_is_still_an_error(tmp_path):
    with pytest.raises(UsageError, match="No model available"):
        asyncio.run(build_app(RunArgs(print=True, messages=["hi"]), cwd=str(tmp_path / "project")))


def test_after_a_chatgpt_sign_in_the_next_start_takes_pis_codex_model(tmp_path):
    from pi_plugins.models.registry import ModelRegistry
    from pi_core.app.settings import Settings
    from pi_plugins.providers.catalogue import builtin_models

    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "auth.json").write_text(json.dumps({"openai-codex": {
        "type": "oauth", "access": "a", "refresh": "r", "expires": int(time.time() * 1000) + 3_600_000,
        "accountId": "acct"}}))
    os.chmod(agent / "auth.json", 0o600)
    registry = ModelRegistry(builtin_models(), agent_dir=agent, env={})
    model, *_ = choose_model(registry, Settings({}))
    assert model.key == "openai-codex/gpt-6.2-sol"
    both = ModelRegistry(builtin_models(), agent_dir=agent, env={"GROQ_API_KEY": "k"})
    assert choose_model(both, Settings({}))[0].key == "openai-codex/gpt-6.2-sol"  # earlier in pi's table


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_default_models_are_pis(tmp_path):
    from support.programs import node_for, require_real

    package = require_real("pi16")
    script = ("const m = await import(process.argv[1] + '/dist/core/model-resolver.js');"
              "console.log(JSON.stringify(m.defaultModelPerProvider));")
    done = subprocess.run([node_for("pi16"), "--input-type=module", "-e", script, str(package)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    assert DEFAULT_MODEL_PER_PROVIDER == theirs and list(DEFAULT_MODEL_PER_PROVIDER) == list(theirs)
