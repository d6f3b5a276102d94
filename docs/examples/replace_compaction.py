"""Replace the built-in compaction with a plugin of its own.

This file is the plugin: past MAX_MESSAGES in the context it keeps the last KEEP_TURNS
user turns and puts, in place of the rest, a list of what the user asked, with no model
call. It implements the hooks the built-in ``compaction`` implements: ``prepare_request``
(when), ``prepare_compaction`` (what) and ``session_before_compact`` (the summary), and
builds on the harness's primitive, ``ctx.compact``.

Run it: python docs/examples/replace_compaction.py
(pi's built-ins with the built-in compaction dropped, and a scripted model: it runs offline.)
Use it with pi: settings.json ``{"extensions": ["-builtin:compaction", "./replace_compaction.py"]}``.
"""

import asyncio
import sys
import tempfile

import attrs

from pi_core import (
    CompactionDecision,
    CompactionPreparation,
    CompactionResult,
    Settings,
    create_harness,
    hookimpl,
    text_of,
)
from pi_core.testing import Reply, ScriptedProvider, scripted_model

MAX_MESSAGES = 4  # compact before a request that would send more messages than this
KEEP_TURNS = 1  # the user turns kept whole: the last one


@hookimpl
async def prepare_request(request, ctx):
    """When: before every request, so a long run compacts mid-way and goes on."""
    conversation = [m for m in request.messages if m.role != "system"]  # not the prompt's declarations
    if request.stop or len(conversation) <= MAX_MESSAGES:
        return None
    if await ctx.compact(reason="threshold") is None:
        return None  # nothing to compact, or a plugin cancelled it
    return attrs.evolve(request, messages=ctx.session.build_context().messages)


@hookimpl
def prepare_compaction(event, ctx):
    """What: the plan, for every compaction (threshold, /compact, an overflow's)."""
    entries, previous = _since_last_compaction(event.entries)
    turns = [e for e in entries if e.type == "message" and e.message.role == "user"]
    if len(turns) <= KEEP_TURNS:
        return None  # no plan: nothing to compact
    first_kept = turns[-KEEP_TURNS]
    older = [e.message for e in entries[:entries.index(first_kept)]
             if e.type == "message" and e.message.role != "system"]  # the prompt is never summarised
    plan = CompactionPreparation(
        first_kept_entry_id=first_kept.id, previous_summary=previous, messages_to_summarize=older,
        tokens_before=sum(len(text_of(m.content)) for m in older) // 4)  # about 4 characters a token
    return attrs.evolve(event, preparation=plan)


@hookimpl
def session_before_compact(event, ctx):
    """The summary, on the plan: what the user asked, no model call."""
    plan = event.preparation
    if plan is None:
        return None
    asked = [text_of(m.content) for m in plan.messages_to_summarize if m.role == "user"]
    summary = "; ".join(filter(None, [plan.previous_summary, *asked]))
    return CompactionDecision(result=CompactionResult(
        summary=summary, first_kept_entry_id=plan.first_kept_entry_id, tokens_before=plan.tokens_before))


def _since_last_compaction(entries):
    """(the branch's entries the model still sees whole, the last compaction's summary)."""
    last = next((e for e in reversed(entries) if e.type == "compaction"), None)
    if last is None:
        return entries, None
    start = next(i for i, e in enumerate(entries) if e.id == last.first_kept_entry_id)
    return [e for e in entries[start:] if e.type != "compaction"], last.summary


async def main(folder: str) -> None:
    questions = ["Where is Lisbon?", "And Porto?", "Which is bigger?", "How far apart?", "By train?"]
    provider = ScriptedProvider([Reply(text=f"Answer {n}.") for n in range(1, len(questions) + 1)])
    # What settings.json would say: drop the built-in; this module is loaded in its place.
    settings = Settings({"extensions": ["-builtin:compaction"]})
    harness = await create_harness(provider, sys.modules[__name__], builtins=True, settings=settings,
                                   model=scripted_model(), cwd=folder)
    for skipped in harness.plugins.skipped:
        print(f"{skipped.name}: {skipped.reason}")

    def show(event):
        if event.type == "compaction_end":
            print(f"  compacted ({event.reason}): {event.result.summary!r}")

    harness.subscribe(show)
    for question in questions:
        print(f"prompt {question!r}")
        await harness.prompt(question)
        print(f"  messages sent: {len(provider.requests[-1].messages)}")
    print(f"requests to the model: {len(provider.requests)}, one per question (no summary request)")
    print("the last request:")
    for message in provider.requests[-1].messages:
        print(f"  {message.role}: {text_of(message.content)!r}")
    compactions = [e for e in harness.session.entries if e.type == "compaction"]
    print(f"compaction entries: {len(compactions)}, from a plugin: {all(e.from_hook for e in compactions)}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(tmp))
