"""pi 1.6's session system messages on the OpenAI Responses API.

With ``supportsMidConvoSystemMessages`` the leading prompt goes first and each later
change as a system (developer) item before the prompt it came with. Tools follow the
model's support, as pi 1.6's:

- ``"changes"`` (``supportsAdditionalTools`` too): no request ``tools``; every system
  message declares the tools it adds in an ``additional_tools`` item (after the first one,
  preceded by the incremental-tools notice naming those still unavailable), and a removal
  is announced in the change's text;
- ``"additions"`` (``supportsToolSearch``): the request's tools are the ones the folded
  system messages leave (up to the last removal or redeclaration); a later addition is a
  completed client ``tool_search_call``/``tool_search_output`` pair with deferred tools;
- otherwise the current tools, as before.
"""

from __future__ import annotations

from typing import Any

from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext
from pi_plugins.providers.transform import short_hash

INCREMENTAL_TOOLS_NOTICE = (
    "This is an incremental tools update. Previously declared tools remain available unless explicitly "
    "marked unavailable. A tool declared again here is available again, and its latest definition replaces "
    "the earlier one.")


def tool_support(compat: dict) -> str:
    if compat.get("supportsMidConvoSystemMessages") and compat.get("supportsAdditionalTools"):
        return "changes"
    return "additions" if compat.get("supportsToolSearch") else "none"


def responses_tools(tools: list, model: Model, defer: bool = False) -> list[dict]:
    """Tool specs or declarations (``name``, ``description``, ``parameters``) as functions;
    ``strict`` only where the model's compat says strict mode (pi 1.6: off unless said,
    Azure on unless said), true with a strict schema for pi's constrained tools; a grammar
    tool as a ``custom`` one where the model takes them (:mod:`.grammar_tools`)."""
    from pi_plugins.providers.grammar_tools import custom_tool
    from pi_plugins.providers.strict_schema import CONSTRAINED_TOOLS, NotStrict, strict_schema

    said = (model.compat or {}).get("supportsStrictMode")
    supported = model.api == "azure-openai-responses" if said is None else bool(said)
    out = []
    for tool in tools:
        custom = custom_tool(tool, model.compat or {}, nested=False)
        if custom is not None:
            out.append({**custom, **({"defer_loading": True} if defer else {})})
            continue
        name, description, parameters = ((tool["name"], tool.get("description"), tool.get("parameters"))
                                         if isinstance(tool, dict) else (tool.name, tool.description, tool.parameters))
        strict = False
        if supported and name in CONSTRAINED_TOOLS:
            try:
                parameters, strict = strict_schema(parameters), True
            except NotStrict:
                pass  # pi 1.6's "prefer": sent as it is
        out.append({"type": "function", "name": name, "description": description, "parameters": parameters,
                    **({"defer_loading": True} if defer else {}), **({"strict": strict} if supported else {})})
    return out


class SystemItems:
    """The system messages of one request as Responses items: ``head`` (the leading
    prompt), ``placed`` (by ``id()`` of the message each goes before; None: the end) and
    ``request_tools`` (None: the current tools)."""

    def __init__(self, model: Model, context: LlmContext, role: str, messages: list, head: bool = True):
        """``head=False``: the caller leads with the prompt and tools itself (Codex's
        request), so only later changes' texts are placed."""
        compat = model.compat or {}
        self.model = model
        self.role = role
        self.head: list[dict] = [{"role": role, "content": context.system_prompt}] if context.system_prompt else []
        self.placed: dict[int | None, list[dict]] = {}
        self.request_tools: list | None = None
        if not (compat.get("supportsMidConvoSystemMessages") and context.transcript):
            return
        from pi_plugins.system_messages import additions_fold, placed_changes, update_text

        lead, prompt, placed = placed_changes(context.system_prompt, context.transcript)
        self.head = [{"role": role, "content": prompt}] if prompt and head else []
        self.support = tool_support(compat) if lead is not None and head else "none"
        self.declared = False
        self.unavailable: dict[str, None] = {}
        later = [data for found in placed.values() for data in found]
        folded = len(later) + 1
        if self.support == "changes":
            folded, self.request_tools = 0, []
            self.head[:0] = self._tool_items(lead or {}, "system:0")
        elif self.support == "additions":
            folded, self.request_tools = additions_fold([lead or {}, *later])
        position = {id(m): n for n, m in enumerate(messages)}
        count = 0
        for anchor, found in placed.items():
            for data in found:
                count += 1
                at = len(messages) if anchor is None else position.get(anchor, len(messages))
                items = self._tool_items(data, f"system:{at + count - 1}") if count >= folded else []
                parts = [update_text(data)]
                if count >= folded and self.support == "changes":
                    added = {t.get("name") for t in data.get("toolsAdded") or []}
                    removed = [r.get("name") for r in data.get("toolsRemoved") or [] if r.get("name") not in added]
                    if removed:
                        parts.append("The following tools are no longer available. Do not call them:\n"
                                     + "\n".join(f"- {name}" for name in removed))
                    self.unavailable.update(dict.fromkeys(removed))
                text = "\n\n".join(p for p in parts if p)
                if text:
                    items.append({"role": role, "content": text})
                self.placed.setdefault(anchor, []).extend(items)

    def _tool_items(self, data: dict, seed: str) -> list[dict]:
        tools: list[Any] = data.get("toolsAdded") or []
        for tool in tools:
            self.unavailable.pop(tool.get("name"), None)
        if not tools:
            return []
        if self.support == "changes":
            items = []
            if self.declared:
                still = ", ".join(self.unavailable)
                items.append({"role": self.role, "content": INCREMENTAL_TOOLS_NOTICE
                              + (f"\nStill unavailable: {still}." if still else "")})
            self.declared = True
            declared = responses_tools(tools, self.model)
            return [*items, {"type": "additional_tools", "role": "developer", "tools": declared}]
        if self.support != "additions":
            return []
        names = [t.get("name") for t in tools]
        call_id = f"pi_tool_load_{short_hash(seed + ':' + ','.join(names))}"
        done = {"call_id": call_id, "execution": "client", "status": "completed"}
        return [{"type": "tool_search_call", **done, "arguments": {"query": " ".join(names), "limit": len(names)}},
                {"type": "tool_search_output", **done, "tools": responses_tools(tools, self.model, defer=True)}]
