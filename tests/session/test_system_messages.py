"""The replay rule of pi 1.6's system messages (``pi_plugins.system_messages``): sections
patched by name (None removes one), tools removed then added, later content appended;
what a prompt declares by section; and the patch that takes one loadout to the next."""

from pi_core import SystemMessage, UserMessage
from pi_core.protocol.codec import message_from_json, to_json
from pi_core.protocol.messages import UnknownMessage
from pi_plugins.system_messages import change, replay, split_prompt, transcript, update_text

READ = {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}
BASH = {"name": "bash", "description": "Run a command", "parameters": {"type": "object"}}


def test_a_system_message_reads_and_writes_back_as_pi16_wrote_it():
    line = {"role": "system", "content": "", "sections": {"skills": None, "cwd": "<cwd>\n/p\n</cwd>"},
            "timestamp": 1, "toolsRemoved": [{"name": "write"}], "futureKey": 1}
    message = message_from_json(line)
    assert isinstance(message, SystemMessage) and message.sections == line["sections"]
    assert to_json(message) == line


def test_replaying_patches_sections_by_name_and_tools_in_order():
    loadout = replay([
        SystemMessage(sections={"preamble": "P", "skills": "S", "cwd": "C"}, tools_added=[READ, BASH]),
        UserMessage("hi"),
        UnknownMessage({"role": "system", "content": "Also this.", "sections": {"skills": None, "cwd": "C2"},
                        "toolsRemoved": [{"name": "bash"}]}),
    ])
    assert loadout.sections == {"preamble": "P", "cwd": "C2"}
    assert list(loadout.tools) == ["read"]
    assert loadout.prompt == "Also this.\n\nP\n\nC2"


def test_a_prompt_is_split_into_the_named_parts_it_is_made_of():
    parts = [("preamble", "P"), ("project_context", "X"), ("cwd", "C")]
    assert split_prompt("P\n\nX\n\nC", parts) == dict(parts)
    assert split_prompt("P\n\nX\n\nC\n\n<mcp_servers>\nm\n</mcp_servers>", parts) == {
        **dict(parts), "mcp_servers": "<mcp_servers>\nm\n</mcp_servers>"}
    assert split_prompt("P\n\nX\n\nC\n\nmore", parts)["extensions"] == "more"
    assert split_prompt("rewritten by a plugin", parts) == {"preamble": "rewritten by a plugin"}


def test_the_first_declaration_is_whole_and_a_later_one_only_what_changed():
    nothing = replay([])
    first = change(nothing, {"preamble": "P", "cwd": "C"}, {"read": READ})
    assert to_json(first)["sections"] == {"preamble": "P", "cwd": "C"} and first.tools_added == [READ]
    before = replay([first])
    assert change(before, {"preamble": "P", "cwd": "C"}, {"read": READ}) is None
    later = change(before, {"preamble": "P2"}, {"read": {**READ, "description": "new"}, "bash": BASH})
    assert later.sections == {"preamble": "P2", "cwd": None}
    assert later.tools_removed == [{"name": "read"}]
    assert [t["name"] for t in later.tools_added] == ["read", "bash"]


def test_a_model_with_mid_conversation_system_messages_gets_the_changes_in_place():
    messages = [SystemMessage(sections={"preamble": "P", "cwd": "C"}), UserMessage("hi"),
                SystemMessage(sections={"cwd": "C2", "skills": None}), UserMessage("again")]
    assert transcript("P\n\nC2", messages, mid_conversation=False) == ("P\n\nC2", [])
    assert transcript("P\n\nC2", messages, mid_conversation=True) == (
        "P\n\nC", [(2, 'Updated system prompt section "cwd":\n\nC2\n\nRemoved system prompt section "skills".')])
    assert update_text({"content": "Note.", "sections": {}}) == "Note."


def test_changes_are_placed_before_the_message_they_came_with_unless_the_head_is_gone():
    from pi_plugins.system_messages import mid_conversation

    hi, again = UserMessage("hi"), UserMessage("again")
    messages = [SystemMessage(sections={"preamble": "P"}), hi, SystemMessage(sections={"preamble": "P2"}), again]
    prompt, placed = mid_conversation("P2", messages)
    assert prompt == "P" and placed == {id(again): ['Updated system prompt section "preamble":\n\nP2']}
    assert mid_conversation("P2", messages[1:]) == ("P2", {})  # compacted away: folded


def test_a_compaction_entry_reads_and_writes_pi16s_system_message_back_as_written():
    from pi_core.protocol.codec import line_from_json

    line = {"type": "compaction", "id": "f6g7h8i9", "parentId": "e5f6g7h8", "timestamp": "2026-12-03T14:10:00.000Z",
            "summary": "S", "firstKeptEntryId": "c3d4e5f6", "tokensBefore": 50000,
            "systemMessage": {"role": "system", "content": "", "sections": {"preamble": "P"},
                              "toolsAdded": [READ], "timestamp": 1733235000000}}
    entry = line_from_json(line)
    assert isinstance(entry.system_message, SystemMessage) and entry.system_message.tools_added == [READ]
    assert to_json(entry) == line


def test_a_compacted_context_leads_with_the_compactions_system_message_not_the_kept_ones(tmp_path):
    """pi 1.6's rule: the compaction's ``systemMessage`` stands for the system messages
    among the entries it kept; one written after the compaction stays in place."""
    from pi_core.app.compacting import current_system_message
    from pi_core.session.session import Session

    session = Session.create(tmp_path, tmp_path / "sessions")
    session.append_message(SystemMessage(sections={"preamble": "P", "cwd": "C"}, tools_added=[READ]))
    kept = session.append_message(UserMessage("hi"))
    session.append_message(SystemMessage(sections={"cwd": "C2"}, tools_added=[BASH]))
    replayed = current_system_message(session.build_context().messages)
    assert replayed.sections == {"preamble": "P", "cwd": "C2"} and replayed.tools_added == [READ, BASH]
    session.append_compaction("summary", kept.id, 100, system_message=replayed)
    session.append_message(SystemMessage(sections={"skills": "S"}))
    roles = [m.role for m in session.build_context().messages]
    assert roles == ["system", "compactionSummary", "user", "system"]
    assert session.build_context().messages[0] is replayed
    assert current_system_message([UserMessage("no system message")]) is None
