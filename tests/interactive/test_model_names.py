"""pi 1.6 shows a model's name beside its id in ``/model`` and ``/scoped-models`` only
when the name says something the id does not, such as a ``modelOverrides`` rename."""

from __future__ import annotations

import json

import pytest

from pi_plugins.interactive.model_dialogs import distinct_name


class _M:
    def __init__(self, id: str, name: str) -> None:
        self.id, self.name = id, name


@pytest.mark.parametrize("model_id,name,shown", [
    ("minimax/minimax-m3", "MiniMax M3 [rasmus@openrouter, parasail]", True),
    ("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5 (EU)", False),
    ("test-model", "Test Model", False),
    ("mistral-small-2603", "Mistral Small 4", True),  # a one-letter word must be a whole id word
    ("gpt-5", "", False),
])
def test_a_name_is_shown_only_when_it_adds_words_the_id_lacks(model_id, name, shown):
    assert distinct_name(_M(model_id, name)) == (name if shown else None)


def test_a_model_renamed_by_model_overrides_shows_its_name_beside_its_id(pi_screen, server, monkeypatch):
    monkeypatch.setenv("PI_OFFLINE", "1")  # no catalogue refresh
    models = server.models_json("local", models=[{"id": "test-model", "name": "Test Model"}])
    models["providers"]["anthropic"] = {"modelOverrides": {"claude-haiku-4-5": {"name": "Haiku [work proxy]"}}}
    auth = {"anthropic": {"type": "api_key", "key": "sk-ant-api03-test"}}
    term = pi_screen(agent_files={"models.json": json.dumps(models), "auth.json": json.dumps(auth)})
    term.submit("/model")
    term.wait_for("Select a model")
    term.type("haiku-4-5")
    assert "claude-haiku-4-5 (Haiku [work proxy]) [anthropic]" in term.wait_for("work proxy")
    term.press("Escape")
    term.wait_drawn(lambda s: "Select a model" not in s)
    term.submit("/scoped-models")
    term.wait_for("Model Configuration")
    term.type("haiku-4-5")
    assert "anthropic/claude-haiku-4-5 (Haiku [work proxy])" in term.wait_for("work proxy")
    assert "(Test Model)" not in term.screen()
