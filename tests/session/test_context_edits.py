"""pi 1.6's ``context_edit`` entries change what the model sees of an earlier message,
never the history: ``None`` leaves it out, ``{"content": ...}`` replaces its content
only; the latest edit on the branch wins, and a branch without the edit sees the original."""

from pi_core.protocol.codec import to_json
from pi_core.protocol.messages import TextContent
from pi_core.app.context_edits import append_context_edit
from pi_core.session import Session
from support.sessions import assistant, tool_result, user


def contents(session: Session) -> list:
    return [to_json(m).get("content") for m in session.build_context().messages]


def test_an_edit_to_none_leaves_the_message_out_of_the_context_but_in_the_file(tmp_path):
    s = Session.create(tmp_path, tmp_path)
    secret = s.append_message(user("secret"))
    s.append_message(assistant("ok"))
    append_context_edit(s, secret.id, None)
    assert contents(s) == [[{"type": "text", "text": "ok"}]]
    s.close()
    again = Session.open(s.file, read_only=True)
    assert again.entry(secret.id).message.content[0].text == "secret"
    assert contents(again) == [[{"type": "text", "text": "ok"}]]


def test_a_replacement_changes_only_the_content_and_a_string_becomes_a_block_where_needed(tmp_path):
    s = Session.in_memory(tmp_path)
    question = s.append_message(user("long question"))
    call = s.append_message(assistant("", calls=[("c1", "bash")]))
    result = s.append_message(tool_result("c1", "x" * 1000))
    append_context_edit(s, question.id, {"content": "short"})
    append_context_edit(s, result.id, {"content": "trimmed"})
    messages = s.build_context().messages
    assert messages[0].content == "short"  # a user's content may be a string
    assert messages[1] is call.message
    assert messages[2].content == [TextContent("trimmed")]
    assert (messages[2].tool_call_id, messages[2].timestamp) == ("c1", result.message.timestamp)
    assert s.entries[-1].replacement == {"content": [{"type": "text", "text": "trimmed"}]}  # as pi writes it


def test_the_latest_edit_wins_and_a_branch_without_it_sees_the_original(tmp_path):
    s = Session.in_memory(tmp_path)
    question = s.append_message(user("original"))
    answer = s.append_message(assistant("ok"))
    append_context_edit(s, question.id, {"content": "first edit"})
    append_context_edit(s, question.id, {"content": "second edit"})
    assert contents(s)[0] == "second edit"
    s.branch(answer.id)
    assert contents(s)[0] == [{"type": "text", "text": "original"}]


def test_an_edit_of_a_summarised_message_counts_only_if_the_edit_itself_is_kept(tmp_path):
    s = Session.in_memory(tmp_path)
    old = s.append_message(user("old"))
    append_context_edit(s, old.id, None)  # summarised away with its target
    kept = s.append_message(user("kept"))
    s.append_message(assistant("ok"))
    s.append_compaction("summary", kept.id, 100)
    append_context_edit(s, kept.id, {"content": "kept, edited"})
    assert contents(s)[1] == "kept, edited"
    assert [m.role for m in s.build_context().messages] == ["compactionSummary", "user", "assistant"]
