"""The context built from the leaf: compaction, summaries, plugin messages, restored settings."""

from __future__ import annotations

from pi_core.protocol.messages import (
    AssistantMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ToolResultMessage,
    UserMessage,
)
from pi_core.session import ModelRef, Session
from support.sessions import assistant, tool_result, user


def roles(session: Session) -> list[str]:
    return [m.role for m in session.build_context().messages]


def test_compaction_keeps_from_first_kept_entry_and_everything_after():
    s = Session.in_memory("/w")
    s.append_message(user("old question"))
    s.append_message(assistant("old answer"))
    kept = s.append_message(user("kept question"))
    s.append_message(assistant("kept answer"))
    s.append_compaction("the summary", kept.id, 5000)
    s.append_message(user("new question"))
    messages = s.build_context().messages
    assert isinstance(messages[0], CompactionSummaryMessage)
    assert messages[0].summary == "the summary" and messages[0].tokens_before == 5000
    assert [m.content[0].text if isinstance(m, UserMessage) else getattr(m, "text", "")
            for m in messages[1:]] == ["kept question", "kept answer", "new question"]


def test_only_the_latest_compaction_on_the_path_counts():
    s = Session.in_memory("/w")
    first = s.append_message(user("q1"))
    s.append_compaction("summary one", first.id, 10)
    q2 = s.append_message(user("q2"))
    s.append_compaction("summary two", q2.id, 20)
    messages = s.build_context().messages
    assert [m.role for m in messages] == ["compactionSummary", "user"]
    assert messages[0].summary == "summary two"


def test_compaction_whose_first_kept_entry_is_elsewhere_keeps_only_what_follows():
    s = Session.in_memory("/w")
    s.append_message(user("q1"))
    s.append_compaction("sum", "notthere", 1)
    s.append_message(user("q2"))
    assert roles(s) == ["compactionSummary", "user"]


def test_custom_messages_take_part_and_custom_entries_do_not():
    s = Session.in_memory("/w")
    s.append_message(user("q"))
    s.append_custom("state", {"count": 1})
    entry = s.append_custom_message("reminder", "remember the milk", display=False,
                                    details={"x": 1})
    s.append_label(entry.id, "x")
    s.append_session_info("name")
    messages = s.build_context().messages
    assert [m.role for m in messages] == ["user", "custom"]
    custom = messages[1]
    assert isinstance(custom, CustomMessage)
    assert (custom.custom_type, custom.content, custom.display, custom.details) == (
        "reminder", "remember the milk", False, {"x": 1})


def test_branch_summary_without_text_is_left_out():
    s = Session.in_memory("/w")
    q = s.append_message(user("q"))
    s.branch_with_summary(q.id, "")
    assert roles(s) == ["user"]


def test_model_and_thinking_level_are_the_last_set_on_the_path():
    s = Session.in_memory("/w")
    s.append_model_change("openai", "gpt-4o")
    s.append_thinking_level_change("high")
    s.append_message(user("q"))
    assert s.build_context().model == ModelRef("openai", "gpt-4o")
    fork_point = s.leaf_id
    s.append_message(assistant("a", provider="anthropic", model="claude"))
    context = s.build_context()
    assert context.model == ModelRef("anthropic", "claude") and context.thinking_level == "high"
    s.branch(fork_point)
    s.append_thinking_level_change("low")
    context = s.build_context()
    assert context.model == ModelRef("openai", "gpt-4o") and context.thinking_level == "low"


def test_empty_session_context_is_empty_with_defaults():
    context = Session.in_memory("/w").build_context()
    assert (context.messages, context.thinking_level, context.model) == ([], "off", None)


def test_tool_result_cut_from_its_call_by_a_compaction_is_left_out():
    s = Session.in_memory("/w")
    s.append_message(user("q"))
    s.append_message(assistant("", calls=[("c1", "bash"), ("c2", "read")]))
    first_result = s.append_message(tool_result("c1"))
    s.append_message(tool_result("c2"))
    s.append_message(assistant("done"))
    s.append_compaction("sum", first_result.id, 100)
    assert roles(s) == ["compactionSummary", "assistant"]


def test_tool_results_right_after_their_call_are_kept_in_order():
    s = Session.in_memory("/w")
    s.append_message(user("q"))
    s.append_message(assistant("", calls=[("c1", "bash"), ("c2", "read")]))
    s.append_model_change("p", "m")  # entries that are no message do not split a batch
    s.append_message(tool_result("c2"))
    s.append_message(tool_result("c1"))
    messages = s.build_context().messages
    assert [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)] == ["c2", "c1"]
    assert isinstance(messages[1], AssistantMessage)
