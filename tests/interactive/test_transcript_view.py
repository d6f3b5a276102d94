"""The fullscreen transcript's rules, in this process (no terminal): what a frame shows
when scrolled, what search counts and selects, what a selection copies, and when OSC 52
goes to the terminal besides a clipboard tool."""

import asyncio

from prompt_toolkit.mouse_events import MouseEventType

from pi_core.protocol.messages import AssistantMessage, TextContent
from pi_plugins.interactive.blocks import AssistantBlock, UserBlock, View
from pi_plugins.interactive.keybindings import Keybindings
from pi_plugins.interactive.paint import Painter, block_lines, strip_ansi
from pi_plugins.interactive.selection_copy import _index_at, osc52_wanted
from pi_plugins.interactive.transcript import Transcript
from pi_plugins.interactive.transcript_view import JUMP_HINT, TranscriptView


class _Chat:
    """What the transcript asks of the chat."""

    def __init__(self, blocks, settings=None) -> None:
        self.transcript = Transcript()
        self.transcript.blocks = list(blocks)
        self.settings = dict(settings or {})
        self.width, self.rows = 60, 20
        self.keybindings = Keybindings()
        self.app = None
        self.spawned: list = []
        self.working = False
        self.painter, self.view = Painter(None), View()
        self.painted: list = []  # every block painted, in turn

        def paint(block, width, live=False):
            self.painted.append(block)
            return block_lines(block, self.painter, width, self.view, live=live)

        self.paint = paint
        self.live = self

    def content_lines(self, width, skip_head=False):
        return []

    def invalidate(self):
        pass

    def spawn(self, coroutine):
        self.spawned.append(coroutine)
        coroutine.close()


def _conversation(answers: int = 3):
    blocks = []
    for n in range(answers):
        blocks.append(UserBlock(f"question {n}"))
        text = "\n".join(f"answer {n} line {k}" for k in range(20))
        blocks.append(AssistantBlock(AssistantMessage(content=[TextContent(text=text)]), final=True))
    return blocks


def _frame(view: TranscriptView, rows: int = 10) -> list[str]:
    content = view.control().create_content(60, rows)
    return ["".join(text for _, text, *_ in content.get_line(i)) for i in range(content.line_count)]


def test_the_view_follows_the_end_until_scrolled_up():
    view = TranscriptView(_Chat(_conversation()))
    shown = _frame(view)
    assert "answer 2 line 19" in shown[-1]
    view.page(-1)
    shown = _frame(view)
    assert JUMP_HINT in shown[-1] and not any("answer 2 line 19" in row for row in shown)
    view.to_bottom()
    assert "answer 2 line 19" in _frame(view)[-1]


def test_previous_prompt_lands_on_each_question_in_turn():
    view = TranscriptView(_Chat(_conversation()))
    _frame(view)
    view.jump_prompt(-1)
    assert any("question 2" in row for row in _frame(view)[:2])
    view.jump_prompt(-1)
    assert any("question 1" in row for row in _frame(view)[:2])
    view.jump_prompt(1)
    assert any("question 2" in row for row in _frame(view)[:2])


def test_search_counts_every_match_and_steps_round_them():
    view = TranscriptView(_Chat(_conversation()))
    _frame(view)
    view.search.open = True
    view.search.buffer.text = "LINE 7"  # case does not matter
    assert len(view.search.matches) == 3
    assert view.search.counter() == " 3/3 "  # the last match above the view's bottom
    view.search.step(1)
    assert view.search.counter() == " 1/3 "
    assert any("answer 0 line 7" in row for row in _frame(view))
    view.search.buffer.text = "nowhere"
    assert view.search.counter() == " 0/0 "


def test_a_selection_copies_its_text_across_lines_on_release():
    chat = _Chat(_conversation(1))
    view = TranscriptView(chat)
    _frame(view, 40)
    rows = [i for i in range(view.line_count) if "answer 0 line 3" in view.plain(i) or "answer 0 line 4" in view.plain(i)]
    start = view.plain(rows[0]).index("line 3")
    view.selection.mouse(MouseEventType.MOUSE_DOWN, rows[0], start)
    view.selection.mouse(MouseEventType.MOUSE_MOVE, rows[1], 9)
    view.selection.mouse(MouseEventType.MOUSE_UP, rows[1], 9)
    assert view.selection.text() == "line 3\n answer 0"
    assert len(chat.spawned) == 1  # copied on release (fullscreenCopyOnSelect)


def test_without_copy_on_select_a_release_copies_nothing():
    chat = _Chat(_conversation(1), {"fullscreenCopyOnSelect": False})
    view = TranscriptView(chat)
    _frame(view, 40)
    view.selection.mouse(MouseEventType.MOUSE_DOWN, 5, 1)
    view.selection.mouse(MouseEventType.MOUSE_UP, 5, 8)
    assert view.selection.text() and chat.spawned == []


def test_wide_characters_take_two_columns_when_selecting():
    assert _index_at("日本語 text", 2) == 1
    assert _index_at("日本語 text", 7) == 4
    assert _index_at("short", 20) == len("short")


def test_osc52_goes_besides_a_tool_over_ssh_or_when_asked():
    assert not osc52_wanted({})
    assert osc52_wanted({"PI_CLIPBOARD_OSC52": "1"})
    assert osc52_wanted({"SSH_CONNECTION": "10.0.0.1 22 10.0.0.2 22"})


def test_the_hidden_scrollbar_leaves_the_last_column_to_the_transcript():
    shown_view = TranscriptView(_Chat(_conversation()))
    hidden_view = TranscriptView(_Chat(_conversation(), {"fullscreenScrollbar": "hidden"}))
    assert any(row.endswith(("│", "┃")) for row in _frame(shown_view))
    assert not any(strip_ansi(row).rstrip().endswith(("│", "┃")) for row in _frame(hidden_view))


# ---------------------------------------------------------------- a large transcript, painted lazily


def _long_conversation(answers: int = 40, paragraphs: int = 30, first_word: str = "zebra"):
    """Answers long enough to be painted paragraph by paragraph; ``first_word`` only in the first."""
    blocks = []
    for n in range(answers):
        blocks.append(UserBlock(f"question {n}"))
        text = "\n\n".join(f"answer {n} paragraph {k}: " + "lorem ipsum dolor sit " * 5 for k in range(paragraphs))
        if n == 0:
            text = f"The {first_word} comes first.\n\n" + text
        blocks.append(AssistantBlock(AssistantMessage(content=[TextContent(text=text)]), final=True))
    return blocks


def test_a_resumed_large_transcript_shows_its_first_frame_without_painting_every_block():
    chat = _Chat(_long_conversation())
    view = TranscriptView(chat)
    shown = _frame(view, 20)
    assert "answer 39 paragraph 29" in "\n".join(shown[-4:])
    assert len(view.lazy.pieces) >= 80 and view.lazy.painted <= 12  # a screen's worth, not 40 answers
    assert not any("question 0" in view.plain(row) for row in range(view.line_count))
    assert view.line_count > 40 * 30  # the scrollbar counts every row, estimated where unpainted


def test_scrolling_to_the_top_of_a_large_transcript_shows_the_first_message():
    view = TranscriptView(_Chat(_long_conversation()))
    _frame(view, 20)
    view.to_top()
    shown = _frame(view, 20)
    assert any("question 0" in row for row in shown[:4])
    assert any("The zebra comes first." in row for row in shown)
    view.page(1)  # and on down, painted as it goes
    assert any("answer 0 paragraph" in row for row in _frame(view, 20))


def test_search_finds_a_word_in_the_first_message_of_a_large_transcript():
    view = TranscriptView(_Chat(_long_conversation()))
    _frame(view, 20)
    painted = view.lazy.painted
    view.search.open = True
    view.search.buffer.text = "ZEBRA"
    while view.search.work():
        pass
    assert view.search.counter() == " 1/1 "
    assert view.lazy.painted - painted <= 3  # only where the word may be: the first answer's paragraph
    assert any("The zebra comes first." in row for row in _frame(view, 20))


def test_search_counts_what_painting_everything_would_show():
    view = TranscriptView(_Chat(_long_conversation(answers=6)))
    _frame(view, 20)
    view.search.open = True
    view.search.buffer.text = "paragraph 7:"
    while view.search.work():
        _frame(view, 20)
    assert view.search.counter().endswith("/6 ")  # counted in full: no "…"
    assert [view.plain(row)[start - 9:end] for row, start, end in view.search.matches] == [
        f"answer {n} paragraph 7:" for n in range(6)]


def test_a_word_split_by_markup_is_still_found_in_unpainted_answers():
    blocks = _long_conversation(answers=3)
    blocks[1].message.content[0].text += "\n\nA hidden gi**raf**fe."
    view = TranscriptView(_Chat(blocks))
    _frame(view, 10)
    view.search.open = True
    view.search.buffer.text = "giraffe"
    while view.search.work():
        pass
    assert len(view.search.matches) == 1


def test_the_text_in_view_stays_put_while_the_rows_above_are_painted():
    view = TranscriptView(_Chat(_long_conversation()))
    _frame(view, 20)
    view.to_top()
    _frame(view, 20)
    for _ in range(30):
        view.page(1)
        _frame(view, 20)
    before = _frame(view, 20)
    view.search.open = True
    view.search.buffer.text = "lorem"  # every paragraph: the ones above get painted too
    while view.search.work():
        pass
    view.search.open = False
    assert _frame(view, 20) == before


def test_scrolling_up_while_an_answer_streams_shows_the_whole_answer_so_far():
    text = "\n\n".join(f"streamed paragraph {k}: " + "lorem ipsum dolor sit " * 5 for k in range(100))  # its head in one piece at first
    answer = AssistantBlock(AssistantMessage(content=[TextContent(text=text + "\n\nstill grow")]))
    view = TranscriptView(_Chat([UserBlock("question"), answer]))
    assert "still grow" in _frame(view, 20)[-1]  # following the end as it streams
    view.to_top()
    shown = _frame(view, 20)
    assert any("streamed paragraph 0:" in row for row in shown)  # not only the tail
    answer.message.content[0].append("ing\n\nthe end")
    answer.changed()
    view.to_bottom()
    assert "the end" in _frame(view, 20)[-1]
    answer.final = True
    shown = _frame(view, 20)
    assert "the end" in shown[-1] and sum("still growing" in view.plain(row) for row in range(view.line_count)) == 1


# ---------------------------------------------------------------- while idle, and on exit


async def _idle_until_painted(view: TranscriptView, seconds: float = 60.0) -> None:
    painter = asyncio.create_task(view.flusher())
    try:
        for _ in range(int(seconds / 0.05)):
            if all(piece.lines is not None for piece in view.lazy.pieces):
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the idle chat did not paint the transcript")
    finally:
        painter.cancel()


def test_while_the_chat_is_idle_what_is_out_of_view_gets_painted_and_the_view_stays_put():
    view = TranscriptView(_Chat(_long_conversation(answers=8)))
    _frame(view, 20)
    for _ in range(20):
        view.page(-1)
    before = _frame(view, 20)
    asyncio.run(_idle_until_painted(view))
    assert view.lazy.painted > 8 * 30  # every paragraph
    assert _frame(view, 20) == before


def test_nothing_is_painted_in_the_background_while_the_agent_works():
    chat = _Chat(_long_conversation(answers=8))
    view = TranscriptView(chat)
    _frame(view, 20)
    painted = view.lazy.painted
    chat.working = True

    async def a_while() -> None:
        painter = asyncio.create_task(view.flusher())
        await asyncio.sleep(0.5)
        painter.cancel()

    asyncio.run(a_while())
    assert view.lazy.painted == painted


def test_the_exit_transcript_is_every_block_as_the_view_paints_it_in_order():
    blocks = _long_conversation(answers=6)
    chat = _Chat(blocks)
    view = TranscriptView(chat)
    _frame(view, 20)
    view.to_top()
    _frame(view, 20)  # some pieces painted as shown, most not
    width = view.view_width()
    whole = [line for block in blocks for line in block_lines(block, chat.painter, width, chat.view)]
    assert view.exit_lines() == whole


def test_the_exit_transcript_hands_over_its_first_pieces_before_the_last_is_painted():
    """Quitting prints the transcript while the rest of it is still being painted."""
    blocks = _long_conversation(answers=6)
    chat = _Chat(blocks)
    view = TranscriptView(chat)
    _frame(view, 20)
    chat.painted.clear()
    runs = view.exit_line_runs()
    first = next(runs)
    assert any("question 0" in line for line in first)
    assert blocks[-1] not in chat.painted and blocks[-2] not in chat.painted
    assert first + [line for lines in runs for line in lines] == view.exit_lines()


def test_the_exit_writer_prints_the_bytes_of_one_write_and_survives_a_gone_terminal():
    import io

    from pi_plugins.interactive.exit_printing import LineWriter

    runs = [["a", "b"], [], ["c"], [""], ["d", ""]]
    out = io.StringIO()
    with LineWriter(out) as writer:
        for lines in runs:
            writer.put(lines)
    assert out.getvalue() == "\n".join(line for lines in runs for line in lines) + "\n"

    class Gone(io.StringIO):
        def write(self, _text):
            raise OSError("EIO")

    with LineWriter(Gone()) as writer:  # nothing raised: the terminal hung up
        writer.put(["lost"])


def test_the_exit_transcript_painted_on_two_cores_is_the_one_painted_on_one(monkeypatch):
    """Quitting right after a resume paints most of it at exit, on every core."""
    from pi_plugins.interactive import exit_painting

    monkeypatch.setattr(exit_painting, "PARALLEL_FROM_CHARS", 0)
    monkeypatch.setattr(exit_painting, "workers", lambda: 2)
    blocks = _long_conversation(answers=6)
    chat = _Chat(blocks)
    view = TranscriptView(chat)
    _frame(view, 20)
    width = view.view_width()
    whole = [line for block in blocks for line in block_lines(block, chat.painter, width, chat.view)]
    assert view.exit_lines() == whole
