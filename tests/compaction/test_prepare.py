"""Compaction planning: cut points, split turns, repeated compactions, file tracking."""

import asyncio

from pi_core.protocol.entries import CompactionEntry, MessageEntry, ModelChangeEntry
from pi_core.protocol.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_plugins.compaction.plan import find_cut, prepare_compaction
from pi_plugins.compaction.prepare import branch_messages
from pi_plugins.compaction.plan import to_event
from pi_plugins.compaction.summary import serialize, summarize_compaction
from pi_core.app.tokens import context_tokens, estimate_method, estimate_tokens


def chain(*items):
    """Entries linked parent to child, like a session branch."""
    entries, parent = [], None
    for i, item in enumerate(items):
        entry = item if not hasattr(item, "role") else MessageEntry(message=item)
        entry.id, entry.parent_id = f"e{i:07d}", parent
        entries.append(entry)
        parent = entry.id
    return entries


def user(text):
    return UserMessage(content=[TextContent(text)])


def assistant(text="", calls=()):
    return AssistantMessage(content=[TextContent(text)] + [ToolCall(id=f"c{n}", name=name, arguments=args)
                                                       for n, (name, args) in enumerate(calls)],
                            stop_reason="toolUse" if calls else "stop")


def result(text, name="read"):
    return ToolResultMessage(tool_call_id="c0", tool_name=name, content=[TextContent(text)])


WORDS = "x" * 400  # 100 tokens by the chars/4 estimate


def test_estimates_are_chars_over_four_without_a_local_tiktoken_encoding(monkeypatch, tmp_path):
    from pi_core.app import tokens

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # nothing cached: no download
    tokens._counter.cache_clear()
    try:
        assert estimate_method() == "chars/4"
        assert estimate_tokens(user(WORDS)) == 100
        assert estimate_tokens(user("abcdefgh")) == 2
    finally:
        tokens._counter.cache_clear()  # later tests pick the machine's own setting again


def test_context_tokens_use_reported_usage_then_estimate_what_follows():
    first = assistant("hi")
    first.usage.total_tokens = 5000
    messages = [user("q"), first, user(WORDS)]
    assert context_tokens(messages) == 5000 + estimate_tokens(messages[2])
    first.stop_reason = "error"  # failed responses report nothing usable
    assert context_tokens(messages) == sum(estimate_tokens(m) for m in messages)


def test_the_cut_lands_on_a_turn_boundary_and_older_turns_are_summarised():
    path = chain(ModelChangeEntry(provider="p", model_id="m"),
                 user(WORDS), assistant(WORDS), user(WORDS), assistant(WORDS), user("latest"), assistant(WORDS))
    plan = prepare_compaction(path, keep_recent_tokens=101)  # reached at the "latest" question
    assert plan.first_kept_entry_id == path[5].id and not plan.is_split_turn
    assert [m.role for m in plan.messages_to_summarize] == ["user", "assistant", "user", "assistant"]


def test_the_cut_never_lands_on_a_tool_result():
    path = chain(user(WORDS), assistant("reading", [("read", {"path": "a.py"})]), result(WORDS * 3),
                 assistant(WORDS))
    first_kept, turn_start = find_cut(path, 0, len(path), keep_recent_tokens=200)
    assert path[first_kept].message.role != "toolResult"
    assert first_kept == 3 and turn_start == 0  # the next valid cut, inside the user's turn


def test_one_turn_larger_than_the_budget_is_a_split_turn_with_its_prefix_summarised_apart():
    path = chain(user("old question"), assistant("old answer"),
                 user("big task"), assistant("step 1", [("read", {"path": "a.py"})]), result(WORDS),
                 assistant("step 2", [("edit", {"path": "b.py"})]), result(WORDS), assistant(WORDS * 2))
    plan = prepare_compaction(path, keep_recent_tokens=150)
    assert plan.is_split_turn
    assert [m.role for m in plan.messages_to_summarize] == ["user", "assistant"]
    assert plan.turn_prefix_messages[0].content[0].text == "big task"
    assert plan.file_ops.lists() == (["a.py"], ["b.py"])


def test_a_repeated_compaction_starts_at_the_kept_boundary_with_the_previous_summary_and_files():
    earlier = chain(user(WORDS), assistant(WORDS), user("kept"), assistant(WORDS))
    compaction = CompactionEntry(summary="## Goal\nold", first_kept_entry_id=earlier[2].id, tokens_before=9,
                                 details={"readFiles": ["old.txt"], "modifiedFiles": ["gone.txt"]})
    path = chain(*earlier, compaction, user(WORDS), assistant(WORDS), user("newest"), assistant("done"))
    plan = prepare_compaction(path, keep_recent_tokens=50)
    assert plan.previous_summary == "## Goal\nold"
    assert plan.messages_to_summarize[0].content[0].text == "kept"
    assert plan.file_ops.lists() == (["old.txt"], ["gone.txt"])
    assert prepare_compaction(path[:5], keep_recent_tokens=50) is None  # already ends in a compaction


def test_transcripts_label_each_part_and_clip_long_tool_results():
    text = serialize([user("hi"), assistant("on it", [("bash", {"command": "ls"})]), result("y" * 5000)])
    assert "[User]: hi" in text and "[Assistant]: on it" in text
    assert '[Assistant tool calls]: bash(command="ls")' in text
    assert "[Tool result]: " + "y" * 2000 in text and "3000 more characters truncated" in text


def test_split_turn_summaries_are_merged_and_file_lists_appended():
    path = chain(user("old"), assistant("old answer"), user("big task"),
                 assistant("s1", [("write", {"path": "out.md"})]), result(WORDS), assistant(WORDS * 2))
    plan = prepare_compaction(path, keep_recent_tokens=150)
    requests = []

    async def summarizer(system, text, max_tokens):
        requests.append((text, max_tokens))
        return "PREFIX" if "first part of one long turn" in text else "HISTORY"

    summary, details = asyncio.run(summarize_compaction(to_event(plan), summarizer, reserve_tokens=1000,
                                                        instructions="keep the paths"))
    assert summary.startswith("HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX")
    assert summary.endswith("<modified-files>\nout.md\n</modified-files>")
    assert details == {"readFiles": [], "modifiedFiles": ["out.md"]}
    assert "Pay particular attention to: keep the paths" in requests[0][0]
    assert [r[1] for r in requests] == [800, 500]


def test_branch_messages_keep_the_newest_within_budget_and_skip_tool_results():
    entries = chain(user(WORDS), assistant(WORDS, [("read", {"path": "r.txt"})]), result(WORDS), user("last"))
    messages, ops = branch_messages(entries, token_budget=120)
    assert [m.role for m in messages] == ["assistant", "user"]
    assert ops.lists() == (["r.txt"], [])


def test_a_branch_shorter_than_keep_recent_tokens_is_planned_as_pi_plans_it():
    """pi 0.73 compacts a short session too: everything is kept (from the first entry,
    settings entries included) and the summary is of nothing before it."""
    path = chain(ModelChangeEntry(provider="p", model_id="m"), user("hello"), assistant("hi"))
    plan = prepare_compaction(path, keep_recent_tokens=20000)
    assert plan is not None and plan.first_kept_entry_id == path[0].id
    assert plan.messages_to_summarize == [] and plan.turn_prefix_messages == [] and not plan.is_split_turn
    assert prepare_compaction([], keep_recent_tokens=20000) is None
