"""A long pi-format session file (questions and long Markdown answers), to resume in the
chat: what the fullscreen tests and ``bench/bench_interactive.py`` quit out of. pi 1.6
reads the same file."""

from __future__ import annotations

import json
from pathlib import Path

SESSION_ID = "0b5e4c1e-1111-4222-8333-944445555666"
_USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
_PARAGRAPH = ("Some **bold** words, `code`, and a [link](http://x). " * 4).strip() + "\n\n"
_CODE = "```python\n" + "def f(x):\n    return x * 2\n" * 10 + "```\n\n"


def markdown_answer(size: int) -> str:
    """About ``size`` characters of prose, code and a list (as bench_interactive paints)."""
    unit = _PARAGRAPH * 5 + _CODE + "- one\n- two\n\n"
    return (unit * (size // len(unit) + 1))[:size]


def write_long_session(path: Path, cwd: Path, answers: int = 100, answer_size: int = 10_000) -> Path:
    """``answers`` exchanges of "question N" and a Markdown answer ending "end of answer N"
    (100 × 10 KB: a 1 MB session), on ``local/test-model``."""
    entries: list[dict] = [{"type": "session", "version": 3, "id": SESSION_ID,
                            "timestamp": "2026-11-01T10:00:00.000Z", "cwd": str(cwd)}]
    parent = None
    text = markdown_answer(answer_size)
    for n in range(answers):
        for role, content in (("user", f"question {n}"), ("assistant", f"{text}\n\nend of answer {n}")):
            message: dict = {"role": role, "content": [{"type": "text", "text": content}],
                             "timestamp": 1793527200000 + n}
            if role == "assistant":
                message.update(api="openai-completions", provider="local", model="test-model", usage=_USAGE,
                               stopReason="stop")
            entry_id = f"{role[0]}{n:07d}"
            entries.append({"type": "message", "id": entry_id, "parentId": parent,
                            "timestamp": "2026-11-01T10:00:00.000Z", "message": message})
            parent = entry_id
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    return path
