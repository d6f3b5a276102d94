"""Hooks of the session: lifecycle, compaction, tree navigation, model and thinking
changes, automatic retries, and extra resources (skills, prompt templates).

Run it: python docs/examples/hooks_session.py
(The scripted provider stands in for a model, so this runs offline.)
"""

import asyncio
import tempfile
from pathlib import Path

import pi_plugins.skills
from pi_core import (
    CompactionDecision,
    CompactionResult,
    Failure,
    Settings,
    TreeDecision,
    create_harness,
    hookimpl,
)
from pi_core.testing import RecordingUI, Reply, ScriptedProvider, scripted_model


class SessionTour:
    def __init__(self, skills_folder):
        self.skills_folder = skills_folder

    @hookimpl
    def session_start(self, event, ctx):
        print(f"session_start: reason={event.reason}")

    @hookimpl
    def session_shutdown(self, event, ctx):
        print("session_shutdown")

    @hookimpl
    def resources_discover(self, event, ctx):
        return [("skill", str(self.skills_folder))]  # or ("prompt", path)

    @hookimpl
    def auto_retry_start(self, event, ctx):
        print(f"auto_retry_start: attempt {event.attempt}/{event.max_attempts} ({event.error_message})")

    @hookimpl
    def auto_retry_end(self, event, ctx):
        print(f"auto_retry_end: success={event.success}")

    @hookimpl
    def model_select(self, event, ctx):
        print(f"model_select: {event.previous_model.id} -> {event.model.id} ({event.source})")

    @hookimpl
    def thinking_level_select(self, event, ctx):
        print(f"thinking_level_select: {event.previous_level} -> {event.level}")

    @hookimpl
    def after_agent_run(self, event, ctx):
        # A run ended; RunDecision(run_again=True) would send the request again (the
        # built-in retries plugin decides here). This one only watches.
        print(f"after_agent_run: after {event.continued} retries")

    @hookimpl
    def compaction_start(self, event, ctx):
        print(f"compaction_start: {event.reason}")

    @hookimpl
    def prepare_compaction(self, event, ctx):
        # The plan is the compaction plugin's (event.preparation); a plugin may change it.
        print(f"prepare_compaction: planned={event.preparation is not None}")

    @hookimpl
    def session_before_compact(self, event, ctx):
        # Write the summary yourself (no model call), keeping the last user message on.
        users = [e for e in event.entries if e.type == "message" and e.message.role == "user"]
        summary = f"The user asked {len(users)} questions."
        return CompactionDecision(result=CompactionResult(
            summary=summary, first_kept_entry_id=users[-1].id, tokens_before=1234))

    @hookimpl
    def session_compact(self, event, ctx):
        print(f"session_compact: {event.entry.summary!r} from_hook={event.from_hook} "
              f"reason={event.reason} will_retry={event.will_retry}")

    @hookimpl
    def agent_settled(self, event, ctx):  # the prompt's work is all done (retries included)
        print(f"agent_settled: aborted={event.aborted} mode={ctx.mode}")

    @hookimpl
    def session_info_changed(self, event, ctx):
        print(f"session_info_changed: {event.name!r}")

    @hookimpl
    def ui_prompt_start(self, event, ctx):  # only where there is a UI to wait for
        print(f"ui_prompt_start: {event.kind} {event.title!r}")

    @hookimpl
    def ui_prompt_end(self, event, ctx):
        print("ui_prompt_end")

    @hookimpl
    def compaction_end(self, event, ctx):
        print(f"compaction_end: aborted={event.aborted} result={event.result is not None}")

    @hookimpl
    def session_before_tree(self, event, ctx):
        print(f"session_before_tree: leaving {len(event.entries)} entries")
        return TreeDecision(summary="We had explored a dead end.")

    @hookimpl
    def session_tree(self, event, ctx):
        print(f"session_tree: summary entry {event.summary_entry.type}")


async def main(folder: Path) -> None:
    skill = folder / "skills" / "haiku"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: haiku\ndescription: Answer in a haiku.\n---\nAnswer in three short lines.\n")
    provider = ScriptedProvider([
        Reply(error="529 overloaded", failure=Failure(kind="retryable", status=529)),
        Reply(text="Hello!"),
        Reply(text="Leaves fall / ..."),
    ])
    settings = Settings({"retry": {"baseDelayMs": 1}})  # what settings.json would say
    harness = await create_harness(provider, pi_plugins.skills, SessionTour(folder / "skills"),
                                   model=scripted_model(), settings=settings, cwd=str(folder))
    await harness.prompt("Hi")
    first = harness.session.leaf_id
    harness.ctx.set_session_name("Greetings")
    harness.ctx.ui = RecordingUI(confirms=[True])  # a mode with a UI (the chat, an RPC client)
    print("confirmed:", await harness.ctx.ui.confirm("Go on?"))
    await harness.prompt("/skill:haiku autumn")
    sent = provider.requests[-1].messages[-1].content[0].text
    print("the model got:", sent.split(" location=")[0], "...", sent.splitlines()[-1])

    await harness.set_model(scripted_model("scripted-large", reasoning=True))  # takes thinking levels
    await harness.set_thinking_level("high")
    await harness.compact()
    await harness.navigate_tree(first, summarize=True)
    print("context now:", [m.role for m in harness.messages])
    await harness.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(Path(tmp)))
