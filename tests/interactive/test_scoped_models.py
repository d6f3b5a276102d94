"""/scoped-models: the models Ctrl+P cycles through, saved as enabledModels with Ctrl+S."""

import json

import pytest

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


def _model_lines(screen: str) -> list[str]:
    return [line.strip() for line in screen.splitlines() if line.strip().startswith("Model: ")]


def test_scoped_models_choose_the_cycle_and_ctrl_s_saves_them(pi_tui):
    term = pi_tui()
    term.submit("/scoped-models")
    dialog = term.wait_for("Model Configuration")
    assert "✓ local/test-model" in dialog and "✓ local/third-model" in dialog and "all enabled" in dialog
    term.press("Enter")  # the first toggle keeps only this one, as pi
    term.wait_for("1/3 enabled")
    term.press("Down", "Down")
    term.wait_for("→   local/third-model")
    term.press("Enter")
    dialog = term.wait_for(lambda s: "2/3 enabled" in s and "(unsaved)" in s)
    term.press("M-Up")  # third-model before test-model in the cycle
    term.wait_for(lambda s: s.index("local/third-model") < s.index("local/test-model"))
    term.press("C-s")
    term.wait_for(lambda s: "2/3 enabled" in s and "(unsaved)" not in s)
    settings = json.loads((term.agent_dir / "settings.json").read_text())
    assert settings["enabledModels"] == ["local/third-model", "local/test-model"]
    term.press("Escape")
    term.wait_drawn(lambda s: "Model Configuration" not in s)
    term.press("C-p")
    term.wait_drawn("Model: local/third-model")
    term.press("C-p")
    screen = term.wait_drawn(lambda s: len(_model_lines(s)) == 2)
    # not other-model; back from a model without reasoning, pi 1.6 keeps the current level
    # (no saved default): "off"
    assert _model_lines(screen) == ["Model: local/third-model", "Model: local/test-model • off"]
