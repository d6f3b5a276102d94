"""Saving a choice (``Settings.remember``: a default model, a theme, a thinking level)
keeps what else is in the user's settings.json, even when another process (a second pi,
``pi serve``'s page) saved it after this one loaded, and never overwrites a file it
cannot read."""

import json

from pi_core.app.settings import Settings


def test_a_save_keeps_what_another_process_saved_since_this_one_loaded(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    project.mkdir()
    (agent / "settings.json").write_text(json.dumps({"theme": "dark"}))
    first = Settings.load(project, agent)
    second = Settings.load(project, agent)
    second.remember("defaultThinkingLevel", "high")
    first.remember("defaultModel", "test-model")
    assert json.loads((agent / "settings.json").read_text()) == {
        "theme": "dark", "defaultThinkingLevel": "high", "defaultModel": "test-model"}
    assert first.get("defaultThinkingLevel") == "high"  # and this run sees it too


def test_a_settings_file_that_does_not_parse_is_left_as_it_is_and_the_problem_said(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    project.mkdir()
    settings = Settings.load(project, agent)
    broken = '{"theme": "dark", "defaultModel": '
    (agent / "settings.json").write_text(broken)  # being edited by hand
    settings.remember("defaultModel", "test-model")
    assert (agent / "settings.json").read_text() == broken
    assert settings.get("defaultModel") == "test-model"  # this run keeps the choice
    assert any("cannot save defaultModel" in p and "invalid JSON" in p for p in settings.problems)
