"""pi 1.6's extension events and ctx members: the wire events of an answer, input's
streaming behaviour, one more request before the prompt settles, a compaction that fails,
a plugin's message that starts a run, and what the system prompt is built from.

Run it: python docs/examples/hooks_pi16.py
(The scripted provider stands in for a model, so this runs offline.)
"""

import asyncio
import tempfile
from pathlib import Path

import attrs

import pi_plugins.app_messages
import pi_plugins.system_prompt
from pi_core import CustomMessage, create_harness, hookimpl
from pi_core.testing import Reply, ScriptedProvider, scripted_model


class Pi16Tour:
    def __init__(self):
        self.reminded = False

    @hookimpl
    def input(self, event, ctx):  # streaming_behavior: "steer" / "follow_up" mid-run, None idle
        print(f"input: {event.text!r} streaming_behavior={event.streaming_behavior}")

    @hookimpl
    def provider_stream_event(self, data, model):  # each wire event, before it is pi's
        print(f"provider_stream_event: {data['type']} {data['delta']!r} from {model.id}")

    @hookimpl
    def agent_before_settle(self, event, ctx):
        if self.reminded:  # guard it: an unconditional continuation never settles
            return None
        self.reminded = True
        print(f"agent_before_settle: {event.outcome}, can_continue={event.context.can_continue}; "
              "one reminder, one more request")
        draft = {"type": "custom_message", "customType": "review-reminder",
                 "content": "Review the diff before replying.", "display": False}
        return attrs.evolve(event, entries=[*event.entries, draft], continue_run=True)

    @hookimpl
    def run_settling(self, event, ctx):  # None: no opinion (settle_boundary asks agent_before_settle)
        print(f"run_settling: after {len(event.messages)} messages")

    @hookimpl
    def session_compact_failed(self, event, ctx):
        print(f"session_compact_failed: {event.reason} aborted={event.aborted} ({event.error_message})")

    @hookimpl
    def before_agent_start(self, event, ctx):
        started_by = f"message {event.message.custom_type!r}" if event.message else f"prompt {event.prompt!r}"
        print(f"before_agent_start: {started_by}")

    @hookimpl
    def system_prompt_options(self, ctx):
        return None  # no opinion: the built-in system_prompt plugin answers


async def main(folder: Path) -> None:
    provider = ScriptedProvider([Reply(text="Done.", chunk=3), Reply(text="Reviewed.", chunk=20),
                                Reply(text="Noted.", chunk=20)])
    harness = await create_harness(provider, pi_plugins.app_messages, pi_plugins.system_prompt, Pi16Tour(),
                                   model=scripted_model(), cwd=str(folder))
    ctx = harness.ctx
    print(f"trusted={ctx.is_project_trusted()} scoped_models={ctx.scoped_models}")
    await harness.prompt("Fix the bug")
    print("last request ends with:", provider.requests[-1].messages[-1].content[0].text)
    await harness.compact()  # too little to compact yet
    ctx.send_message(CustomMessage(custom_type="build", content="The build passed."), trigger_turn=True)
    await harness.wait_for_idle()
    options = await ctx.system_prompt_options()
    print(f"system_prompt_options: tools={options.selected_tools} custom={options.custom_prompt}")
    print("answers:", [m.text for m in harness.messages if m.role == "assistant"])
    await harness.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(Path(tmp)))
