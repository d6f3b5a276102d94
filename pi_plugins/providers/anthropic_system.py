"""pi 1.6's session system messages on the Anthropic Messages API.

For a model with ``compat.supportsMidConvoSystemMessages`` the leading system message is
the ``system`` field and each later one goes inside ``messages`` as ``{role: "system",
content: [blocks]}``: a text block with the change (as :func:`update_text` words it), held
back until just before the next assistant message that is sent, or the end (Anthropic
wants a ``tool_result`` right after its ``tool_use``, so nothing may come between them).

With ``supportsMidConvoToolChanges`` as well, and tools in the leading message, the
request's ``tools`` stay the leading message's (plus a deferred placeholder that is never
loaded, so the first change keeps the cached prefix) and later changes carry
``tool_removal``/``tool_addition`` blocks, under the inline-tools beta.
"""

from __future__ import annotations

from typing import Any

from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext

INLINE_TOOLS_BETA = "inline-tools-2026-09-15"
DEFERRED_TOOL_PLACEHOLDER = {
    "name": "__pi_deferred_placeholder__",
    "description": "Reserved placeholder. Never available. Never call this.",
    "input_schema": {"type": "object", "properties": {}, "required": []},
    "defer_loading": True,
}


def _flag(model: Model, key: str) -> bool:
    return bool((model.compat or {}).get(key))


class SystemChanges:
    """The system messages of one request: the prompt for ``system``, the changes held
    for their place, and whether tool changes go inline."""

    def __init__(self, model: Model, context: LlmContext):
        self.lead: dict | None = None
        self.prompt = context.system_prompt
        self.placed: dict[int | None, list[dict]] = {}
        if _flag(model, "supportsMidConvoSystemMessages") and context.transcript:
            from pi_plugins.system_messages import placed_changes

            self.lead, self.prompt, self.placed = placed_changes(context.system_prompt, context.transcript)
        self.initial_tools: list[dict] = list((self.lead or {}).get("toolsAdded") or [])
        self.native_tools = (_flag(model, "supportsMidConvoSystemMessages")
                             and _flag(model, "supportsMidConvoToolChanges") and bool(self.initial_tools))
        self.pending: list[dict] = []

    def hold(self, message: Any, convert_tools, rename) -> None:
        """Hold the changes placed before ``message`` (None: those at the end)."""
        from pi_plugins.system_messages import update_text

        for data in self.placed.pop(None if message is None else id(message), []):
            blocks: list[dict] = []
            text = update_text(data)
            if text:
                blocks.append({"type": "text", "text": text})
            if self.native_tools:
                added = data.get("toolsAdded") or []
                redefined = {t.get("name") for t in added}
                blocks += [{"type": "tool_removal", "tool": {"type": "tool_reference", "name": rename(ref.get("name"))}}
                           for ref in data.get("toolsRemoved") or [] if ref.get("name") not in redefined]
                blocks += [{"type": "tool_addition", "tool": {"type": "tool_definition", "definition": d}}
                           for d in convert_tools(added)]
            if blocks:
                self.pending.append({"role": "system", "content": blocks})

    def flush(self, params: list[dict]) -> None:
        params += self.pending
        self.pending = []
