"""pi 1.6's fullscreen chat (``--tui-mode fullscreen``, ``tuiMode``): the transcript
scrolls in the alternate screen above a sticky editor, is searched, selected with the
mouse and copied; on exit the terminal is left as it was, with what
``fullscreenExitOutput`` says printed."""

import json
import re
import stat

import pytest
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

SEARCH = "\x1b[102;6u"  # Ctrl+Shift+F as terminals with modified-key reporting send it


def _long_answer(label: str, first_line: str = "") -> Reply:
    lines = [first_line or f"{label} begins here."] + [f"{label} line {n}" for n in range(30)]
    return Reply(text="\n\n".join(lines[:1]) + "\n\n" + "\n".join(lines[1:]))


def _alternate_screen(term) -> bool:
    return term._tmux("display-message", "-t", "t", "-p", "#{alternate_on}").strip() == "1"


def _editor_rows(screen: str) -> list[int]:
    return [i for i, line in enumerate(screen.split("\n")) if line and set(line) == {"─"}]


def _chat_of_three(pi_tui, server, *args, **kwargs):
    server.push(_long_answer("First", "The zebrafish swims first."), _long_answer("Second"),
                _long_answer("Third"))
    term = pi_tui("--tui-mode", "fullscreen", *args, **kwargs)
    for n in ("one", "two", "three"):
        term.submit(f"question {n}")
        term.wait_for("Third line 29" if n == "three" else f"{'First' if n == 'one' else 'Second'} line 29")
        term.wait_idle()
    return term


def _fake_tool(folder, name: str, script: str):
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_fullscreen_opens_in_the_alternate_screen(pi_tui):
    term = pi_tui("--tui-mode", "fullscreen")
    screen = term.wait_drawn("pi-harness")
    assert _alternate_screen(term)
    assert len(_editor_rows(screen)) == 2
    lines = screen.rstrip("\n").split("\n")
    assert len(lines) == term.height and "test-model" in lines[-1]  # the footer on the bottom row


def test_the_tuimode_setting_chooses_fullscreen(pi_tui):
    term = pi_tui(settings={"tuiMode": "fullscreen"})
    term.wait_drawn("pi-harness")
    assert _alternate_screen(term)


def test_tui_mode_regular_gives_the_inline_chat(pi_tui, server):
    server.push(_long_answer("First"))
    term = pi_tui("--tui-mode", "regular", settings={"tuiMode": "fullscreen"})
    term.submit("question")
    term.wait_for("First line 29")
    term.wait_idle()
    assert not _alternate_screen(term)
    assert "First begins here." in term.screen(history=True)  # in the terminal's own scrollback


def test_page_up_reveals_earlier_messages_while_the_editor_stays_put(pi_tui, server):
    term = _chat_of_three(pi_tui, server)
    before = term.screen()
    assert "zebrafish" not in before
    assert any(line.endswith("┃") for line in before.split("\n"))  # the scrollbar's thumb
    rows = _editor_rows(before)
    for _ in range(6):
        term.press("PageUp")
    screen = term.wait_for("zebrafish")
    assert _editor_rows(screen) == rows
    assert "Jump to latest message" in screen
    term.press("C-End")  # the bottom again, following new output
    screen = term.wait_for(lambda s: "Jump to latest message" not in s and "Third line 29" in s)
    assert _editor_rows(screen) == rows


def test_previous_prompt_jumps_to_the_earlier_question(pi_tui, server):
    term = _chat_of_three(pi_tui, server)
    term.send_raw("\x1b[1;6A" * 2)  # Ctrl+Shift+Up, as xterm sends it
    screen = term.wait_for(lambda s: "question two" in s and "Third line 29" not in s)
    top = [line.rstrip("│┃ ").strip() for line in screen.split("\n")[:2]]
    assert "question two" in top  # the question at the top of the view (under its padding)


def test_search_finds_a_word_of_an_earlier_answer_and_highlights_it(pi_tui, server):
    term = _chat_of_three(pi_tui, server)
    term.send_raw(SEARCH)
    term.type("zebrafish")
    screen = term.wait_for("The zebrafish swims first.")
    assert "1/1" in screen
    painted = term.screen(ansi=True)
    line = next(line for line in painted.split("\n") if "zebrafish" in line and "swims" in line)
    # the match in reverse video, the rest of the line not
    assert re.search(r"\x1b\[[0-9;]*7m\s*zebrafish", line), line
    term.press("Escape")
    term.wait_for(lambda s: "1/1" not in s)
    assert "The zebrafish swims first." in term.screen()  # the view stays where the match was


def test_a_mouse_drag_copies_the_selected_text(pi_tui, server, tmp_path):
    bin_dir, copied = tmp_path / "bin", tmp_path / "copied.txt"
    _fake_tool(bin_dir, "xclip", f"cat > {copied}\n")
    server.push(Reply(text="Select the words right here please."))
    term = pi_tui("--tui-mode", "fullscreen", env={"PATH": f"{bin_dir}:/usr/bin:/bin", "DISPLAY": ":99"})
    term.submit("question")
    screen = term.wait_for("right here please.")
    term.wait_idle()
    row = next(i for i, line in enumerate(screen.split("\n")) if "right here please." in line) + 1
    column = screen.split("\n")[row - 1].index("words") + 1
    # press, drag and release with the primary button (SGR mouse reports, 1-based cells)
    term.send_raw(f"\x1b[<0;{column};{row}M\x1b[<32;{column + 5};{row}M\x1b[<32;{column + 16};{row}M"
                  f"\x1b[<0;{column + 16};{row}m")
    term.wait_drawn("Copied selection to clipboard")
    assert copied.read_text() == "words right here"


def test_ctrl_x_copies_the_last_answer(pi_tui, server):
    server.push(Reply(text="The answer is **42**, said the machine."))
    term = pi_tui("--tui-mode", "fullscreen", env={"PATH": "/usr/bin:/bin"})  # no clipboard tool: OSC 52
    term._tmux("set-option", "-s", "set-clipboard", "on")  # tmux keeps what OSC 52 sends as a buffer
    term.submit("question")
    term.wait_for("said the machine.")
    term.wait_idle()
    term.press("C-x")
    term.wait_drawn("Copied last agent message to clipboard")
    assert term._tmux("show-buffer") == "The answer is **42**, said the machine."


def test_quit_leaves_the_terminal_as_it_was_and_prints_the_resume_hint(pi_tui, server):
    server.push(Reply(text="An answer that stays in the alternate screen."))
    term = pi_tui("--tui-mode", "fullscreen", settings={"fullscreenExitOutput": "resume-hint"})
    term.submit("question")
    term.wait_for("stays in the alternate screen.")
    term.wait_idle()
    term.submit("/quit")
    status, _ = term.wait_for_exit()
    assert status == 0
    assert not _alternate_screen(term)
    [session] = term.sessions()
    session_id = json.loads(session.read_text().splitlines()[0])["id"]
    screen = term.screen(history=True)
    assert screen.count("To resume this session:") == 1
    assert f"pi --session {session_id}" in screen
    assert "stays in the alternate screen." not in screen  # resume-hint: no transcript


def test_quit_prints_the_transcript_by_default(pi_tui, server):
    server.push(Reply(text="An answer printed on exit."))
    term = pi_tui("--tui-mode", "fullscreen")
    term.submit("question")
    term.wait_for("An answer printed on exit.")
    term.wait_idle()
    term.submit("/quit")
    status, _ = term.wait_for_exit()
    assert status == 0
    screen = term.screen(history=True)
    assert screen.index("question") < screen.index("An answer printed on exit.") < screen.index(
        "To resume this session:")


def test_hidden_scrollbar_setting_gives_the_transcript_the_whole_width(pi_tui, server):
    term = _chat_of_three(pi_tui, server, settings={"fullscreenScrollbar": "hidden"})
    assert not any(line.endswith(("│", "┃")) for line in term.screen().split("\n"))


def test_the_mouse_wheel_scrolls_by_fullscreen_wheel_scroll_lines(pi_tui, server):
    term = _chat_of_three(pi_tui, server, settings={"fullscreenWheelScrollLines": 10})
    assert "Third line 29" in term.screen()
    term.send_raw("\x1b[<64;10;10M")  # one wheel-up event (SGR report)
    screen = term.wait_for("Jump to latest message")
    assert "Third line 19" in screen and "Third line 20" not in screen  # ten rows further up
    term.send_raw("\x1b[<65;10;10M")  # wheel down: at the end, following again
    term.wait_for(lambda s: "Jump to latest message" not in s and "Third line 29" in s)
    term.send_raw("\x1b[<72;10;10M")  # Alt+wheel up: five times as far, into the second answer
    screen = term.wait_for("Jump to latest message")
    assert "Second line" in screen and "Third line" not in screen


def test_without_copy_on_select_ctrl_x_copies_the_selection(pi_tui, server, tmp_path):
    bin_dir, copied = tmp_path / "bin", tmp_path / "copied.txt"
    _fake_tool(bin_dir, "xclip", f"cat > {copied}\n")
    server.push(Reply(text="Select the words right here please."))
    term = pi_tui("--tui-mode", "fullscreen", settings={"fullscreenCopyOnSelect": False},
                  env={"PATH": f"{bin_dir}:/usr/bin:/bin", "DISPLAY": ":99"})
    term.submit("question")
    screen = term.wait_for("right here please.")
    term.wait_idle()
    row = next(i for i, line in enumerate(screen.split("\n")) if "right here please." in line) + 1
    column = screen.split("\n")[row - 1].index("right") + 1
    term.send_raw(f"\x1b[<0;{column};{row}M\x1b[<32;{column + 10};{row}M\x1b[<0;{column + 10};{row}m")
    # released: the selection shows (reverse video) and nothing is copied yet
    shown, painted = term._wait_until(lambda: term.screen(ansi=True),
                                      lambda s: re.search(r"\x1b\[[0-9;]*7m\s*r", s) is not None, 10)
    assert shown and not copied.exists() and "Copied" not in painted
    term.press("C-x")
    term.wait_drawn("Copied selection to clipboard")
    assert copied.read_text() == "right here"


def test_pi_clipboard_osc52_sends_osc52_besides_the_clipboard_tool(pi_tui, server, tmp_path):
    bin_dir, copied = tmp_path / "bin", tmp_path / "copied.txt"
    _fake_tool(bin_dir, "xclip", f"cat > {copied}\n")
    server.push(Reply(text="Both places get these words."))
    term = pi_tui("--tui-mode", "fullscreen",
                  env={"PATH": f"{bin_dir}:/usr/bin:/bin", "DISPLAY": ":99", "PI_CLIPBOARD_OSC52": "1"})
    term._tmux("set-option", "-s", "set-clipboard", "on")
    term.submit("question")
    screen = term.wait_for("get these words.")
    term.wait_idle()
    row = next(i for i, line in enumerate(screen.split("\n")) if "get these words." in line) + 1
    column = screen.split("\n")[row - 1].index("these") + 1
    term.send_raw(f"\x1b[<0;{column};{row}M\x1b[<32;{column + 11};{row}M\x1b[<0;{column + 11};{row}m")
    term.wait_drawn("Copied selection to clipboard")
    assert copied.read_text() == "these words"
    assert term._tmux("show-buffer") == "these words"
