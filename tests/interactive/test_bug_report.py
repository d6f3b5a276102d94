"""``/bug``'s summary and its record, in-process (side by side with pi 1.6:
``test_bug_report_pi16.py``): the summary the model writes goes in the zip as
``summary.md`` and the session gets a ``pi.bug-report`` entry; a summary that fails says
so and writes nothing; a report cancelled at any question writes nothing."""

from __future__ import annotations

import json
import zipfile

from support.llm_server import Reply


def _to_summary(term, description: str = "it broke") -> None:
    term.submit(f"/bug {description}")
    term.wait_for("Report a bug")
    term.press("Enter")
    term.wait_for("Include the session transcript?")
    term.press("Down", "Enter")
    term.wait_for("Attach a summary written by")
    term.press("Enter")
    term.wait_for("Export as Zip")
    term.press("Enter")


def _entries(term) -> list[dict]:
    [path] = list((term.agent_dir / "sessions").rglob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_summary_goes_in_the_zip_and_the_session_records_the_report(pi_screen, server):
    server.push(Reply(text="An answer."), Reply(text="## What went wrong\nThe answer."))
    term = pi_screen()
    term.submit("a question")
    term.wait_for("An answer.")
    term.wait_idle()
    _to_summary(term)
    term.wait_drawn("Report ID")
    [archive] = list(term.cwd.glob("pi-bug-report-*.zip"))
    with zipfile.ZipFile(archive) as zipped:
        assert sorted(zipped.namelist()) == ["report.json", "summary.md"]
        assert zipped.read("summary.md").decode() == "## What went wrong\nThe answer.\n"
        report = json.loads(zipped.read("report.json"))
    assert report["session"]["included"] is False and report["session"]["summaryIncluded"] is True
    [entry] = [e for e in _entries(term) if e["type"] == "custom"]
    assert entry["customType"] == "pi.bug-report"
    assert entry["data"] == {"id": report["id"], "createdAt": report["createdAt"], "hint": "it broke",
                             "sessionIncluded": False, "summaryIncluded": True, "delivery": "zip",
                             "path": str(archive)}
    asked = json.dumps(server.requests[-1].body)
    assert "a question" in asked and "<user-report>\\nit broke\\n</user-report>" in asked


def test_a_summary_that_fails_says_so_and_writes_nothing(pi_screen, server):
    server.push(Reply(text="An answer."), Reply(status=500, error="the model is down"))
    term = pi_screen()
    term.submit("a question")
    term.wait_for("An answer.")
    term.wait_idle()
    _to_summary(term)
    screen = term.wait_drawn("Failed to write bug report summary")
    flat = " ".join(screen.split())
    assert "Failed to write bug report summary: Bug report summary failed: 500" in flat and "the model is" in flat
    assert not list(term.cwd.glob("pi-bug-report-*.zip"))
    assert not [e for e in _entries(term) if e["type"] == "custom"]


def test_a_report_cancelled_at_a_question_writes_nothing(pi_screen):
    term = pi_screen()
    term.submit("/bug")
    term.wait_for("Report a bug")
    term.press("Enter")
    term.wait_for("Include the session transcript?")
    term.press("Escape")
    term.wait_drawn("Bug report cancelled")
    assert not list(term.cwd.glob("pi-bug-report-*.zip"))
