"""/settings: pi's options, each change in effect and in settings.json at once."""

import json

import pytest

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


def _settings(term) -> dict:
    path = term.agent_dir / "settings.json"
    return json.loads(path.read_text()) if path.exists() else {}


def test_settings_changes_the_thinking_level_and_settings_json_holds_it(pi_tui):
    term = pi_tui()
    term.submit("/settings")
    dialog = term.wait_for("Settings")
    assert "→ Thinking level" in dialog and "medium" in dialog
    assert "Steering mode" in dialog and "Quiet startup" in dialog
    term.press("Enter")
    term.wait_for(lambda s: "→ medium" in s and "minimal" in s)
    term.press("Down")
    term.wait_for("→ high")
    term.press("Enter")
    screen = term.wait_for(lambda s: "Settings" in s and "Thinking level" in s and "high" in s)
    assert _settings(term)["defaultThinkingLevel"] == "high"
    term.press("Escape")
    screen = term.wait_drawn(lambda s: "Settings" not in s)
    assert screen.rstrip().endswith("test-model • high")


def test_settings_toggles_are_saved_as_pis_keys(pi_tui):
    term = pi_tui()
    term.submit("/settings")
    term.wait_for("→ Thinking level")
    at = 0
    for index, label, key, value in [(2, "Auto-compact", "compaction", {"enabled": False}),
                                     (3, "Steering mode", "steeringMode", "all"),
                                     (6, "Hide thinking", "hideThinkingBlock", True),
                                     (8, "Cache miss notices", "showCacheMissNotices", True),
                                     (9, "Quiet startup", "quietStartup", True)]:
        term.press(*["Down"] * (index - at))
        at = index
        term.wait_for(f"→ {label}")
        term.press("Enter")
        term.wait_for(lambda s, key=key: key in _settings(term))
        assert _settings(term)[key] == value
    term.press("Escape")
    term.wait_drawn(lambda s: "Settings" not in s)


def test_settings_switches_the_theme(pi_tui):
    term = pi_tui()
    term.submit("/settings")
    term.wait_for("→ Thinking level")
    term.press("Down")
    term.wait_for("→ Theme")
    term.press("Enter")
    term.wait_for("light")
    term.press("Down")
    term.press("Enter")
    term.wait_for(lambda s: "Settings" in s and "light" in s)
    assert _settings(term)["theme"] == "light"


def _alternate_screen(term) -> bool:
    return term._tmux("display-message", "-t", "t", "-p", "#{alternate_on}").strip() == "1"


def test_settings_switches_the_tui_mode_while_the_chat_runs(pi_tui, server):
    """pi 1.6 switches regular and fullscreen at once, keeping the conversation, and says so."""
    from support.llm_server import Reply

    server.push(Reply(text="an answer from before the switch"))
    term = pi_tui("--tui-mode", "regular")
    term.submit("hello")
    term.wait_for("an answer from before the switch")
    term.wait_idle()
    assert not _alternate_screen(term)
    for mode, alternate in (("fullscreen", True), ("regular", False)):
        term.submit("/settings")
        term.wait_for("→ Thinking level")
        term.press(*["Down"] * 19)
        term.wait_for("→ TUI mode")
        term.press("Enter")
        term.wait_for(lambda s, mode=mode: any(line.startswith(" → TUI mode") and line.endswith(mode)
                                               for line in s.split("\n")))
        assert _settings(term)["tuiMode"] == mode
        term.wait_for(f"TUI mode: {mode}")  # the new mode runs: keys go to it
        term.press("Escape")
        screen = term.wait_drawn(lambda s, mode=mode: f"TUI mode: {mode}" in s and "Settings" not in s)
        assert _alternate_screen(term) is alternate
        assert "an answer from before the switch" in term.screen(history=not alternate)
    server.push(Reply(text="an answer after the switch"))
    term.submit("again")  # the chat goes on in the new mode
    term.wait_for("an answer after the switch")
