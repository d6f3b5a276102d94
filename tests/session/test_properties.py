"""Random sequences of appends, branches, labels and compactions keep the session sound.

Invariants after every step: every path from an entry ends at a root; the context never
starts with a tool result and every tool result follows the assistant message that called
it; the file, reloaded, equals the session in memory (and does not exist before the first
assistant message).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from pi_core.protocol.codec import to_json
from pi_core.protocol.entries import MessageEntry
from pi_core.protocol.messages import AssistantMessage, ToolResultMessage
from pi_core.session import Session
from support.sessions import assistant, tool_result, user

words = st.text(alphabet="abcdefghij ✓é", min_size=0, max_size=12)
picks = st.integers(min_value=0, max_value=10_000)


def owed_calls(session: Session) -> list[str]:
    """Calls of the assistant message at the end of the path still without a result."""
    answered = set()
    for entry in reversed(session.path()):
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if isinstance(message, ToolResultMessage):
            answered.add(message.tool_call_id)
        elif isinstance(message, AssistantMessage):
            return [c.id for c in message.tool_calls if c.id not in answered]
        else:
            return []
    return []


def _is_tool_result(entry) -> bool:
    return isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage)


class SessionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="session-props-"))
        self.session = Session.create("/props", self.directory)
        self.calls = 0

    def teardown(self) -> None:
        self.session.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def pick(self, n: int):
        entries = self.session.entries
        return entries[n % len(entries)] if entries else None

    # ------------------------------------------------------------ appends

    @rule(text=words)
    def ask(self, text):
        self.session.append_message(user(text))

    @rule(text=words, n_calls=st.integers(0, 3))
    def answer(self, text, n_calls):
        calls = []
        for _ in range(n_calls):
            self.calls += 1
            calls.append((f"call_{self.calls}", "bash"))
        self.session.append_message(assistant(text, calls=calls))

    @precondition(lambda self: owed_calls(self.session))
    @rule(n=picks)
    def run_a_tool(self, n):
        owed = owed_calls(self.session)
        self.session.append_message(tool_result(owed[n % len(owed)]))

    @rule(provider=st.sampled_from(["openai", "anthropic"]), model=words)
    def change_model(self, provider, model):
        self.session.append_model_change(provider, model)

    @rule(level=st.sampled_from(["off", "low", "high"]))
    def change_thinking(self, level):
        self.session.append_thinking_level_change(level)

    @rule(text=words, display=st.booleans())
    def plugin_message(self, text, display):
        self.session.append_custom_message("plugin", text, display)

    # integers a JSON number holds exactly in every reader (pi's are doubles; orjson reads
    # beyond 64 bits as a float): plugin data from either program stays within them
    @rule(data=st.dictionaries(st.text(max_size=3), st.integers(-(2**53), 2**53), max_size=2))
    def plugin_state(self, data):
        self.session.append_custom("plugin", data)

    @precondition(lambda self: len(self.session) > 0)
    @rule(n=picks, label=st.one_of(st.none(), words))
    def label(self, n, label):
        self.session.append_label(self.pick(n).id, label)

    @rule(name=words)
    def rename(self, name):
        self.session.append_session_info(name)

    @precondition(lambda self: len(self.session) > 0)
    @rule(n=picks, bogus=st.booleans(), summary=words)
    def compact(self, n, bogus, summary):
        path = self.session.path()
        first_kept = "nowhere!" if bogus or not path else path[n % len(path)].id
        self.session.append_compaction(summary or "summary", first_kept, n)

    @precondition(lambda self: any(_is_tool_result(e) for e in self.session.path()))
    @rule(n=picks)
    def compact_inside_a_tool_batch(self, n):
        """The cut falls between a call and its result (pi's own compaction never does)."""
        results = [e for e in self.session.path() if _is_tool_result(e)]
        self.session.append_compaction("summary", results[n % len(results)].id, n)

    # ------------------------------------------------------------ moving the leaf

    @precondition(lambda self: len(self.session) > 0)
    @rule(n=picks)
    def branch(self, n):
        self.session.branch(self.pick(n).id)

    @precondition(lambda self: len(self.session) > 0)
    @rule(n=picks, to_root=st.booleans(), summary=words)
    def branch_with_summary(self, n, to_root, summary):
        target = None if to_root else self.pick(n).id
        self.session.branch_with_summary(target, summary)

    @rule()
    def reset_leaf(self):
        self.session.reset_leaf()

    @precondition(lambda self: self.session.on_disk)
    @rule()
    def reopen(self):
        entries = [to_json(e) for e in self.session.entries]
        self.session.close()
        self.session = Session.open(self.session.file)
        assert [to_json(e) for e in self.session.entries] == entries
        assert self.session.leaf_id == self.session.entries[-1].id

    # ------------------------------------------------------------ invariants

    @invariant()
    def every_path_ends_at_a_root(self):
        for entry in self.session.entries:
            path = self.session.path(entry.id)
            assert path[-1] is entry and path[0].parent_id is None
            for parent, child in zip(path, path[1:]):
                assert child.parent_id == parent.id

    @invariant()
    def tool_results_follow_their_call(self):
        messages = self.session.build_context().messages
        assert not messages or not isinstance(messages[0], ToolResultMessage)
        batch: set[str] = set()
        for message in messages:
            if isinstance(message, ToolResultMessage):
                assert message.tool_call_id in batch
                batch.discard(message.tool_call_id)
            elif isinstance(message, AssistantMessage):
                batch = {c.id for c in message.tool_calls}
            else:
                batch = set()

    @invariant()
    def reload_equals_memory(self):
        session = self.session
        if not session.on_disk:
            assert not session.file.exists()
            assert not any(isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
                           for e in session.entries)
            return
        again = Session.open(session.file, read_only=True)
        assert again.problems == []
        assert to_json(again.header) == to_json(session.header)
        assert [to_json(e) for e in again.entries] == [to_json(e) for e in session.entries]
        assert again.labels == session.labels and again.name == session.name
        assert again.leaf_id == session.entries[-1].id
        if session.leaf_id is None:
            again.reset_leaf()
        else:
            again.branch(session.leaf_id)
        ours, theirs = session.build_context(), again.build_context()
        assert [to_json(m) for m in theirs.messages] == [to_json(m) for m in ours.messages]
        assert (theirs.model, theirs.thinking_level) == (ours.model, ours.thinking_level)


SessionMachine.TestCase.settings = settings(
    max_examples=50, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSessionProperties = SessionMachine.TestCase
