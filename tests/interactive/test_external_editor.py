"""The chat's external editor (Ctrl+G) as pi 1.6 picks it: the ``externalEditor``
setting, else ``$VISUAL``, else ``$EDITOR``; the text goes to a real editor program (a
script here) and comes back, and an editor that fails leaves the text as it was."""

import sys

import pytest

from pi_core.app.settings import Settings
from pi_plugins.interactive.external_editor import edit_text, editor_command


def test_the_setting_wins_over_visual_and_editor():
    env = {"VISUAL": "vis --wait", "EDITOR": "ed"}
    assert editor_command(Settings({"externalEditor": "code --wait -n"}), env) == ["code", "--wait", "-n"]
    assert editor_command(Settings({}), env) == ["vis", "--wait"]
    assert editor_command(Settings({}), {"EDITOR": "ed"}) == ["ed"]
    assert editor_command(Settings({"externalEditor": "  "}), {}) is None  # prompt_toolkit's own pick


@pytest.mark.process
def test_the_edited_text_comes_back_and_a_failing_editor_keeps_it(tmp_path):
    script = tmp_path / "editor.py"
    script.write_text("import sys\npath = sys.argv[-1]\ntext = open(path).read()\n"
                      "open(path, 'w').write(text.upper() + '\\n')\n")
    assert edit_text("fix the bug", [sys.executable, str(script)]) == "FIX THE BUG"
    assert edit_text("fix the bug", [sys.executable, "-c", "raise SystemExit(3)"]) is None
    assert edit_text("fix the bug", [str(tmp_path / "no-such-editor")]) is None
