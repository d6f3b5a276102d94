"""Compacting and summaries, the primitives the compaction plugin builds on; when and
how much to compact is the plugin's."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import attrs

from pi_core.protocol import events
from pi_core.protocol.events import CompactionReason
from pi_core.protocol.messages import AssistantMessage, SystemMessage, TextContent, Usage, UserMessage, now_ms
from pi_core.protocol.provider import LlmContext, StreamOptions, complete
from pi_core.protocol.signal import AbortSignal
from pi_core.protocol.usage import total_usage

if TYPE_CHECKING:
    from pi_core.app.harness import Harness

log = logging.getLogger("pi.harness")

#: How pi 1.6 words a failed compaction's error in ``session_compact_failed``, by reason.
FAILED_PREFIX = {"manual": "Compaction failed: ", "threshold": "Auto-compaction failed: ",
                 "overflow": "Context overflow recovery failed: "}


class SummaryError(RuntimeError):
    """The model could not write a summary (its error is in the message); ``answer`` is
    the failed answer, whose ``failure`` says whether trying again may help."""

    def __init__(self, message: str, answer: AssistantMessage | None = None) -> None:
        super().__init__(message)
        self.answer = answer


async def summarize(harness: Harness, system_prompt: str, text: str, max_tokens: int) -> str:
    """One request to the current model for a summary; raises :class:`SummaryError`.
    Aborted by ``harness.abort()``; what it spent goes on the summary's entry."""
    model = harness.agent.model
    provider = harness.agent.provider_for(model)
    if provider is None:
        raise SummaryError(f"no provider for api {model.api!r}")
    signal = harness.run_signal or AbortSignal()
    context = LlmContext(system_prompt=system_prompt, messages=[UserMessage(content=[TextContent(text)])])
    # No retries inside the provider, as pi 1.6 sends summaries: the compaction plugin
    # retries a transient failure itself, under retry.* and with its events.
    options = StreamOptions(signal=signal, api_key=await harness.agent.api_key(model), max_tokens=max_tokens,
                            thinking_level=harness.thinking_level if model.reasoning else "off", max_retries=0)
    message = await complete(provider, model, context, options)
    harness.summary_answers.append(message)
    if message.stop_reason in ("error", "aborted"):
        raise SummaryError(message.error_message or "the summary request failed", message)
    return message.text

def take_summary_usage(harness: Harness) -> Usage | None:
    """What the summary requests under way spent, for their entry's ``usage`` (where
    pi 1.6 writes it: the session's totals and the budget count it)."""
    answers, harness.summary_answers = harness.summary_answers, []
    return total_usage(answers) if answers else None


async def compact(harness: Harness, instructions: str | None = None, *, reason: CompactionReason = "manual",
                  will_retry: bool = False):
    """Compact the branch: ``prepare_compaction`` plans, ``session_before_compact``
    decides (cancel, or a summary), the entry is appended and the context rebuilt.
    The result, or None when cancelled, failed or there was nothing to do."""
    await harness.emit(events.CompactionStart(reason=reason))
    harness.is_compacting = True
    from_hook: list[bool] = []  # whether a plugin's summary was used (pi 1.6's fromExtension)
    with harness.abortable() as signal:
        result, error = await _compaction(harness, harness.session.path(), reason, instructions, will_retry,
                                          from_hook)
    harness.is_compacting = False
    if result is False:  # a plugin cancelled it
        await harness.emit(events.CompactionEnd(reason=reason, aborted=True))
        await _failed(harness, reason, None, True, will_retry, from_hook)
        return None
    await harness.emit(events.CompactionEnd(reason=reason, result=result, aborted=signal.aborted,
                                  will_retry=will_retry and result is not None, error_message=error))
    if result is None:
        error = None if signal.aborted else error
        await _failed(harness, reason, error, signal.aborted, will_retry, from_hook)
    return result


async def _failed(harness: Harness, reason: CompactionReason, error: str | None, aborted: bool,
                  will_retry: bool, from_hook: list[bool]) -> None:
    """pi 1.6's ``session_compact_failed``, to the plugins after ``compaction_end``, its
    error worded as pi 1.6 words it for the reason."""
    from pi_core.app.session_events import SessionCompactFailed

    if error is not None:
        error = FAILED_PREFIX.get(reason, "Compaction failed: ") + error
    await harness.notify(SessionCompactFailed(reason=reason, error_message=error, aborted=aborted,
                                              will_retry=will_retry, from_hook=any(from_hook)))


async def _compaction(harness: Harness, entries: list, reason: CompactionReason, instructions: str | None,
                      will_retry: bool, from_hook: list[bool]):
    """(result or None, error) of a compaction; (False, None) when a plugin cancelled it.
    ``from_hook`` gets True when the summary is a plugin's."""
    from pi_core.app.tokens import estimate_tokens
    from pi_core.protocol.results import compaction_result

    result, error = None, None
    try:
        event = await harness.plugins.call("prepare_compaction", ctx=harness.ctx, event=events.BeforeCompactEvent(
            reason=reason, entries=entries, will_retry=will_retry, instructions=instructions))
        decision = await harness.plugins.call("session_before_compact", event=event, ctx=harness.ctx)
        if decision is None and (event.preparation is not None or not harness.plugins.has("prepare_compaction")):
            error = "no compaction plugin is loaded"
        elif decision is None:
            error = "Already compacted" if entries else "Nothing to compact (session too small)"
        elif decision.cancel:
            return False, None
        else:
            from_hook.append(bool(decision.from_hook))
            result = decision.result or (await decision.generate() if decision.generate else None)
        if result is not None:
            result = _complete(compaction_result(result), event.preparation)
            entry = harness.session.append_compaction(
                result.summary, result.first_kept_entry_id, result.tokens_before,
                result.details, from_hook=decision.from_hook, usage=take_summary_usage(harness),
                system_message=current_system_message(harness.session.build_context().messages))
            harness.agent.messages = list(harness.session.build_context().messages)
            result = attrs.evolve(result, usage=entry.usage, estimated_tokens_after=sum(
                estimate_tokens(m) for m in harness.agent.messages))
            await harness.notify(events.SessionCompactEvent(entry=entry, from_hook=bool(entry.from_hook),
                                                  reason=reason, will_retry=will_retry))
    except Exception as exc:
        error = str(exc) or type(exc).__name__
        log.warning("compaction failed: %s", error)
        result = None
    return result, error


def current_system_message(messages: list) -> SystemMessage | None:
    """The system messages among ``messages`` replayed into one, as pi 1.6 keeps it on a
    compaction entry (so a compaction never summarises or cuts them): contents joined,
    sections patched by name (None removes one), tools removed then added; None when there is none."""
    from pi_core.protocol.codec import to_json

    content: list[str] = []
    sections: dict[str, str | None] = {}
    tools: dict[str, dict] = {}
    seen = False
    for message in messages:
        data = to_json(message) if isinstance(message, SystemMessage) else getattr(message, "data", None)
        if not isinstance(data, dict) or data.get("role") != "system":
            continue
        seen = True
        text = data.get("content")
        text = text if isinstance(text, str) else "\n".join(
            b.get("text", "") for b in text or () if isinstance(b, dict) and b.get("type") == "text")
        content += [text] if text else []
        for name, value in (data.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for ref in data.get("toolsRemoved") or ():
            tools.pop(str(ref.get("name")) if isinstance(ref, dict) else "", None)
        tools.update({t["name"]: t for t in data.get("toolsAdded") or () if isinstance(t, dict) and "name" in t})
    if not seen and not tools:
        return None
    return SystemMessage(content="\n\n".join(content), sections=sections or None,
                         tools_added=list(tools.values()) or None, timestamp=now_ms())


def _complete(result, plan):
    """A plugin's summary without the first kept entry or the tokens before: the plan's."""
    if not result.first_kept_entry_id:
        if plan is None:
            raise ValueError("the summary names no firstKeptEntryId and there is no plan to take it from")
        result = attrs.evolve(result, first_kept_entry_id=plan.first_kept_entry_id)
    if not result.tokens_before and plan is not None:
        result = attrs.evolve(result, tokens_before=plan.tokens_before)
    return result
