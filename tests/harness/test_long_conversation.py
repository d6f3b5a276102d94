"""Issue 6's long conversation: one harness, one session file, everything in turn:
threshold compaction mid tool run, a 429 retried, a 500 outlasting the retries, an
overflow compacted and retried, manual compaction with instructions, a plugin's own
summary, a plugin's veto, and tree navigation with and without a summary."""

import json

from pi_core import hookimpl
from pi_core.protocol.events import CompactionDecision, CompactionResult
from pi_core.protocol.messages import Failure, text_of
from pi_core.testing import Reply

from support.agents import run
from support.harnesses import SUMMARY, lines, make


class Steward:
    """Stays out of compaction until told to supply a summary or to veto one."""

    mode = None

    @hookimpl
    def session_before_compact(self, event):
        if self.mode == "own":
            return CompactionDecision(result=CompactionResult("notes by the plugin", event.entries[-1].id, 1))
        if self.mode == "veto":
            return {"cancel": True}
        return None


def test_one_long_conversation_through_every_recovery_and_summary(tmp_path):
    instructions_seen = []

    def router(context):
        text = text_of(context.messages[-1].content) if context.messages else ""
        if "<conversation>" in text:
            instructions_seen.append("Pay particular attention to: keep file names" in text)
            return Reply(text=SUMMARY)
        return None

    tool_run = [Reply(text=f"step {i}", tool_calls=[("dump", {"n": i})]) for i in range(6)]
    fails = [Reply(error=f"500 internal error ({n})", failure=Failure("retryable", 500)) for n in range(4)]
    script = [*tool_run, Reply(text="job done"),
              Reply(error="429 slow down", failure=Failure("retryable", 429, retry_after_ms=5)),
              Reply(text="after the retry"),
              *fails,
              Reply(error="context too long", failure=Failure("overflow", 400)), Reply(text="recovered"),
              Reply(text="on the new branch")]
    steward = Steward()
    harness, provider, events = make(
        tmp_path, script, steward, window=2500, router=router,
        settings={"compaction": {"reserveTokens": 500, "keepRecentTokens": 600}})

    run(harness.prompt("start a long job"))
    assert harness.messages[-1].text == "job done"
    assert events.of("compaction_end")[0].reason == "threshold"
    checkpoint = harness.session.leaf_id

    run(harness.prompt("next"))
    assert harness.messages[-1].text == "after the retry" and events.of("auto_retry_end")[0].success

    run(harness.prompt("fail hard"))
    assert harness.messages[-1].stop_reason == "error" and not events.of("auto_retry_end")[-1].success

    run(harness.prompt("overflow now"))
    assert harness.messages[-1].text == "recovered"
    assert [e.reason for e in events.of("compaction_end")][-1] == "overflow"

    assert run(harness.compact("keep file names")) is not None
    assert instructions_seen[-1] is True

    steward.mode = "own"
    assert run(harness.compact()).summary == "notes by the plugin"
    steward.mode = "veto"
    assert run(harness.compact()) is None and events.of("compaction_end")[-1].aborted
    steward.mode = None

    leaf = harness.session.leaf_id
    assert run(harness.navigate_tree(checkpoint, summarize=True))
    run(harness.prompt("carry on from the checkpoint"))
    assert harness.messages[-1].text == "on the new branch"
    assert run(harness.navigate_tree(leaf))
    assert harness.session.leaf_id == leaf

    written = lines(harness.session)
    kinds = [l["type"] for l in written]
    assert kinds[0] == "session" and kinds.count("compaction") == 4 and kinds.count("branch_summary") == 1
    compactions = [l for l in written if l["type"] == "compaction"]
    assert [c["fromHook"] for c in compactions] == [False, False, False, True]
    ids = {l["id"] for l in written[1:]}
    assert all(l["parentId"] in ids or l["parentId"] is None for l in written[1:])
    stored = [l["message"].get("stopReason") for l in written if l["type"] == "message"]
    assert stored.count("error") == 6  # every failure kept in the file: 429, 4 x 500, overflow
    assert json.loads(json.dumps(written)) == written
