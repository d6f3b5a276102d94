"""pi-compact-notes: compaction that writes notes instead of asking a model.

It answers ``session_before_compact`` for every compaction (``/compact``, the threshold,
a context overflow) from the public event alone: the plan the harness hands every plugin
(``event.preparation``: the first kept entry, the tokens before, the messages to
summarise, keeping ``compaction.keepRecentTokens`` of recent context and never cutting a
tool result from its call), and the summary is :mod:`pi_compact_notes.notes`, built from
those messages alone. Nothing is imported from the built-in compaction plugin. No request is made, so it works offline, costs nothing and
gives the same notes every time. Loaded after the built-in compaction plugin (as every
installed plugin is), its decision wins.

Settings (``settings.json``)::

    {"compactNotes": {"enabled": true, "maxRequests": 8, "maxCommands": 15, "maxProblems": 5}}
"""

from __future__ import annotations

from pi_core import hookimpl

SETTINGS_KEY = "compactNotes"
GENERATOR = "pi-compact-notes"


def compact_to_notes(entries: list, preparation, *, instructions: str | None = None, limits=None):
    """The compaction (a ``CompactionResult``) of the branch ``entries`` (root → leaf)
    into notes, by the harness's plan ``preparation`` (the event's), or None when there
    is nothing to compact. ``limits`` is a :class:`pi_compact_notes.notes.Limits`."""
    from pi_compact_notes.notes import Limits, Notes
    from pi_core import CompactionEntry, CompactionResult

    plan = preparation
    if plan is None or not (plan.messages_to_summarize or plan.turn_prefix_messages):
        return None
    limits = limits or Limits()
    notes = Notes()
    previous = next((e for e in reversed(entries) if isinstance(e, CompactionEntry)), None)
    details = previous.details if previous is not None else None
    ours = isinstance(details, dict) and details.get("generator") == GENERATOR
    if ours:
        notes.add_previous(details)
    notes.add_messages([*plan.messages_to_summarize, *plan.turn_prefix_messages])
    summary = notes.render(limits, previous_summary=None if ours else plan.previous_summary,
                           instructions=instructions)
    return CompactionResult(summary=summary, first_kept_entry_id=plan.first_kept_entry_id,
                            tokens_before=plan.tokens_before, details=notes.details(limits))


@hookimpl
def session_before_compact(event, ctx):
    from pi_compact_notes.notes import Limits
    from pi_core import CompactionDecision

    section = ctx.settings.get(SETTINGS_KEY) or {}
    if isinstance(section, dict) and section.get("enabled") is False:
        return None

    async def generate():
        return compact_to_notes(event.entries, event.preparation, instructions=event.instructions,
                                limits=Limits.from_settings(section))

    return CompactionDecision(generate=generate)


__all__ = ["compact_to_notes", "GENERATOR", "SETTINGS_KEY"]
