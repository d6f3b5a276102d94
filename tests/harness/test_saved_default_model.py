"""Saving a model as the default (the pickers' save key, pi 1.6's ``setModel(model,
{persist: true})``): ``defaultProvider``/``defaultModel`` are written, and where the
session's models are scoped (``--models``, ``enabledModels``) and the scope lacks the
model, it joins the scope, as pi 1.6's ``_addPersistedDefaultToNonEmptyScope`` does:
the cycle's list at once, ``enabledModels`` in settings.json when that is set."""

import asyncio
import json

import pytest

from pi_core.app.settings import Settings
from pi_core.session import Session
from pi_plugins.sdk import create_harness


def _save(tmp_path, server, *, enabled=None, scope=("a",), chosen="c", persist=True):
    """A session on model a, scoped to ``scope``; ``chosen`` switched to (and saved).
    The scope's keys afterwards and the user's settings.json."""
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (tmp_path / "work").mkdir(exist_ok=True)
    models = {name: server.model("openai-completions", id=name, provider="local") for name in "abc"}
    settings = Settings({"enabledModels": enabled} if enabled is not None else {}, global_dir=agent)

    async def go():
        harness = await create_harness(model=models["a"], session=Session.create(tmp_path / "work", tmp_path / "s"),
                                       cwd=str(tmp_path / "work"), builtins=False, settings=settings)
        harness.scoped_models = [(models[name], None) for name in scope]
        await harness.set_model(models[chosen], persist=persist)
        keys = [m.key for m, _ in harness.scoped_models]
        await harness.close()
        return keys

    keys = asyncio.run(go())
    file = agent / "settings.json"
    return keys, json.loads(file.read_text()) if file.exists() else {}


def test_a_saved_default_outside_the_enabled_models_joins_them(tmp_path, server):
    keys, saved = _save(tmp_path, server, enabled=["local/a", "local/b"], scope="ab")
    assert keys == ["local/a", "local/b", "local/c"]
    assert saved == {"enabledModels": ["local/a", "local/b", "local/c"],
                     "defaultProvider": "local", "defaultModel": "c"}


def test_a_saved_default_in_the_scope_changes_neither(tmp_path, server):
    keys, saved = _save(tmp_path, server, enabled=["local/a", "local/c"], scope="ac")
    assert keys == ["local/a", "local/c"]
    assert saved == {"enabledModels": ["local/a", "local/c"], "defaultProvider": "local", "defaultModel": "c"}


def test_enabled_models_naming_it_in_another_case_are_left_as_they_are(tmp_path, server):
    keys, saved = _save(tmp_path, server, enabled=["local/a", "LOCAL/C"], scope="a")
    assert keys == ["local/a", "local/c"]  # the scope the session cycles through grows
    assert saved["enabledModels"] == ["local/a", "LOCAL/C"]


def test_a_scope_from_models_flag_grows_for_the_session_only(tmp_path, server):
    keys, saved = _save(tmp_path, server, enabled=None, scope="ab")
    assert keys == ["local/a", "local/b", "local/c"]
    assert saved == {"defaultProvider": "local", "defaultModel": "c"}


def test_without_a_scope_only_the_default_is_saved(tmp_path, server):
    keys, saved = _save(tmp_path, server, enabled=None, scope="")
    assert keys == [] and saved == {"defaultProvider": "local", "defaultModel": "c"}


def test_a_switch_that_is_not_saved_leaves_scope_and_settings_alone(tmp_path, server):
    keys, saved = _save(tmp_path, server, enabled=["local/a"], scope="a", persist=False)
    assert keys == ["local/a"] and saved == {}


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_saved_settings_are_what_pi16s_ctrl_s_in_model_writes(tmp_path, server):
    """pi 1.6 in a terminal: /model, Tab to every model, pick c, Ctrl+S; its settings.json
    and ours after ``set_model(c, persist=True)`` on the same scope are alike."""
    from support.programs import node_for, require_real
    from support.terminal import Terminal

    start = {"enabledModels": ["local/a", "local/b"], "defaultProvider": "local", "defaultModel": "a"}
    agent, project = tmp_path / "pi16" / "agent", tmp_path / "pi16" / "project"
    agent.mkdir(parents=True)
    project.mkdir()
    (agent / "models.json").write_text(json.dumps(server.models_json("local", apiKey="k", models=["a", "b", "c"])))
    (agent / "settings.json").write_text(json.dumps(start))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "pi16" / "home"), "PI_CODING_AGENT_DIR": str(agent),
           "PI_OFFLINE": "1", "TERM": "xterm-256color"}
    argv = [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"), "--tui-mode", "regular"]
    with Terminal(tmp_path, argv, env=env, cwd=project, width=120) as term:
        term.wait_for(lambda s: "Model scope" in s and "to show full startup help" in s, timeout=30)
        term.type("/model")
        term.wait_for(lambda s: "/model" in s.split("to show full startup help")[-1])  # in the editor
        term.press("Enter")
        term.wait_for("Ctrl+S to set as default", timeout=20)
        term.press("Tab")
        term.type("c")
        term.wait_for("Model Name: c")
        term.press("C-s")
        term.wait_for("Default model: local/c")
    theirs = json.loads((agent / "settings.json").read_text())
    theirs.pop("lastChangelogVersion", None)

    ours_dir = tmp_path / "ours"
    ours_dir.mkdir()
    keys, ours = _save(ours_dir, server, enabled=start["enabledModels"], scope="ab")
    assert ours == {**theirs} == {"enabledModels": ["local/a", "local/b", "local/c"],
                                  "defaultProvider": "local", "defaultModel": "c"}
    assert keys == ["local/a", "local/b", "local/c"]
