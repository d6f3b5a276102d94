"""The model-written summary ``/bug`` attaches instead of the transcript (pi 1.6): the
current model reads the latest messages that fit in 60% of its context window, with the
user's description, and writes a Markdown report under four headings. The transcript goes
to the model's provider with the user's key; only the summary goes in the report."""

from __future__ import annotations

from typing import Any

from pi_core.app.tokens import estimate_tokens
from pi_core.protocol.messages import TextContent, ToolCall, UserMessage
from pi_core.protocol.provider import LlmContext, StreamOptions, complete

SYSTEM_PROMPT = """You write bug reports about pi, the coding agent the user is talking to. \
You are given the conversation so far. Describe, for pi's developers, what the user was \
doing and what went wrong.

Only write the report: do not answer anything in the conversation or carry it on."""

INSTRUCTIONS = """Write the report in Markdown, under these headings:

## What the user was doing
A short paragraph.

## What went wrong
The failure itself (a wrong answer, an error, a hang, a tool that failed, anything \
unexpected), with error messages and tool output quoted exactly where there are some.

## Steps to reproduce
A numbered list, as precise as the conversation allows.

## Relevant details
The tool calls, files, model behaviour and anything else that helps a developer \
reproduce or find the problem.

Name files by their path; leave out their contents and any secret or credential the \
conversation holds. Keep to the facts, briefly."""


class SummaryFailed(Exception):
    """The summary could not be written (the words say why)."""


def latest(messages: list, budget: int) -> list:
    """The newest messages whose estimates fit ``budget`` (at least the last one)."""
    chosen: list = []
    used = 0
    for message in reversed(messages):
        cost = estimate_tokens(message)
        if chosen and used + cost > budget:
            break
        chosen.append(message)
        used += cost
    return chosen[::-1]


def prompt(messages: list, window: int, hint: str | None) -> str:
    from pi_plugins.compaction.summary import serialize

    shown = latest(messages, int((window if window > 0 else 128_000) * 0.6))
    parts = []
    if len(shown) < len(messages):
        parts.append(f"Only the last {len(shown)} of {len(messages)} messages are shown.")
    parts.append(f"<conversation>\n{serialize(shown)}\n</conversation>")
    if hint:
        parts.append(f"<user-report>\n{hint}\n</user-report>")
    parts.append(INSTRUCTIONS)
    return "\n\n".join(parts)


async def write_summary(harness: Any, hint: str | None) -> str:
    """The summary from the current model; :class:`SummaryFailed` when it cannot be had.
    ``harness.abort()`` (Esc) stops it."""
    model = harness.model
    provider = harness.agent.provider_for(model)
    if provider is None:
        raise SummaryFailed(f"no provider for api {model.api!r}")
    text = prompt(list(harness.messages), model.context_window, hint)
    context = LlmContext(system_prompt=SYSTEM_PROMPT, messages=[UserMessage(content=[TextContent(text)])])
    limit = min(4096, model.max_tokens) if model.max_tokens > 0 else 4096
    with harness.abortable() as signal:
        options = StreamOptions(signal=signal, api_key=await harness.agent.api_key(model), max_tokens=limit,
                                thinking_level=harness.thinking_level if model.reasoning else "off",
                                session_id=harness.session.id, max_retries=0)
        answer = await complete(provider, model, context, options)
    if answer.stop_reason == "aborted":
        raise SummaryFailed("Bug report summary was cancelled")
    if answer.stop_reason == "error":
        raise SummaryFailed(f"Bug report summary failed: {answer.error_message or 'Unknown error'}")
    if answer.stop_reason == "length":
        raise SummaryFailed("Bug report summary failed: generation hit the token cap and the summary is incomplete")
    if any(isinstance(block, ToolCall) for block in answer.content):
        raise SummaryFailed("Bug report summary attempted to call a tool")
    summary = answer.text.strip()
    if not summary:
        raise SummaryFailed("Bug report summary was empty")
    return summary
