"""settings.json keys of pi's that change the chat (docs/settings.md), in a real terminal."""

import json
import stat
import time

import pytest
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


def _settings(term) -> dict:
    return json.loads((term.agent_dir / "settings.json").read_text())


def test_hide_thinking_block_hides_thinking_and_ctrl_t_keeps_the_choice(pi_tui, server):
    server.push(Reply(thinking="Weighing the two options carefully.", text="Option B."))
    term = pi_tui(settings={"hideThinkingBlock": True})
    term.submit("A or B?")
    screen = term.wait_for("Option B.")
    assert "Weighing" not in screen and "Thinking..." in screen
    term.press("C-t")
    term.wait_for(lambda s: "Weighing the two options carefully." in s and "Thinking blocks: visible" in s)
    assert _settings(term)["hideThinkingBlock"] is False


def test_the_header_names_the_harness_and_its_keys(pi_tui):
    loud = pi_tui()
    assert "pi-harness v" in loud.screen() and "commands" in loud.screen()


def test_quiet_startup_leaves_out_the_header(pi_tui):
    quiet = pi_tui(settings={"quietStartup": True})
    screen = quiet.screen()
    assert "pi-harness v" not in screen and "interrupt" not in screen
    assert "(auto)" in screen  # the footer is there


def test_double_escape_action_fork_opens_the_fork_dialog(pi_tui, server):
    server.push(Reply(text="First answer."))
    term = pi_tui(settings={"doubleEscapeAction": "fork"})
    term.submit("first question")
    term.wait_for("First answer.")
    term.wait_idle()
    term.press("Escape")
    term.press("Escape")
    term.wait_for("Fork from which message?")
    term.press("Escape")
    term.wait_drawn(lambda s: "Fork from which message?" not in s)


def test_double_escape_action_none_opens_nothing(pi_tui):
    term = pi_tui(settings={"doubleEscapeAction": "none"})
    term.press("Escape")
    term.press("Escape")
    time.sleep(0.5)  # the second Esc stands alone (not Alt+/ with what is typed next)
    term.submit("/session")  # a dialog would have taken the keys
    screen = term.wait_drawn("Session Info")
    assert "Session tree" not in screen and "No entries in session" not in screen


def test_editor_padding_and_autocomplete_rows(pi_tui):
    term = pi_tui(settings={"editorPaddingX": 3, "autocompleteMaxVisible": 3})
    term.type("/")
    screen = term.wait_for("Choose the model")
    rows = [line for line in screen.splitlines() if line.strip().startswith(("/", "model", "compact", "tree"))]
    lines = screen.rstrip().split("\n")
    borders = [i for i, line in enumerate(lines) if line and set(line) == {"─"}]
    assert lines[borders[-2] + 1].startswith("   /")  # three columns of padding
    menu = lines[borders[-1] + 1:-2]
    assert len([line for line in menu if line.strip()]) == 3, menu
    assert rows


def test_the_editor_draws_its_cursor_unless_show_hardware_cursor(pi_tui):
    term = pi_tui()
    term.type("abc")
    term.wait_drawn(lambda s: term.editor(s) == "abc")
    assert not term.cursor_visible()
    assert "\x1b[7m" in term.screen(ansi=True)  # the drawn cursor (reverse video)


def test_show_hardware_cursor_shows_the_terminals_cursor(pi_tui):
    term = pi_tui(settings={"showHardwareCursor": True})
    term.type("abc")
    term.wait_drawn(lambda s: term.editor(s) == "abc")
    assert term.cursor_visible()


def test_show_hardware_cursor_uses_only_the_terminals_cursor(pi_tui):
    """pi 1.6: with ``showHardwareCursor`` the reverse-video cursor is no longer drawn too."""
    term = pi_tui(settings={"showHardwareCursor": True})
    term.type("abc")
    term.wait_drawn(lambda s: term.editor(s) == "abc")
    assert term.cursor_visible() and "\x1b[7m" not in term.screen(ansi=True)


def test_code_block_indent(pi_tui, server):
    server.push(Reply(text="Run:\n\n```sh\nmake test\n```\n"))
    term = pi_tui(settings={"markdown": {"codeBlockIndent": "    "}})
    term.submit("how?")
    screen = term.wait_for("make test")
    [line] = [line for line in screen.splitlines() if "make test" in line]
    assert line.startswith(" " * 5 + "make test")  # the chat's one column, then the indent


def test_branch_summary_skip_prompt_moves_without_asking(pi_tui, server):
    server.push(Reply(text="First answer."), Reply(text="Second answer."))
    term = pi_tui(settings={"branchSummary": {"skipPrompt": True}})
    term.submit("first question")
    term.wait_for("First answer.")
    term.submit("second question")
    term.wait_for("Second answer.")
    term.wait_idle()
    term.submit("/tree")
    term.wait_for("Session tree")
    term.press("Up")
    term.wait_for("→ • user: second question")
    term.press("Enter")
    screen = term.wait_drawn("Navigated to the selected point")
    assert "Summarize the branch" not in screen
    assert not [e for e in term.entries() if e["type"] == "branch_summary"]
    assert len(server.requests) == 2  # no summary was asked of the model


def test_shell_path_and_command_prefix_reach_the_bash_tool_and_user_commands(pi_tui, server, tmp_path):
    log = tmp_path / "shell.log"
    shell = tmp_path / "myshell"
    shell.write_text(f"#!/bin/sh\necho used >> {log}\nexec /bin/sh \"$@\"\n")
    shell.chmod(shell.stat().st_mode | stat.S_IXUSR)
    server.push(Reply(tool_calls=[("bash", {"command": "echo greeting=$GREETING"})]), Reply(text="Done."))
    term = pi_tui(settings={"shellPath": str(shell), "shellCommandPrefix": "GREETING=from-prefix"})
    term.submit("greet")
    term.wait_for("Done.")
    result = server.requests[1].body["messages"][-1]
    assert "greeting=from-prefix" in json.dumps(result)
    term.wait_idle()
    term.submit("!echo user=$GREETING")
    term.wait_for("user=from-prefix")
    assert log.read_text().split() == ["used", "used"]


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")


def test_block_images_keeps_images_from_the_model(pi_tui, server, tmp_path):
    (tmp_path / "project" / "pic.png").write_bytes(PNG)
    server.push(Reply(text="I cannot see it."))
    term = pi_tui("@pic.png", "what is this?", settings={"images": {"blockImages": True}})
    term.wait_for("I cannot see it.")
    sent = json.dumps(server.requests[0].body["messages"])
    assert "Image reading is disabled." in sent and "image_url" not in sent and "iVBOR" not in sent


def test_the_header_lists_what_was_loaded(pi_tui):
    skill = "---\nname: pdf-tools\ndescription: Work with PDF files\n---\nUse pdftotext.\n"
    term = pi_tui("--approve", files={"AGENTS.md": "Be brief.\n", ".pi/skills/pdf-tools/SKILL.md": skill,
                         ".pi/prompts/review.md": "Review the code.\n"},
                  plugin="from pi_core import hookimpl\n")
    screen = term.screen()
    lines = [line.strip() for line in screen.splitlines()]
    assert lines[lines.index("[Context]") + 1] == "AGENTS.md"
    assert lines[lines.index("[Skills]") + 1] == "pdf-tools"
    assert lines[lines.index("[Prompts]") + 1] == "/review"
    assert lines[lines.index("[Extensions]") + 1] == "test_plugin.py"


def test_the_header_names_each_package_extension_once_and_loads_its_skills(pi_tui):
    """A pi package in settings.json (as pi installs it): its skill is listed, its
    TypeScript extension named once, on one line."""
    manifest = json.dumps({"name": "pi-demo", "version": "1.0.0",
                           "pi": {"extensions": ["./index.ts"], "skills": ["./skills"]}})
    skill = "---\nname: demo-skill\ndescription: A demo skill.\n---\nDo it.\n"
    term = pi_tui(settings={"packages": ["npm:pi-demo"]}, agent_files={
        "npm/node_modules/pi-demo/package.json": manifest,
        "npm/node_modules/pi-demo/index.ts": "export default function () {}\n",
        "npm/node_modules/pi-demo/skills/demo-skill/SKILL.md": skill})
    screen = term.screen()
    lines = [line.strip() for line in screen.splitlines()]
    assert lines[lines.index("[Skills]") + 1] == "demo-skill"
    assert screen.count("pi-demo (index.ts): TypeScript extension for pi (Node); cannot run here") == 1
