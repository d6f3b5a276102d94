"""pi 1.6's crash log and ``/bug``: a crash of the chat is recorded in
``<agent dir>/crashes.json`` with the hint to report it, the next start says so once,
and ``/bug`` writes a report (here a zip; pi 1.6 can also upload it) with the crash
records attached, then clears them."""

from __future__ import annotations

import json
import zipfile

import pytest

from support.llm_server import Reply

CRASHING_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Command


def crash(args, ctx):
    raise KeyboardInterrupt("the widget fell over")  # escapes every handler, like a real crash


@hookimpl
def register_commands():
    return [Command("crash", "Crash on purpose", crash)]
'''

CRASH = {"timestamp": "2026-12-06T09:00:00.000Z", "version": "0.1.0", "kind": "uncaught_exception",
         "message": "the widget fell over", "stack": "Traceback ...", "sessionFile": None, "cwd": "/work"}


@pytest.mark.process
def test_a_crash_is_recorded_and_the_next_start_says_to_run_bug_once(pi_tui, server):
    server.push(Reply(text="Noted."))
    term = pi_tui(plugin=CRASHING_PLUGIN)
    term.submit("remember this")
    term.wait_for("Noted.")
    term.wait_idle()
    term.submit("/crash")
    status, _ = term.wait_for_exit()
    assert status == 1
    after = term.screen(history=True)
    assert "KeyboardInterrupt: the widget fell over" in after
    hint = ("To report this crash: run `pi -r` to resume the session, then run /bug. "
            "The crash details are attached automatically.")
    assert "".join(hint.split()) in "".join(after.split())  # (the terminal wraps it anywhere)
    assert after.index("KeyboardInterrupt: the widget fell over") < after.index("To report this crash")
    [record] = json.loads((term.agent_dir / "crashes.json").read_text())
    assert record["kind"] == "uncaught_exception" and record["message"] == "the widget fell over"
    assert "KeyboardInterrupt" in record["stack"] and record["sessionFile"].endswith(".jsonl")

    term.close()  # one tmux server at a time in a test's folder
    again = pi_tui()
    screen = again.wait_for("Run /bug to report it")
    assert "crashed on" in screen and "(the widget fell over)" in screen
    again.submit("/quit")
    again.wait_for_exit()
    again.close()
    third = pi_tui()
    assert "crashed on" not in third.screen()  # told once


def test_bug_writes_a_report_with_the_crash_and_the_transcript_and_clears_the_log(pi_screen, server):
    server.push(Reply(text="Here is an answer."))
    term = pi_screen(settings={"theme": "dark", "github": {"token": "s3cret-value"}},
                     agent_files={"crashes.json": json.dumps([CRASH])})
    term.wait_for("Run /bug to report it")
    term.submit("a question")
    term.wait_for("Here is an answer.")
    term.wait_idle()
    term.submit("/bug the answer was wrong")
    term.wait_for("Report a bug")
    term.press("Enter")  # the description, prefilled with the command's
    term.wait_for("Include the session transcript?")
    term.press("Enter")  # yes
    term.wait_for("Export as Zip")
    term.press("Enter")
    screen = term.wait_drawn("Bug report exported to")
    [report_file] = list(term.cwd.glob("pi-bug-report-*.zip"))
    assert report_file.name in "".join(screen.split())
    with zipfile.ZipFile(report_file) as archive:
        report = json.loads(archive.read("report.json"))
        transcript = archive.read("session.jsonl").decode()
    assert report["description"] == "the answer was wrong"
    assert report["model"] == "local/test-model"
    assert [c["message"] for c in report["crashes"]] == ["the widget fell over"]
    assert report["settings"]["global"]["github"]["token"] == "[redacted]"
    assert "s3cret-value" not in json.dumps(report)
    assert "Here is an answer." in transcript
    assert not (term.agent_dir / "crashes.json").exists()


def test_bug_without_the_transcript_leaves_it_out(pi_screen):
    term = pi_screen()
    term.submit("/bug")
    term.wait_for("Report a bug")
    term.type("nothing works")
    term.press("Enter")
    term.wait_for("Include the session transcript?")
    term.press("Down", "Enter")
    term.wait_for("Attach a summary written by")
    term.press("Down", "Enter")  # no summary either
    term.wait_for("Export as Zip")
    term.press("Enter")
    term.wait_drawn("Bug report exported to")
    [report_file] = list(term.cwd.glob("pi-bug-report-*.zip"))
    with zipfile.ZipFile(report_file) as archive:
        assert archive.namelist() == ["report.json"]
        assert json.loads(archive.read("report.json"))["description"] == "nothing works"
