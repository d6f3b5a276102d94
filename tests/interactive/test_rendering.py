"""The pieces the interactive screen is painted from, without a terminal."""

import re
import time

import pytest
from rich.text import Text

from pi_core.protocol.messages import (
    AssistantMessage,
    CustomMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_core.session import Session
from pi_plugins.interactive import tree_view
from pi_plugins.interactive.blocks import (
    AssistantBlock,
    CustomBlock,
    ToolBlock,
    View,
    blocks_for_messages,
    stream_tail,
)
from pi_plugins.interactive.completion import EditorCompleter, FileIndex, fuzzy_score
from pi_plugins.interactive.diff import render_diff
from pi_plugins.interactive.footer import format_tokens, git_branch
from pi_plugins.interactive.keys import UnbindableKey, parse_key
from pi_plugins.interactive.paint import Painter, strip_ansi
from pi_plugins.interactive.tool_views import ToolState


@pytest.fixture
def painter():
    from rich.style import Style

    # rich keeps each parsed style's ANSI codes for the colour system it was first drawn
    # in, process-wide: after an in-process chat drew in 256 colours they would leak here
    Style.parse.cache_clear()
    # these tests read the dark theme's colours; an in-process chat on a terminal that
    # reported no background applied the system theme's ANSI colours (pi 1.6's)
    from pi_plugins.interactive.themes import dark

    dark().apply()
    return Painter("truecolor")


def plain(painter, block, width=80, view=View(), live=False):
    return [strip_ansi(line) for line in block.lines(painter, width, view, live)]


# ---------------------------------------------------------------- diff


def test_a_one_line_change_marks_only_the_words_that_changed():
    text = render_diff(" 1 a = 1\n-2 greet('hello world')\n+2 greet('goodbye world')\n 3 done")
    assert text.plain.split("\n") == [" 1 a = 1", "-2 greet('hello world')", "+2 greet('goodbye world')", " 3 done"]
    marked = [text.plain[s.start:s.end] for s in text.spans if str(s.style) == "diff.changed"]
    assert marked == ["hello", "goodbye"]


def test_a_block_change_lists_removed_lines_then_added_ones_without_word_marks():
    text = render_diff("-1 one\n-2 two\n+1 uno\n+2 dos\n+3 tres\n     ...")
    assert text.plain.split("\n") == ["-1 one", "-2 two", "+1 uno", "+2 dos", "+3 tres", "     ..."]
    assert not [s for s in text.spans if str(s.style) == "diff.changed"]
    styles = {text.plain[s.start:s.end]: str(s.style) for s in text.spans}
    assert styles["-1 one"] == "diff.removed" and styles["+3 tres"] == "diff.added"


# ---------------------------------------------------------------- blocks


def test_streaming_paints_only_the_end_of_a_long_answer_and_keeps_fences_open():
    head = "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(200))
    code = "```python\n" + "\n".join(f"x{i} = {i}" for i in range(300)) + "\n"
    tail = stream_tail(head + "\n\n" + code, budget=2000, max_lines=60)
    assert tail.startswith("```python\n") and tail.endswith("x299 = 299\n")
    assert 40 < tail.count("\n") <= 62
    prose = stream_tail(head + "\n\nlast words", budget=2000)
    assert prose.startswith("Paragraph 19") and prose.endswith("last words") and len(prose) < 2300
    short = "# Title\n\nshort answer"
    assert stream_tail(short, budget=2000) == short


def test_a_streaming_answer_is_painted_like_the_finished_one(painter):
    text = "# Title\n\nA paragraph with **bold**.\n\n- one\n- two\n\n```python\nx = 1\n\ny = 2\n```\n\nThe end."
    block = AssistantBlock(AssistantMessage(content=[TextContent(text=text)]))
    live = block.lines(painter, 60, View(), live=True)
    block.final = True
    block.changed()
    assert live == block.lines(painter, 60, View())


def test_painting_a_streaming_answer_costs_the_same_however_long_it_grew(painter, monkeypatch):
    """What a frame paints is the paragraph that grew, not the text (counted, not timed:
    the time is bench_interactive's)."""
    from pi_plugins.interactive.blocks import PiMarkdown

    painted: list[int] = []
    paint = painter.lines

    def counting(renderable, width):
        inner = getattr(renderable, "renderable", None)
        if isinstance(inner, PiMarkdown):
            painted.append(len(inner.markup))
        return paint(renderable, width)

    monkeypatch.setattr(painter, "lines", counting)

    def frames(size: int) -> int:
        """Characters of Markdown painted in 20 frames, each after one more streamed word."""
        message = AssistantMessage(content=[TextContent(text=("Some *text* here. " * 10 + "\n\n") * (size // 190))])
        block = AssistantBlock(message)
        block.lines(painter, 100, View(), live=True)
        painted.clear()
        for _ in range(20):
            message.content[0].append(" word")
            block.changed()
            block.lines(painter, 100, View(), live=True)
        return sum(painted)

    small, large = frames(20_000), frames(2_000_000)
    assert 0 < large == small < 20 * 400  # each frame paints the last paragraph only, 100 times the text or not


def test_an_aborted_or_failed_answer_says_so(painter):
    aborted = AssistantMessage(content=[TextContent(text="Half an ans")], stop_reason="aborted")
    assert plain(painter, AssistantBlock(aborted, final=True))[-1].strip() == "Operation aborted"
    failed = AssistantMessage(stop_reason="error", error_message="HTTP 500: overloaded")
    assert plain(painter, AssistantBlock(failed, final=True))[-1].strip() == "Error: HTTP 500: overloaded"


def test_thinking_shows_dimmed_or_collapses_to_one_line(painter):
    message = AssistantMessage(content=[ThinkingContent(thinking="Let me weigh it."), TextContent(text="Yes.")])
    block = AssistantBlock(message, final=True)
    shown = block.lines(painter, 60, View())
    assert strip_ansi(shown[1]).strip() == "Let me weigh it." and "\x1b[3;" in shown[1]
    hidden = plain(painter, block, 60, View(hide_thinking=True))
    assert [l.strip() for l in hidden if l.strip()] == ["Thinking...", "Yes."]


def test_bash_output_shows_its_last_lines_until_expanded(painter):
    state = ToolState("c1", "bash", {"command": "seq 1 9"}, started=True, finished=True,
                      content=[TextContent(text="\n".join(map(str, range(1, 10))) + "\n")])
    collapsed = [l.strip() for l in plain(painter, ToolBlock(state)) if l.strip()]
    assert collapsed == ["$ seq 1 9", "... (4 earlier lines, ctrl+o to expand)", "5", "6", "7", "8", "9"]
    expanded = [l.strip() for l in plain(painter, ToolBlock(state), view=View(expand_tools=True)) if l.strip()]
    assert expanded == ["$ seq 1 9", *map(str, range(1, 10))]


def test_a_failed_edit_shows_the_error_and_a_write_shows_the_new_content(painter):
    failed = ToolState("c1", "edit", {"path": "a.py", "edits": []}, finished=True, is_error=True,
                       content=[TextContent(text="oldText not found in a.py")])
    assert [l.strip() for l in plain(painter, ToolBlock(failed)) if l.strip()] == [
        "edit a.py", "oldText not found in a.py"]
    write = ToolState("c2", "write", {"path": "b.txt", "content": "line 1\nline 2\n"}, finished=True,
                      content=[TextContent(text="Wrote 14 bytes")])
    assert [l.strip() for l in plain(painter, ToolBlock(write)) if l.strip()] == ["write b.txt", "line 1", "line 2"]


def test_an_unknown_tool_shows_its_name_arguments_and_output(painter):
    state = ToolState("c1", "todo", {"add": "buy milk"}, finished=True, content=[TextContent(text="1 item")])
    lines = [l.strip() for l in plain(painter, ToolBlock(state)) if l.strip()]
    assert lines == ['todo {"add": "buy milk"}', "1 item"]


def test_a_broken_plugin_renderer_is_reported_in_place(painter):
    def broken(message, expanded):
        raise ValueError("no colours left")

    message = CustomMessage(custom_type="palette", content="x")
    text = " ".join(plain(painter, CustomBlock(message, broken)))
    assert "[palette] renderer failed: no colours left" in text


def test_a_past_conversation_becomes_blocks_with_results_under_their_calls(painter):
    call = ToolCall(id="t1", name="read", arguments={"path": "notes.md"})
    messages = [
        UserMessage(content="read my notes"),
        AssistantMessage(content=[TextContent(text="Reading."), call], stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="t1", tool_name="read", content=[TextContent(text="# Notes\nbuy milk")]),
        AssistantMessage(content=[TextContent(text="You need milk.")]),
    ]
    blocks = blocks_for_messages(messages)
    assert [type(b).__name__ for b in blocks] == ["UserBlock", "AssistantBlock", "ToolBlock", "AssistantBlock"]
    assert all(b.final for b in blocks)
    tool_lines = [l.strip() for l in plain(painter, blocks[2]) if l.strip()]
    assert tool_lines == ["read notes.md", "# Notes", "buy milk"]


def test_painted_lines_have_no_trailing_padding_and_no_colour_without_a_colour_system():
    mono = Painter(None)
    lines = mono.lines(Text("hello", style="bold red"), 40)
    assert lines == ["hello"]


# ---------------------------------------------------------------- footer


@pytest.mark.parametrize("count, shown", [(999, "999"), (1500, "1.5k"), (15_400, "15k"),
                                          (1_500_000, "1.5M"), (15_000_000, "15M")])
def test_token_counts_are_shortened_like_pis(count, shown):
    assert format_tokens(count) == shown


def test_the_git_branch_comes_from_head_even_in_a_subfolder(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/feature/tui\n")
    (tmp_path / "src" / "deep").mkdir(parents=True)
    assert git_branch(str(tmp_path / "src" / "deep")) == "feature/tui"
    (tmp_path / ".git" / "HEAD").write_text("0123456789abcdef\n")
    assert git_branch(str(tmp_path)) == "0123456"


# ---------------------------------------------------------------- the tree


def _branched_session(tmp_path):
    session = Session.in_memory(str(tmp_path))
    first = session.append_message(UserMessage(content="first question"))
    session.append_message(AssistantMessage(content=[TextContent(text="First answer.")]))
    answer = session.leaf_id
    session.append_message(UserMessage(content="approach A"))
    session.append_message(AssistantMessage(content=[ToolCall(id="t1", name="bash", arguments={"command": "ls"})],
                                            stop_reason="toolUse"))
    session.append_message(ToolResultMessage(tool_call_id="t1", tool_name="bash", content=[TextContent(text="a")]))
    session.branch(answer)
    session.append_message(UserMessage(content="approach B"))
    session.append_label(first.id, "start")
    return session


def _plain_rows(session, mode="default", query=""):
    roots = session.tree()
    calls = tree_view.tool_calls_by_id(roots)
    return [tree_view.row_label(r, calls).plain
            for r in tree_view.rows(roots, session.leaf_id, mode, query)]


def test_the_tree_draws_branches_with_the_active_one_first(tmp_path):
    session = _branched_session(tmp_path)
    assert _plain_rows(session) == [
        "• [start] user: first question",
        "• assistant: First answer.",
        "├─ • user: approach B  ← active",
        "└─ user: approach A",
        "   [$ ls]",
    ]


def test_tree_filters_hide_entries_and_keep_the_drawing_a_tree(tmp_path):
    session = _branched_session(tmp_path)
    assert _plain_rows(session, "user-only") == [
        "• [start] user: first question", "├─ • user: approach B  ← active", "└─ user: approach A"]
    assert _plain_rows(session, "no-tools")[-1] == "└─ user: approach A"
    assert _plain_rows(session, "labeled-only") == ["• [start] user: first question  ← active"]
    every = _plain_rows(session, "all")
    assert any("[label: start]" in row for row in every) and any("[$ ls]" in row for row in every)
    assert _plain_rows(session, query="approach b") == ["• user: approach B  ← active"]


def test_a_deep_session_lists_without_recursion(tmp_path):
    session = Session.in_memory(str(tmp_path))
    for i in range(10_000):
        session.append_message(UserMessage(content=f"message {i}"))
    start = time.perf_counter()
    rows = tree_view.rows(session.tree(), session.leaf_id)
    assert len(rows) == 10_000 and all(r.prefix == "" for r in rows)
    assert time.perf_counter() - start < 2


def test_choosing_a_user_message_offers_its_text_for_editing(tmp_path):
    session = _branched_session(tmp_path)
    user = next(e for e in session.entries if getattr(getattr(e, "message", None), "content", None) == "approach A")
    assert tree_view.editor_text_for(user) == "approach A"
    assistant = next(e for e in session.entries if getattr(e, "message", None) is not None
                     and e.message.role == "assistant")
    assert tree_view.editor_text_for(assistant) is None


# ---------------------------------------------------------------- keys and completion


@pytest.mark.parametrize("spec, keys", [
    ("ctrl+x", ("c-x",)), ("alt+k", ("escape", "k")), ("shift+tab", ("s-tab",)), ("f5", ("f5",)),
    ("alt+enter", ("escape", "enter")), ("ctrl+shift+up", ("c-s-up",)), ("shift+l", ("L",)),
])
def test_pi_key_names_become_prompt_toolkit_keys(spec, keys):
    assert parse_key(spec) == keys


@pytest.mark.parametrize("spec", ["ctrl+shift+x", "hyper+x", "ctrl+enter", ""])
def test_keys_a_terminal_cannot_send_are_refused(spec):
    with pytest.raises(UnbindableKey):
        parse_key(spec)


def test_fuzzy_file_search_prefers_file_names_and_runs():
    index = FileIndex("/nowhere")
    index.paths = ["docs/parser-notes.md", "src/parser_module.py", "src/pm.py", "tests/test_parse_mod.py", "README"]
    found = index.search("parsmod")
    assert found[0] == "src/parser_module.py" and "README" not in found
    assert fuzzy_score("xyz", "src/parser_module.py") is None


def _completions(completer, text, requested=False):
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    return list(completer.get_completions(Document(text, len(text)), CompleteEvent(completion_requested=requested)))


def test_slash_completes_commands_and_at_completes_files(tmp_path):
    index = FileIndex(str(tmp_path))
    index.paths = ["src/app.py", "src/util.py"]
    index.listed_at = time.monotonic()
    completer = EditorCompleter(lambda: [("tree", "Move in the tree"), ("tools", "x"), ("deploy", "Deploy")], index)
    assert [c.text for c in _completions(completer, "/t")] == ["/tree", "/tools"]
    assert [c.display_meta_text for c in _completions(completer, "/dep")] == ["Deploy"]
    assert [c.text for c in _completions(completer, "see @uti")] == ["@src/util.py"]
    (tmp_path / "notes.txt").write_text("x")
    assert [c.text for c in _completions(completer, "cat no", requested=True)] == ["notes.txt"]
    assert _completions(completer, "cat no") == []  # paths only on Tab


# ---------------------------------------------------------------- pi's chat look


def test_single_line_breaks_are_kept_in_user_messages_and_answers(painter):
    from pi_plugins.interactive.blocks import UserBlock

    user = plain(painter, UserBlock("line one\nline two"))
    assert any(l.strip() == "line one" for l in user) and any(l.strip() == "line two" for l in user)
    answer = AssistantMessage(content=[TextContent("Steps:\nfirst item\nsecond item")], stop_reason="stop")
    lines = [l.strip() for l in plain(painter, AssistantBlock(answer, final=True))]
    assert lines.index("first item") + 1 == lines.index("second item")
    assert "Steps:" in lines


def test_code_in_a_user_message_keeps_the_message_background(painter):
    from pi_plugins.interactive.blocks import UserBlock

    painted = UserBlock("see:\n```python\nx = compute(1)\n```").lines(painter, 60, View(), False)
    code_line = next(l for l in painted if "compute" in strip_ansi(l))
    box = "48;2;52;53;65"  # the user box's background (#343541)
    codes = re.findall(r"\x1b\[([0-9;]*)m", code_line)
    painted_text = [c for c in codes if c not in ("", "0")]
    assert painted_text and all(box in c for c in painted_text)  # nothing resets the background


def test_output_pad_zero_takes_the_transcripts_side_columns_away(painter):
    """pi 1.6's ``outputPad``: 1 (the default) leaves a column either side of an answer,
    0 none; the chat reads it from the settings."""
    from pi_core.app.settings import Settings
    from pi_plugins.interactive.blocks import TextBlock, output_pad

    answer = AssistantBlock(AssistantMessage(content=[TextContent(text="Hello there.")]))
    padded = [line for line in plain(painter, answer, 40) if line.strip()]
    flush = [line for line in plain(painter, answer, 40, View(pad=0)) if line.strip()]
    assert padded[0].startswith(" Hello") and flush[0].startswith("Hello")
    assert plain(painter, TextBlock("note"), 40, View(pad=0))[-1].startswith("note")
    for value, pad in ((0, 0), (1, 1), ("0", 1), (None, 1)):
        settings = Settings({"outputPad": value} if value is not None else {})
        assert output_pad(settings) == pad


def test_code_that_fits_paints_the_same_lines_in_one_pass_as_wrapped_line_by_line(monkeypatch):
    """Code whose lines all fit is painted by rich in one pass (a third of a block's
    painting saved at exit); the lines are those of wrapping each line on its own."""
    from rich.padding import Padding

    from pi_plugins.interactive import markdown
    from pi_plugins.interactive.markdown import PiMarkdown
    from pi_plugins.interactive.paint import Painter

    bodies = ["def f(x):\n    return x * 2\n", "", "  \n\n trailing   \n", "wide 漢字 😀\n", "x" * 35, "x" * 36,
              "a b " * 9, "y" * 34 + "  ", "\x1b[31mred\x1b[0m"]
    samples = [f"```{lang}\n{body}\n```\n\n- item\n\n  ```{lang}\n  {body}\n  ```\n"
               for lang in ("python", "", "json", "nosuchlang") for body in bodies]

    def painted() -> list[list[str]]:
        return [Painter(depth).lines(Padding(PiMarkdown(text, box_style=box), (0, 1)), 40)
                for depth in ("256", "truecolor") for box in (None, "user.box") for text in samples]

    one_pass = painted()
    monkeypatch.setattr(markdown, "_fits", lambda code, width: False)
    assert one_pass == painted()
