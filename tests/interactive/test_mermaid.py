"""pi 1.6's Mermaid diagrams (``markdown.mermaid``): a ```mermaid block is drawn as box art
where it fits, while the answer streams (the default), once it is complete (``"final"``)
or never (``"off"``); side by side with pi 1.6 in tmux for what it draws."""

import json
import sys
import threading

import pytest

from support.llm_server import Reply
from support.programs import NODE22, require_real
from support.terminal import Terminal

FLOW = "```mermaid\nflowchart LR\n  A[Start] --> B[Done]\n```"
ANSWER = f"Here:\n\n{FLOW}\n\nThat is all."
DRAWN = ["┌───────┐    ┌──────┐", "│ Start ├───▶│ Done │", "└───────┘    └──────┘"]


def _diagram_rows(screen: str) -> list[str]:
    return [line.strip() for line in screen.split("\n") if line.strip()[:1] in ("┌", "│", "└")]


@pytest.mark.process
def test_a_mermaid_block_in_an_answer_is_drawn_as_pi_16_draws_it(tmp_path, server):
    package = require_real("pi16")
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir(parents=True)
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh"}
    programs = {"pi16": [str(NODE22), str(package / "dist" / "cli.js")],
                "ours": [sys.executable, "-m", "pi_plugins.cli"]}
    seen = {}
    for name, argv in programs.items():
        server.push(Reply(text=ANSWER))
        (tmp_path / name).mkdir()
        with Terminal(tmp_path / name, [*argv, "--approve", "--model", "local/test-model"], env=env,
                      cwd=home / "project") as term:
            term.wait_for("(auto)", timeout=30)
            term.type("draw")
            term.press("Enter")
            screen = term.wait_for("That is all.", timeout=30)
            assert "flowchart" not in screen and "```" not in screen
            seen[name] = _diagram_rows(screen)
    assert seen["ours"] == seen["pi16"] == DRAWN


@pytest.mark.process
@pytest.mark.parametrize("tui_mode", ["fullscreen", "regular"])
def test_the_diagram_is_drawn_while_the_answer_still_streams(pi_tui, server, tui_mode):
    streaming = threading.Event()
    server.push(Reply(text=[f"Here:\n\n{FLOW}\n\n", "Still going.", " Done now."], hold=streaming, hold_after=3))
    term = pi_tui("--tui-mode", tui_mode)
    term.submit("draw")
    screen = term.wait_for("Still going.")
    assert "Done now." not in screen and _diagram_rows(screen) == DRAWN
    streaming.set()
    term.wait_for("Done now.")


@pytest.mark.parametrize("tui_mode", ["fullscreen", "regular"])
def test_with_final_the_source_shows_until_the_answer_is_complete(pi_screen, server, tui_mode):
    streaming = threading.Event()
    server.push(Reply(text=[f"Here:\n\n{FLOW}\n\n", "Still going.", " Done now."], hold=streaming, hold_after=3))
    term = pi_screen("--tui-mode", tui_mode, settings={"markdown": {"mermaid": "final"}})

    term.submit("draw")
    screen = term.wait_for("Still going.")
    assert "flowchart LR" in screen and _diagram_rows(screen) == []
    streaming.set()
    screen = term.wait_for(lambda s: "Done now." in s and "flowchart LR" not in s)
    assert _diagram_rows(screen) == DRAWN


def test_with_off_the_source_stays(pi_screen, server):
    server.push(Reply(text=ANSWER))
    term = pi_screen(settings={"markdown": {"mermaid": "off"}})
    term.submit("draw")
    screen = term.wait_for("That is all.")
    assert "A[Start] --> B[Done]" in screen and _diagram_rows(screen) == []


def test_a_diagram_wider_than_the_chat_keeps_its_source(pi_screen, server):
    wide = "```mermaid\nflowchart LR\n" + "\n".join(f"  N{i}[Step number {i}] --> N{i + 1}[Step number {i + 1}]"
                                                    for i in range(6)) + "\n```"
    server.push(Reply(text=f"Wide:\n\n{wide}\n\nThat is all."))
    term = pi_screen(width=60)
    term.submit("draw")
    screen = term.wait_for("That is all.")
    assert "N0[Step number 0] --> N1" in screen and _diagram_rows(screen) == []


def test_a_block_that_is_not_a_diagram_keeps_its_source(pi_screen, server):
    server.push(Reply(text="Odd:\n\n```mermaid\nthis is not mermaid at all\n```\n\nThat is all."))
    term = pi_screen()
    term.submit("draw")
    screen = term.wait_for("That is all.")
    assert "this is not mermaid at all" in screen


@pytest.mark.process  # in tmux: painted in this process in 256 colours, the user box's style
# would keep those codes for later truecolor painters (rich caches a style's codes on it)
def test_a_diagram_in_the_users_own_message_is_drawn(pi_tui, server):
    server.push(Reply(text="Nice diagram."))
    term = pi_tui()
    term.type("\x1b[200~" + FLOW + "\x1b[201~")  # pasted
    term.press("Enter")
    screen = term.wait_for("Nice diagram.")
    assert _diagram_rows(screen)[:3] == DRAWN
