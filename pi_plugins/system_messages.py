"""pi 1.6's system messages: the prompt and the tool loadout kept in the transcript.

Before the first prompt of a session, pi 1.6 writes a ``system`` message with every prompt
section by name (``preamble``, ``addendum``, ``project_context``, ``skills``, ``cwd``, …)
and the declared tools (``toolsAdded``); before a later prompt whose sections or tools
changed, one that patches only the changes (a section set to ``null`` is removed, a
changed tool is removed and added again). Replaying them in order gives the current
prompt and tools; pi 1.6 resumes our files and we resume its by the same rule.

The messages go out as ``message_start``/``message_end`` before the user's message, as
1.6 sends them. A request still carries the prompt composed for it: for a model without
``supportsMidConvoSystemMessages`` that is the folded prompt, what 1.6 sends; for one
with it, :func:`transcript` gives the leading prompt and each later change in place.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import attrs

from pi_core import SystemMessage, hookimpl
from pi_core.protocol.records import record

_WRAPPED = re.compile(r"\A<([A-Za-z_][\w-]*)>\n.*\n</\1>\Z", re.S)


def is_system(message: Any) -> bool:
    """Whether ``message`` is a system message (also one held as an unknown message),
    without building its JSON (the codec's converter is not loaded for a plain run)."""
    data = getattr(message, "data", None)
    return isinstance(message, SystemMessage) or isinstance(data, dict) and data.get("role") == "system"


def system_data(message: Any) -> dict | None:
    """A system message as pi's JSON (also one held as an unknown message), else None."""
    if isinstance(message, SystemMessage):
        from pi_core.protocol.codec import to_json

        return to_json(message)
    data = getattr(message, "data", None)
    return data if isinstance(data, dict) and data.get("role") == "system" else None


@record
class Loadout:
    """The prompt and tools a run of system messages leaves declared."""

    content: list[str] = attrs.field(factory=list)
    sections: dict[str, str] = attrs.field(factory=dict)
    tools: dict[str, dict] = attrs.field(factory=dict)
    seen: bool = False

    def apply(self, data: dict) -> None:
        self.seen = True
        text = _text(data.get("content"))
        if text:
            self.content.append(text)
        for name, value in (data.get("sections") or {}).items():
            if value is None:
                self.sections.pop(name, None)
            elif isinstance(value, str):
                self.sections[name] = value
        for ref in data.get("toolsRemoved") or []:
            if isinstance(ref, dict):
                self.tools.pop(ref.get("name"), None)  # type: ignore[arg-type]
        for tool in data.get("toolsAdded") or []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self.tools[tool["name"]] = tool

    @property
    def prompt(self) -> str:
        """The prompt text: later content after the first, then the sections in order."""
        return "\n\n".join(p for p in ["\n\n".join(self.content), *self.sections.values()] if p)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def replay(messages: list) -> Loadout:
    """The loadout the system messages among ``messages`` declare, in order."""
    loadout = Loadout()
    for message in messages:
        data = system_data(message)
        if data is not None:
            loadout.apply(data)
    return loadout


def update_text(data: dict) -> str:
    """A later system message as a model that takes them mid-conversation reads it."""
    parts = [_text(data.get("content"))]
    for name, value in (data.get("sections") or {}).items():
        parts.append(f'Removed system prompt section "{name}".' if value is None
                     else f'Updated system prompt section "{name}":\n\n{value}')
    return "\n\n".join(p for p in parts if p)


def transcript(system_prompt: str, messages: list, mid_conversation: bool) -> tuple[str, list[tuple[int, str]]]:
    """What a provider sends for ``messages``: the leading prompt and, for a model that
    takes system messages mid-conversation, ``(index, text)`` of each later change, placed
    before ``messages[index]``. Without the flag (or with no later change) the prompt
    composed for the request is sent whole, the later changes folded into it."""
    found = [(n, data) for n, m in enumerate(messages) if (data := system_data(m)) is not None]
    if not mid_conversation or len(found) < 2:
        return system_prompt, []
    first = Loadout()
    first.apply(found[0][1])
    updates = [(n, text) for n, data in found[1:] if (text := update_text(data))]
    return first.prompt, updates


def placed_changes(system_prompt: str, messages: list) -> tuple[dict | None, str, dict[int | None, list[dict]]]:
    """The leading system message, the prompt it declares and each later one (as pi's JSON)
    keyed by ``id()`` of the LLM message it goes before (None: at the end), for a converter
    that walks only the LLM messages. A transcript that does not open with its system
    message (compacted, or older than system messages) is folded: ``(None, system_prompt, {})``."""
    from pi_core.protocol.messages import LLM_MESSAGE_TYPES

    lead = system_data(messages[0]) if messages else None
    if lead is None:
        return None, system_prompt, {}
    first = Loadout()
    first.apply(lead)
    placed: dict[int | None, list[dict]] = {}
    for index, message in enumerate(messages[1:], start=1):
        data = system_data(message)
        if data is None:
            continue
        anchor = next((m for m in messages[index + 1:] if isinstance(m, LLM_MESSAGE_TYPES)), None)
        placed.setdefault(None if anchor is None else id(anchor), []).append(data)
    return lead, first.prompt, placed


def mid_conversation(system_prompt: str, messages: list) -> tuple[str, dict[int | None, list[str]]]:
    """:func:`placed_changes` as text: each later change as a model that takes system
    messages mid-conversation reads it (changes with nothing to say are left out)."""
    _lead, prompt, placed = placed_changes(system_prompt, messages)
    texts = {anchor: [t for d in found if (t := update_text(d))] for anchor, found in placed.items()}
    return prompt, {anchor: found for anchor, found in texts.items() if found}


def additions_fold(system_messages: list[dict]) -> tuple[int, list[dict]]:
    """For a model that takes tools added mid-conversation but not removed
    (``supportsMidConvoToolAdditions``, pi 1.6's "additions"): how many system messages
    fold into the request's ``tools`` (the leading one, and up to the last that removes or
    redeclares a tool, which an addition cannot say) and the tools they leave declared.
    Later ones declare their additions in place."""
    declared: set[str] = set()
    last = -1
    for n, data in enumerate(system_messages):
        if data.get("toolsRemoved"):
            last = n
        for tool in data.get("toolsAdded") or []:
            if tool.get("name") in declared:
                last = n
            declared.add(tool.get("name"))
    folded = max(1, last + 1)
    loadout = Loadout()
    for data in system_messages[:folded]:
        loadout.apply(data)
    return folded, list(loadout.tools.values())


# ---------------------------------------------------------------- what a prompt declares


def split_prompt(prompt: str, parts: list[tuple[str, str]]) -> dict[str, str]:
    """``prompt`` by section: ``parts`` (name, text) where the prompt is made of them, a
    section a plugin appended under its own tag (``<name>…</name>``) or ``extensions``;
    a prompt a plugin rewrote is one ``preamble``."""
    joined = "\n\n".join(text for _name, text in parts)
    if parts and prompt == joined:
        return dict(parts)
    if parts and prompt.startswith(joined + "\n\n"):
        rest = prompt[len(joined) + 2:]
        tag = _WRAPPED.match(rest)
        return {**dict(parts), (tag.group(1) if tag else "extensions"): rest}
    return {"preamble": prompt} if prompt else {}


async def _parts(ctx: Any) -> list[tuple[str, str]]:
    module = sys.modules.get("pi_plugins.system_prompt")
    plugins = getattr(ctx, "plugins", None)
    if module is None or plugins is None or not any(i.plugin is module for i in plugins.infos):
        return []
    return await module.named_parts(ctx)


def declaration(tool: Any) -> dict:
    """A tool as a system message declares it (pi 1.6's ``toToolDeclaration``)."""
    return {"name": tool.name, "description": tool.description, "parameters": tool.schema}


def declared_tools(ctx: Any) -> dict[str, dict]:
    active = set(ctx.get_active_tools())
    return {t.name: declaration(t) for t in ctx.get_all_tools() if t.name in active}


def change(before: Loadout, sections: dict[str, str], tools: dict[str, dict]) -> SystemMessage | None:
    """The system message that takes ``before`` to ``sections`` and ``tools``: all of them
    when nothing was declared yet, else only what changed; None when nothing did."""
    patch: dict[str, str | None] = {k: v for k, v in sections.items() if before.sections.get(k) != v}
    patch.update({k: None for k in before.sections if k not in sections})
    removed = [{"name": n} for n, d in before.tools.items() if tools.get(n) != d]
    added = [d for n, d in tools.items() if before.tools.get(n) != d]
    if before.seen and not (patch or removed or added):
        return None
    return SystemMessage(sections=patch or None, tools_added=added or None, tools_removed=removed or None)


def _history(ctx: Any) -> list:
    """The conversation the next prompt continues, as pi 1.6 replays it: the agent's
    messages (after a compaction, the replayed system message leads them), never the
    whole branch, which a resume leaves unread past the last compaction."""
    agent = getattr(ctx, "agent", None)
    return list(getattr(agent, "messages", None) or [])


@hookimpl(trylast=True)
async def before_agent_start(event, ctx):
    """Declare the prompt and tools this prompt runs with, or what changed since the
    branch last declared them, before the user's message."""
    before = replay([*_history(ctx), *event.before_prompt])
    sections = split_prompt(event.system_prompt, await _parts(ctx))
    message = change(before, sections, declared_tools(ctx))
    if message is None:
        return None
    return attrs.evolve(event, before_prompt=[*event.before_prompt, message])


# ---------------------------------------------------------------- the context hooks

#: Per ctx, during one ``context`` chain: (the transcript given, its messages without
#: the system ones as handed to the other handlers).
_held: dict[int, tuple[list, list]] = {}


def current_message(messages: list) -> SystemMessage | None:
    """pi 1.6's ``getCurrentSystemMessage``: every system message replayed into one."""
    found = [d for m in messages if (d := system_data(m)) is not None]
    if not found:
        return None
    loadout = replay(messages)
    return SystemMessage(content="\n\n".join(loadout.content), sections=dict(loadout.sections) or None,
                         tools_added=list(loadout.tools.values()) or None, timestamp=found[0].get("timestamp") or 0)


@hookimpl(tryfirst=True)
def context(messages, ctx):
    """The other ``context`` handlers see the conversation without system messages."""
    if not any(is_system(m) for m in messages):
        return None
    stripped = [m for m in messages if not is_system(m)]
    _held[id(ctx)] = (list(messages), list(stripped))
    return stripped


@hookimpl(specname="context", trylast=True)
async def restore_and_offer(messages, ctx):
    """Put the system messages back: in place when the handlers left the list as it was,
    else the replayed one first (system messages a handler added stay after it); then
    ``context_with_system``'s handlers see the whole transcript."""
    original, stripped = _held.pop(id(ctx), (None, None))
    if original is not None and stripped is not None:
        unchanged = len(messages) == len(stripped) and all(a is b for a, b in zip(messages, stripped, strict=True))
        if unchanged:
            messages = original
        else:  # the replayed one first (built only here: it needs each message's JSON)
            head = current_message(original)
            messages = [*([head] if head else []), *messages]
    plugins = getattr(ctx, "plugins", None)
    if plugins is None or not plugins.impls("context_with_system"):
        return messages
    result = await plugins.call("context_with_system", messages=list(messages), ctx=ctx)
    if messages and is_system(messages[0]) and (not result or not is_system(result[0])):
        plugins.report("system_messages", "context_with_system",
                       ValueError("a context_with_system handler dropped the leading system message; "
                                  "the transcript is sent as it was"))
        return messages
    return result
