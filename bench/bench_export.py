"""HTML export budget: a 20,000-entry session (about 50 MB, like design.md §11's
session budget, with a fork every 200 entries) exported with ``export_html`` in under
3 s on this machine: opening the file (the session's own budget is 1 s), rendering the
page and writing it. Also prints the page's size and the process's peak memory.

Run: python bench/bench_export.py   (exits 1 when over budget)
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

from pi_core.protocol.codec import dumps
from pi_core.protocol.entries import MessageEntry, SessionHeader
from pi_core.protocol.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_core.session import Session
from pi_plugins.export_html import export_html, render_page

ENTRIES = 20_000
BUDGET_S = 3.0
OUTPUT = "".join(f"{i:5d}  some output line of a tool, about this long <tag> & more\n"
                 for i in range(40))  # ~2.6 KB, with characters to escape


def write_session(path: Path) -> None:
    """Turns of user → assistant (thinking, text, a tool call) → tool result → answer;
    every 200 entries the next turn starts again from an earlier answer (a fork)."""
    lines = [dumps(SessionHeader(cwd="/work/project"))]
    parent = None
    last_answer = None
    count = 0

    def add(message) -> str:
        nonlocal parent, count
        entry = MessageEntry(id=f"{count:08x}", parent_id=parent, message=message)
        lines.append(dumps(entry))
        parent = entry.id
        count += 1
        return entry.id

    turn = 0
    while count < ENTRIES:
        if turn and turn % 50 == 0 and last_answer:
            parent = last_answer  # branch from an earlier answer
        add(UserMessage(content=[TextContent(f"Question {turn}: please look at file_{turn}.py")]))
        add(AssistantMessage(content=[
            ThinkingContent("Let me think about it. " * 20),
            TextContent("I will run a command."),
            ToolCall(id=f"call_{turn}", name="bash", arguments={"command": f"cat file_{turn}.py"}),
        ], api="openai-completions", provider="fake", model="fake-model",
            usage=Usage(input=1000, output=50), stop_reason="toolUse"))
        add(ToolResultMessage(tool_call_id=f"call_{turn}", tool_name="bash",
                              content=[TextContent(OUTPUT * 3)]))
        answer = add(AssistantMessage(content=[TextContent("Here is what I found. " * 30)],
                                      api="openai-completions", provider="fake",
                                      model="fake-model", usage=Usage(input=1200, output=80)))
        if turn % 50 == 25:
            last_answer = answer
        turn += 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "big.jsonl"
        write_session(source)
        size_mb = source.stat().st_size / 1e6

        start = time.perf_counter()
        session = Session.open(source, read_only=True)
        opened = time.perf_counter()
        page = render_page(session)
        rendered = time.perf_counter()
        session.close()

        out = Path(folder) / "big.html"
        best = best_cpu = float("inf")
        for _ in range(3):
            begin, begin_cpu = time.perf_counter(), time.process_time()
            export_html(source, out)
            best = min(best, time.perf_counter() - begin)
            best_cpu = min(best_cpu, time.process_time() - begin_cpu)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        print(f"session: {len(session)} entries, {size_mb:.1f} MB")
        print(f"open {opened - start:.2f} s, render {rendered - opened:.2f} s "
              f"(page {len(page) / 1e6:.1f} MB)")
        print(f"export_html (open + render + write), best of 3: {best:.2f} s "
              f"(budget {BUDGET_S:.1f} s; CPU {best_cpu:.2f} s); peak memory {peak_mb:.0f} MB")
        if best > BUDGET_S:
            print("OVER BUDGET")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
