"""/tree: folding branch segments, label timestamps, filters cycled both ways (pi's keys)."""

import json

import pytest

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def _branched_session(tmp_path):
    """first → answer one → {second, left behind → answer B}; 'second' is the leaf's branch."""
    def message(entry_id, parent, role, text, second):
        body = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1793527200000 + second}
        if role == "assistant":
            body.update(api="openai-completions", provider="local", model="test-model", usage=USAGE,
                        stopReason="stop")
        return {"type": "message", "id": entry_id, "parentId": parent,
                "timestamp": f"2026-11-01T10:00:{second:02d}.000Z", "message": body}

    lines = [
        {"type": "session", "version": 3, "id": "0b5e4c1e-1111-4222-8333-944445555666",
         "timestamp": "2026-11-01T10:00:00.000Z", "cwd": str(tmp_path / "project")},
        message("aaaa0001", None, "user", "first question", 1),
        message("aaaa0002", "aaaa0001", "assistant", "Answer one.", 2),
        message("bbbb0001", "aaaa0002", "user", "left behind question", 3),
        message("bbbb0002", "bbbb0001", "assistant", "Answer B.", 4),
        message("cccc0001", "aaaa0002", "user", "second question", 5),
        message("cccc0002", "cccc0001", "assistant", "Answer two.", 6),
        {"type": "label", "id": "dddd0001", "parentId": "cccc0002", "timestamp": "2026-11-01T10:00:09.000Z",
         "targetId": "aaaa0001", "label": "start"},
    ]
    path = tmp_path / "branched.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _tree_rows(screen: str) -> list[str]:
    return [line.strip() for line in screen.splitlines() if "question" in line or "Answer" in line]


def test_ctrl_left_folds_a_branch_segment_and_ctrl_right_unfolds_it(pi_tui, tmp_path):
    term = pi_tui("--session", str(_branched_session(tmp_path)))
    term.submit("/tree")
    tree = term.wait_for("Session tree")
    assert "Answer B." in tree
    term.press("Up")  # from the active answer to the other branch's answer...
    term.press("Up")  # ...and its question, a segment start
    term.wait_for("→ └⊟ user: left behind question")
    term.press("C-Left")
    folded = term.wait_for("⊞ user: left behind question")
    assert "Answer B." not in folded and "Answer two." in folded
    term.press("C-Right")
    term.wait_for(lambda s: "Answer B." in s and "⊟ user: left behind question" in s)
    term.press("C-Right")  # nothing to unfold: on to the branch's end
    term.wait_for("→    assistant: Answer B.")
    term.press("C-Left")  # nothing to fold: back to the segment's start
    term.wait_for("→ └⊟ user: left behind question")


def test_shift_t_shows_label_times_and_the_filter_cycles_both_ways(pi_tui, tmp_path):
    term = pi_tui("--session", str(_branched_session(tmp_path)))
    term.submit("/tree")
    tree = term.wait_for("Session tree")
    assert "[start] user: first question" in tree and "filter: default" in tree
    term.press("T")
    term.wait_for("[start] 11/1 10:00 user: first question")
    term.press("T")
    term.wait_for("[start] user: first question")
    term.press("C-o")
    term.wait_for("filter: no-tools")
    term.send_raw("\x1b[111;6u")  # Shift+Ctrl+O
    term.wait_for("filter: default")
    term.send_raw("\x1b[111;6u")
    term.wait_for("filter: all")
