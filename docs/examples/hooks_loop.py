"""Hooks of the agent loop: input, the system prompt, requests, turns and messages.

Run it: python docs/examples/hooks_loop.py
(The scripted provider stands in for a model, so this runs offline.)
"""

import asyncio

import attrs

from pi_core import CustomMessage, TextContent, UserMessage, create_harness, hookimpl
from pi_core.testing import Reply, ScriptedProvider, scripted_model


class LoopTour:
    """One handler per loop hook; each prints what it sees."""

    # --- chain hooks: return a changed value, or None to keep it

    @hookimpl
    def input(self, event, ctx):
        if event.text == "/ping":  # consume the input: nothing reaches the model
            print("input: /ping handled by the plugin")
            return attrs.evolve(event, handled=True)
        return attrs.evolve(event, text=event.text.replace("colour", "color"))

    @hookimpl
    def before_agent_start(self, event, ctx):
        print(f"before_agent_start: prompt={event.prompt!r}")
        note = CustomMessage(custom_type="note", content="The user prefers short answers.")
        return attrs.evolve(event, system_prompt="You are terse.", messages=[*event.messages, note])

    @hookimpl
    def prepare_request(self, request, ctx):
        print(f"prepare_request: system={request.system_prompt!r}, "
              f"{len(request.messages)} messages, model={request.model.id}")

    @hookimpl
    def context(self, messages, ctx):
        print(f"context: roles {[m.role for m in messages]}")
        return messages  # a new list here changes this one call only

    @hookimpl
    def context_with_system(self, messages, ctx):
        # pi 1.6's: after every `context` handler, the whole transcript with the
        # session's system messages (run by the system_messages built-in); sent as returned
        return messages

    @hookimpl
    def convert_to_llm(self, messages, ctx):
        # The built-in app_messages plugin maps custom messages; without it, do it here.
        return [UserMessage(content=[TextContent(m.content)]) if m.role == "custom" else m
                for m in messages]

    @hookimpl
    def message_end(self, message, ctx):
        if message.role == "assistant":  # replace what is stored and what the model sees
            return attrs.evolve(message, content=[TextContent(message.text.upper())])

    # --- notify hooks: results are ignored

    @hookimpl
    def agent_start(self, event, ctx):
        print("agent_start")

    @hookimpl
    def turn_start(self, event, ctx):
        print("turn_start")

    @hookimpl
    def message_start(self, event, ctx):
        print(f"message_start: {event.message.role}")

    @hookimpl
    def message_update(self, event, ctx):  # every streamed event: keep it cheap
        update = event.assistant_message_event
        if update.type == "text_delta":
            print(f"message_update: {update.delta!r}")
            if update.delta == "Blue is ":  # queue a follow-up while the answer streams
                ctx.harness.follow_up("And another?")

    @hookimpl
    def queue_update(self, event, ctx):
        print(f"queue_update: steering={event.steering} follow_up={event.follow_up}")

    @hookimpl
    def turn_end(self, event, ctx):
        print(f"turn_end: {event.message.text!r}, {len(event.tool_results)} tool results")

    @hookimpl
    def agent_end(self, event, ctx):
        print(f"agent_end: {len(event.messages)} messages")


async def main() -> None:
    provider = ScriptedProvider([Reply(text="Blue is a color.", chunk=8, delay=0.01), Reply(text="Red.")])
    harness = await create_harness(provider, LoopTour(), model=scripted_model())
    await harness.prompt("/ping")
    await harness.prompt("Name a colour.")
    print("stored:", [m.text for m in harness.messages if m.role == "assistant"])
    sent = provider.requests[0]
    print("the model got first:", [m.content[0].text for m in sent.messages])


if __name__ == "__main__":
    asyncio.run(main())
