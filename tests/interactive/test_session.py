"""Moving around the session: /tree with a branch summary, /compact, /model."""

import json

from support.llm_server import Reply


def _context_text(request) -> str:
    return json.dumps(request.body["messages"], ensure_ascii=False)


def test_tree_moves_to_an_earlier_message_and_leaves_a_summary_of_the_branch(pi_screen, server):
    server.push(Reply(text="First answer."), Reply(text="Second answer."),
                Reply(text="The user asked a second question; it was answered."),
                Reply(text="Answer on the new branch."))
    term = pi_screen()
    term.submit("first question")
    term.wait_for("First answer.")
    term.submit("second question")
    term.wait_for("Second answer.")
    term.wait_idle()
    term.submit("/tree")
    tree = term.wait_for("Session tree")
    assert "→ • assistant: Second answer.  ← active" in tree
    assert "  • user: first question" in tree and "  • user: second question" in tree
    term.press("Up")
    term.wait_for("→ • user: second question")
    term.press("Enter")
    term.wait_for("Summarize the branch you leave?")
    term.press("Down")
    term.wait_for("→ Summarize")
    term.press("Enter")
    screen = term.wait_drawn(lambda s: "Navigated to the selected point" in s
                             and term.editor(s) == "second question")  # its text is back in the editor
    assert "[branch]" in screen and "Branch summary" in screen
    assert "Second answer." not in screen
    assert "second question" in _context_text(server.requests[2])  # what was summarised
    term.press("C-c")
    term.wait_drawn(lambda s: term.editor(s) == "")
    term.submit("a new direction")
    term.wait_for("Answer on the new branch.")
    sent = _context_text(server.requests[3])
    assert "The user asked a second question; it was answered." in sent
    assert "first question" in sent and "Second answer." not in sent
    [summary] = [e for e in term.entries() if e["type"] == "branch_summary"]
    assert "The user asked a second question; it was answered." in summary["summary"]


def test_tree_labels_an_entry(pi_screen, server):
    server.push(Reply(text="Answer."))
    term = pi_screen()
    term.submit("a question worth marking")
    term.wait_for("Answer.")
    term.wait_idle()
    term.submit("/tree")
    term.wait_for("→ • assistant: Answer.")
    term.press("Up")
    term.wait_for("→ • user: a question worth marking")
    term.type("L")  # Shift+L
    term.wait_for("empty clears the label")
    term.type("checkpoint")
    term.press("Enter")
    tree = term.wait_for("[checkpoint] user: a question worth marking")
    assert "→ • [checkpoint] user:" in tree  # the tree is back, on the same entry
    term.press("Escape")
    term.wait_drawn(lambda s: "Session tree" not in s)
    [label] = [e for e in term.entries() if e["type"] == "label"]
    assert label["label"] == "checkpoint"


def test_compact_summarises_older_messages(pi_screen, server):
    server.push(Reply(text="Answer one. " * 20), Reply(text="Two."),
                Reply(text="## Goal\nKeep the answers short."), Reply(text="Short answer."))
    # keep only the last turn ("question two" and its short answer): one summary request
    term = pi_screen(settings={"compaction": {"keepRecentTokens": 3}})
    term.submit("question one")
    term.wait_for("Answer one.")
    term.submit("question two")
    term.wait_for("Two.")
    term.wait_idle()
    term.submit("/compact keep it short")
    # as pi: the chat is rebuilt from the new context (its summary first), and the
    # compaction's collapsible block closes it, not a plain line
    screen = term.wait_for(lambda s: s.count("[compaction]") == 2)
    assert screen.rindex("[compaction]") > screen.rindex("Two.")
    assert "Compacted from" in screen[screen.rindex("[compaction]"):]
    assert "Compacted the context" not in screen
    summary_request = _context_text(server.requests[2])
    assert "question one" in summary_request and "keep it short" in summary_request
    [entry] = [e for e in term.entries() if e["type"] == "compaction"]
    assert entry["summary"].startswith("## Goal")
    term.submit("question three")
    term.wait_for("Short answer.")
    sent = _context_text(server.requests[3])
    assert "Keep the answers short." in sent and "question one" not in sent


def test_model_selector_switches_the_model_for_the_next_prompt(pi_screen, server):
    server.push(Reply(text="Answered by the other model."))
    term = pi_screen()
    term.submit("/model")
    dialog = term.wait_for("Select a model")
    assert "→ test-model [local] ✓" in dialog and "other-model [local]" in dialog
    term.type("other")
    term.wait_for(lambda s: "test-model [local]" not in s and "→ other-model [local]" in s)
    term.press("Enter")
    screen = term.wait_drawn("Model: local/other-model")
    assert screen.rstrip().endswith("other-model")  # the footer names it
    term.submit("hello")
    term.wait_for("Answered by the other model.")
    assert server.requests[0].body["model"] == "other-model"
    assert any(e["type"] == "model_change" and e["modelId"] == "other-model" for e in term.entries())


def test_name_new_and_resume_move_between_sessions(pi_screen, server):
    server.push(Reply(text="Answer in the first session."), Reply(text="Answer in the second session."))
    term = pi_screen()
    term.submit("first session question")
    term.wait_for("Answer in the first session.")
    term.submit("/name auth work")
    term.wait_for(lambda s: "Session name set: auth work" in s and "~/project • auth work" in s)
    term.submit("/new")
    fresh = term.wait_for("New session started")
    assert "Answer in the first session." not in fresh and "auth work" not in fresh
    term.submit("second session question")
    term.wait_for("Answer in the second session.")
    term.submit("/resume")
    picker = term.wait_for("Resume Session (Current Folder)")
    assert "→ auth work" in picker and "3 messages" in picker
    term.press("Enter")
    back = term.wait_drawn("Resumed ")
    assert "Answer in the first session." in back and "second session question" not in back
    assert "~/project • auth work" in back
    term.press("Up")  # the resumed session's prompts are in the history
    term.wait_drawn(lambda s: term.editor(s) == "first session question")
    assert len(term.sessions()) == 2


def test_fork_starts_a_new_session_before_an_earlier_prompt(pi_screen, server):
    server.push(Reply(text="One."), Reply(text="Two."))
    term = pi_screen()
    term.submit("step one")
    term.wait_for("One.")
    term.submit("step two")
    term.wait_for("Two.")
    term.wait_idle()
    term.submit("/fork")
    picker = term.wait_for("Fork from which message?").split("Fork from which message?")[1]
    assert picker.index("→ step two") < picker.index("step one")  # the latest first
    term.press("Enter")
    screen = term.wait_drawn(lambda s: "Forked to a new session" in s and term.editor(s) == "step two")
    assert "One." in screen and "Two." not in screen
    assert len(term.sessions()) == 2
