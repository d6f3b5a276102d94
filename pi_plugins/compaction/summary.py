"""Writing summaries: the conversation serialised as a transcript (so the model reads it
rather than continues it), our structured prompts, and the merge of split-turn summaries
and file lists."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from pi_core.protocol.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_plugins.app_messages import to_llm

#: Sends one summarisation request (system prompt, user text, max tokens) and returns
#: the model's text; raises on failure. The compaction plugin binds it to the model.
Summarizer = Callable[[str, str, int], Awaitable[str]]

TOOL_RESULT_LIMIT = 2000

SYSTEM_PROMPT = (
    "You write handover notes for a coding assistant. You receive a transcript of earlier "
    "work and produce a faithful, compact summary that lets another assistant continue "
    "without the transcript. Never continue the conversation yourself."
)

SECTIONS = """## Goal
What the user wants done (several goals if the work covered several tasks).

## Constraints & Preferences
- Requirements and preferences the user stated, or "(none)".

## Progress
### Done
- [x] Finished work.
### In Progress
- [ ] Work underway.
### Blocked
- Anything stopping progress.

## Key Decisions
- **Decision**: why it was taken.

## Next Steps
1. What should happen next, in order.

## Critical Context
- Facts, data or references needed to continue, or "(none)"."""

SUMMARY_PROMPT = (
    "Summarise the transcript above as handover notes under exactly these headings:\n\n"
    + SECTIONS
    + "\n\nBe brief in every section. Keep file paths, names of functions and error messages exactly as written."
)

UPDATE_PROMPT = (
    "The transcript above continues work described in <previous-summary>. Produce the "
    "updated handover notes: keep everything from the previous summary that still holds, "
    "add the new progress, decisions and facts, move finished items to Done and revise "
    "Next Steps. Use exactly these headings:\n\n"
    + SECTIONS
    + "\n\nBe brief in every section. Keep file paths, names of functions and error messages exactly as written."
)

TURN_PREFIX_PROMPT = """The transcript above is the first part of one long turn; its later part is kept as it is. Write what a reader needs to follow that later part:

## Original Request
What the user asked for in this turn.

## Early Progress
- What was decided and done in this first part.

## Context for the Rest
- What the kept part relies on."""

BRANCH_PROMPT = (
    "The transcript above is a branch of the conversation the user has left. Summarise it "
    "so the work can be picked up later, under exactly these headings:\n\n"
    + SECTIONS.split("\n\n## Critical Context")[0]
    + "\n\nBe brief in every section. Keep file paths, names of functions and error messages exactly as written."
)

BRANCH_PREAMBLE = (
    "The user explored a different conversation branch before returning here.\n"
    "Summary of that exploration:\n\n"
)


def _clip(text: str) -> str:
    if len(text) <= TOOL_RESULT_LIMIT:
        return text
    return f"{text[:TOOL_RESULT_LIMIT]}\n\n[... {len(text) - TOOL_RESULT_LIMIT} more characters truncated]"


def _joined(content: str | list, separator: str) -> str:
    return content if isinstance(content, str) else separator.join(
        b.text for b in content if isinstance(b, TextContent))


def serialize(messages: list) -> str:
    """A transcript of agent messages, one labelled paragraph per part, as pi 1.6's
    ``serializeConversation``: thinking is left out (a provider's summary of it, which the
    live context may not hold either), arguments are compact JSON."""
    parts: list[str] = []
    for message in messages:
        message = to_llm(message)
        if isinstance(message, UserMessage):
            text = _joined(message.content, "")
            if text:
                parts.append(f"[User]: {text}")
        elif isinstance(message, AssistantMessage):
            calls = [
                f"{b.name}({', '.join(f'{k}={_json(v)}' for k, v in b.arguments.items())})"
                for b in message.content if isinstance(b, ToolCall)
            ]
            if any(isinstance(b, TextContent) for b in message.content):
                parts.append("[Assistant]: " + _joined(message.content, "\n"))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif isinstance(message, ToolResultMessage):
            text = _joined(message.content, "")
            if text:
                parts.append(f"[Tool result]: {_clip(text)}")
    return "\n\n".join(parts)


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # as JSON.stringify writes it


def file_lists(read: list[str], modified: list[str]) -> str:
    sections = []
    if read:
        sections.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
    if modified:
        sections.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


def summary_request(messages: list, *, previous: str | None = None, instructions: str | None = None) -> str:
    prompt = UPDATE_PROMPT if previous else SUMMARY_PROMPT
    if instructions:
        prompt += f"\n\nPay particular attention to: {instructions}"
    text = f"<conversation>\n{serialize(messages)}\n</conversation>\n\n"
    if previous:
        text += f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
    return text + prompt


async def summarize_compaction(preparation, summarize: Summarizer, reserve_tokens: int,
                               instructions: str | None = None) -> tuple[str, dict]:
    """The compaction summary (history, and for a split turn the turn's prefix, merged)
    with the file lists appended, and the ``details`` to store."""
    budget = int(0.8 * reserve_tokens)
    if preparation.messages_to_summarize or not preparation.is_split_turn:
        history = await summarize(SYSTEM_PROMPT, summary_request(
            preparation.messages_to_summarize, previous=preparation.previous_summary,
            instructions=instructions), budget)
    else:
        history = preparation.previous_summary or "No earlier history."
    summary = history
    if preparation.is_split_turn:
        prefix_text = f"<conversation>\n{serialize(preparation.turn_prefix_messages)}\n</conversation>\n\n{TURN_PREFIX_PROMPT}"
        prefix = await summarize(SYSTEM_PROMPT, prefix_text, int(0.5 * reserve_tokens))
        summary = f"{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix}"
    read, modified = list(preparation.read_files), list(preparation.modified_files)
    return summary + file_lists(read, modified), {"readFiles": read, "modifiedFiles": modified}


async def summarize_branch(messages: list, file_ops, summarize: Summarizer, reserve_tokens: int,
                           instructions: str | None = None) -> tuple[str, dict]:
    prompt = BRANCH_PROMPT + (f"\n\nPay particular attention to: {instructions}" if instructions else "")
    text = await summarize(SYSTEM_PROMPT, f"<conversation>\n{serialize(messages)}\n</conversation>\n\n{prompt}",
                           int(0.8 * reserve_tokens))
    read, modified = file_ops.lists()
    return BRANCH_PREAMBLE + text + file_lists(read, modified), {"readFiles": read, "modifiedFiles": modified}
