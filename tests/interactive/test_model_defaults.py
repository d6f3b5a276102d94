"""pi 1.6's ``/thinking``, Ctrl+S in ``/model`` and ``/thinking`` (``app.models.save``,
``app.thinking.save``) saving the default for new sessions, and the editor's history keys
(``tui.editor.historyPrevious``/``historyNext``), in this process on an emulated screen."""

from __future__ import annotations

import json

from support.llm_server import Reply


def _settings(term) -> dict:
    return json.loads((term.agent_dir / "settings.json").read_text())


def test_thinking_with_a_level_sets_it_and_a_wrong_one_is_refused(pi_screen):
    term = pi_screen()
    term.submit("/thinking high")
    screen = term.wait_drawn("Thinking level: high")
    assert screen.rstrip().endswith("test-model • high")
    term.submit("/thinking loud")
    term.wait_for("Unknown thinking level 'loud' for this model; it takes: off, minimal, low, medium, high")


def test_thinking_lists_the_levels_and_ctrl_s_saves_the_default(pi_screen):
    term = pi_screen(settings={"defaultThinkingLevel": "medium"})
    term.submit("/thinking")
    dialog = term.wait_for("Thinking Level")
    assert "shift+tab cycles thinking levels in-session" in dialog
    assert "→ ✓ medium     Moderate reasoning (~8k tokens) · default" in dialog
    assert "    high       Deep reasoning (~16k tokens)" in dialog
    assert "enter to select · ctrl+s to set as default · escape/ctrl+c to cancel" in dialog
    term.press("Down")
    term.press("Enter")
    term.wait_drawn("Thinking level: high")
    assert _settings(term)["defaultThinkingLevel"] == "medium"  # Enter: this session's only (pi 1.6)
    term.submit("/thinking")
    term.wait_for("→ ✓ high")
    term.press("Up", "Up")
    term.press("C-s")
    screen = term.wait_drawn("Default thinking level: low")
    assert screen.rstrip().endswith("test-model • low")
    assert _settings(term)["defaultThinkingLevel"] == "low"


def test_enter_in_model_switches_for_this_session_only(pi_screen):
    term = pi_screen()
    term.submit("/model")
    term.wait_for("Select a model")
    term.type("third")
    term.wait_for(lambda s: "→ third-model [local]" in s and "test-model [local]" not in s)
    term.press("Enter")
    screen = term.wait_drawn("Model: local/third-model")
    assert screen.rstrip().endswith("third-model")
    settings = term.agent_dir / "settings.json"
    saved = json.loads(settings.read_text()) if settings.exists() else {}
    assert "defaultModel" not in saved and "defaultProvider" not in saved  # pi 1.6: Ctrl+S saves


def test_ctrl_s_in_model_saves_the_default_model(pi_screen):
    term = pi_screen()
    term.submit("/model")
    dialog = term.wait_for("Select a model")
    assert "enter to select · ctrl+s to set as default · escape/ctrl+c to cancel" in dialog
    term.type("third")
    term.wait_for(lambda s: "→ third-model [local]" in s and "test-model [local]" not in s)
    term.press("C-s")
    screen = term.wait_drawn("Default model: local/third-model")
    assert screen.rstrip().endswith("third-model")
    saved = _settings(term)
    assert (saved["defaultProvider"], saved["defaultModel"]) == ("local", "third-model")


def test_ctrl_s_on_a_model_outside_enabled_models_adds_it_to_them(pi_screen):
    """pi 1.6's _addPersistedDefaultToNonEmptyScope: the saved default joins a non-empty
    ``enabledModels``, so the next start's scope still holds it."""
    term = pi_screen(settings={"enabledModels": ["local/test-model"]})
    term.submit("/model")
    term.wait_for("Select a model")
    term.type("third")
    term.wait_for(lambda s: "→ third-model [local]" in s)
    term.press("C-s")
    term.wait_drawn("Default model: local/third-model")
    saved = _settings(term)
    assert saved["enabledModels"] == ["local/test-model", "local/third-model"]
    assert (saved["defaultProvider"], saved["defaultModel"]) == ("local", "third-model")


def test_history_keys_browse_earlier_prompts_wherever_the_cursor_is(pi_screen, server):
    server.push(Reply(text="first answer"), Reply(text="second answer"))
    keybindings = {"tui.editor.historyPrevious": "alt+p", "tui.editor.historyNext": "alt+n"}
    term = pi_screen(agent_files={"keybindings.json": json.dumps(keybindings)})
    for prompt in ("first prompt", "second prompt"):
        term.submit(prompt)
        term.wait_idle()
    term.type("line one")
    term.press("C-j")  # a second line: Up would move the cursor to the first
    term.type("line two")
    term.wait_for(lambda s: "line two" in term.editor(s))
    term.press("M-p")  # Up here would move to line one; the history key goes to the prompts
    term.wait_for(lambda s: term.editor(s) == "second prompt")
    term.press("M-p")
    term.wait_for(lambda s: term.editor(s) == "first prompt")
    term.press("M-n")
    term.wait_for(lambda s: term.editor(s) == "second prompt")
