"""pi 1.6's session system messages on Chat Completions, for a model with
``supportsMidConvoSystemMessages``: the leading prompt first, each later change as a
system (or developer) message before the prompt it came with; with
``supportsMidConvoToolAdditions`` (Kimi K3's), tools a later change adds go in place as a
``{role: "system", tools: [...]}`` message, and the request's ``tools`` are the ones the
folded system messages leave (a removal cannot be said in place, so it folds).
"""

from __future__ import annotations

from pi_core.protocol.provider import LlmContext


def _additions(compat: dict) -> bool:
    return bool(compat.get("supportsMidConvoSystemMessages") and compat.get("supportsMidConvoToolAdditions"))


def changes_in_place(context: LlmContext, compat: dict, role: str) -> tuple[str, dict[int | None, list[dict]]]:
    """pi 1.6 with ``supportsMidConvoSystemMessages``: the leading prompt, and each later
    system message in place (by ``id()`` of the message it goes before) as its text and,
    with ``supportsMidConvoToolAdditions``, a ``{role: "system", tools}`` message first
    for the tools it adds past the fold."""
    if not (compat.get("supportsMidConvoSystemMessages") and context.transcript):
        return context.system_prompt, {}
    from pi_plugins.system_messages import additions_fold, placed_changes, update_text

    lead, prompt, placed = placed_changes(context.system_prompt, context.transcript)
    later = [data for found in placed.values() for data in found]
    folded = additions_fold([lead, *later])[0] if lead is not None and _additions(compat) else None
    updates: dict[int | None, list[dict]] = {}
    index = 0
    for anchor, found in placed.items():
        for data in found:
            index += 1
            out = updates.setdefault(anchor, [])
            if folded is not None and index >= folded and data.get("toolsAdded"):
                out.append({"role": "system", "tools": function_tools(data["toolsAdded"], compat)})
            if text := update_text(data):
                out.append({"role": role, "content": text})
    return prompt, updates


def function_tools(tools: list, compat: dict) -> list[dict]:
    """Tool specs or declarations (``name``, ``description``, ``parameters``) as functions;
    where the server takes strict mode (``supportsStrictMode``, off unless the catalogue or
    models.json says so, as in pi 1.6) each says ``strict``: true with a strict schema for
    pi's tools that ask for constrained arguments, false for the rest; a grammar tool goes
    as a ``custom`` one where the model takes them (:mod:`.grammar_tools`)."""
    from pi_plugins.providers.grammar_tools import custom_tool

    out = []
    for tool in tools:
        custom = custom_tool(tool, compat, nested=True)  # a grammar tool, where the model takes one
        if custom is not None:
            out.append(custom)
            continue
        name, description, parameters = ((tool["name"], tool.get("description"), tool.get("parameters"))
                                         if isinstance(tool, dict) else (tool.name, tool.description, tool.parameters))
        function = {"name": name, "description": description, "parameters": parameters}
        if compat.get("supportsStrictMode") is not False:
            from pi_plugins.providers.strict_schema import CONSTRAINED_TOOLS, NotStrict, strict_schema

            function["strict"] = False
            if name in CONSTRAINED_TOOLS:
                try:
                    function.update(parameters=strict_schema(parameters), strict=True)
                except NotStrict:
                    pass  # pi 1.6's "prefer": sent as it is
        out.append({"type": "function", "function": function})
    return out


def request_tools(context: LlmContext, compat: dict) -> list:
    """The request's ``tools``: the current ones, or with tool additions in place the
    tools the folded system messages declare."""
    if _additions(compat) and context.transcript:
        from pi_plugins.system_messages import additions_fold, system_data

        found = [d for m in context.transcript if (d := system_data(m)) is not None]
        if found and system_data(context.transcript[0]) is not None:
            return additions_fold(found)[1]
    return context.tools
