"""The ``context`` and ``context_with_system`` hooks around pi 1.6's session system
messages (pi 1.6's extension events of the same names): ``context`` handlers see the
conversation without them and, when they change the list, the replayed prompt and tools
lead it again; ``context_with_system`` handlers see the whole transcript and what they
return is sent."""

import asyncio
import types

from pi_core import SystemMessage, hookimpl
from pi_core.app.settings import Settings
from pi_core.session import Session
from pi_plugins.sdk import create_harness
from support.llm_server import Reply


def _plugin(**hooks) -> types.ModuleType:
    module = types.ModuleType("context_probe")
    for name, function in hooks.items():
        setattr(module, name, hookimpl(function))
    return module


def _ask(tmp_path, server, plugin, compat=None, prompts=("hi",)):
    async def scenario():
        (tmp_path / "work").mkdir(exist_ok=True)
        session = Session.create(tmp_path / "work", tmp_path / "sessions")
        harness = await create_harness(plugin, model=server.model("openai-completions", compat=compat or {}),
                                       session=session, cwd=str(tmp_path / "work"), builtins=True,
                                       settings=Settings({}), active_tools=["read"])
        for text in prompts:
            server.push(Reply(text="ok"))
            await harness.prompt(text)
        errors = list(harness.plugins.errors)
        await harness.close()
        return errors

    return asyncio.run(scenario())


def test_context_handlers_see_no_system_message_and_a_changed_list_gets_the_prompt_back_first(tmp_path, server):
    seen = []

    def context(messages, ctx):
        seen.append([m.role for m in messages])
        return [m for m in messages if not (m.role == "user" and "drop me" in str(m.content))]

    _ask(tmp_path, server, _plugin(context=context), prompts=("drop me", "keep me"))
    assert seen and all("system" not in roles for roles in seen)
    sent = server.requests[-1].body["messages"]
    assert sent[0]["role"] == "system" and "read" in sent[0]["content"]  # the prompt, rebuilt first
    assert [m["role"] for m in sent] == ["system", "assistant", "user"]  # the dropped prompt is gone


def test_an_unchanged_list_keeps_later_system_messages_in_place(tmp_path, server):
    compat = {"supportsMidConvoSystemMessages": True}

    def context(messages, ctx):
        return list(messages)  # the same messages: nothing changed

    def context_with_system(messages, ctx):
        return [*messages[:-1], SystemMessage(content="Answer briefly."), messages[-1]]

    _ask(tmp_path, server, _plugin(context=context, context_with_system=context_with_system), compat)
    sent = server.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "system", "user"]
    assert sent[1]["content"] == "Answer briefly."


def test_context_with_system_handlers_see_the_whole_transcript_and_own_what_is_sent(tmp_path, server):
    compat = {"supportsMidConvoSystemMessages": True}
    seen = []

    def context_with_system(messages, ctx):
        seen.append([m.role for m in messages])
        return [SystemMessage(content="A prompt of my own."), *messages[1:]]

    _ask(tmp_path, server, _plugin(context_with_system=context_with_system), compat)
    assert seen == [["system", "user"]]
    sent = server.requests[-1].body["messages"]
    assert sent[0] == {"role": "system", "content": "A prompt of my own."}


def test_a_handler_that_drops_the_leading_system_message_is_reported_and_the_transcript_is_sent(tmp_path, server):
    def context_with_system(messages, ctx):
        return messages[1:]

    errors = _ask(tmp_path, server, _plugin(context_with_system=context_with_system),
                  {"supportsMidConvoSystemMessages": True})
    assert any("dropped the leading system message" in str(e.error) for e in errors)
    assert server.requests[-1].body["messages"][0]["role"] == "system"
