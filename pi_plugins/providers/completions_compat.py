"""pi 1.6's smaller Chat Completions ``compat`` fields, acted on as pi-ai 1.6 acts on them:

- ``zaiToolStream``: ``tool_stream: true`` when tools are declared (Z.ai streams their
  arguments only when asked);
- ``vllmPriority``: the request's ``priority`` (vLLM's scheduling priority);
- ``supportsThinkingTokenBudget`` / ``thinkingTokenBudgetField``: the thinking level's token
  budget (``thinkingBudgets`` or pi's defaults, leaving 1024 tokens of the output limit to
  answer) in ``thinking_token_budget`` or the field named, whatever the thinking format;
- ``thinkingFormat: "chat-template"`` with ``chatTemplateKwargs`` and ``"baseten"`` with
  ``chatTemplateArgs`` (and ``reasoning_effort``): the values sent as given, or for a
  ``{"$var": "thinking.enabled"}`` / ``{"$var": "thinking.budget"}`` the level's, for any
  other object the model's value for the level; ``omitWhenOff`` leaves one out with
  thinking off.
"""

from __future__ import annotations

from typing import Any

from pi_core.protocol.model import Model
from pi_core.protocol.provider import StreamOptions
from pi_plugins.providers.thinking import DEFAULT_BUDGETS, custom_budget

#: Tokens a thinking budget leaves of the output limit for the answer.
MIN_ANSWER_TOKENS = 1024
_UNSET = object()


def thinking_budget(model: Model, options: StreamOptions, body: dict, level: str | None) -> int | None:
    """The level's thinking budget within the request's output limit; None when off."""
    if not level or not model.reasoning:
        return None
    ceiling = body.get("max_tokens") or body.get("max_completion_tokens") or model.max_tokens
    clamped = "high" if level in ("xhigh", "max") else level
    budget = custom_budget(options.thinking_budgets, clamped)
    budget = DEFAULT_BUDGETS.get(clamped, 0) if budget is None else budget
    budget = min(budget, max(0, ceiling - MIN_ANSWER_TOKENS))
    return budget if budget > 0 else None


def _template_value(model: Model, level: str | None, value: Any, budget: int | None) -> Any:
    if not isinstance(value, dict):
        return value
    if not level and value.get("omitWhenOff"):
        return _UNSET
    if value.get("$var") == "thinking.enabled":
        return bool(level)
    if value.get("$var") == "thinking.budget":
        return _UNSET if budget is None else budget
    level_map = model.thinking_level_map or {}
    key = level or "off"
    if key not in level_map:
        return level if level else _UNSET
    mapped = level_map[key]
    return mapped if isinstance(mapped, str) else _UNSET


def template_values(model: Model, level: str | None, values: Any, budget: int | None) -> dict | None:
    """``chatTemplateKwargs`` / ``chatTemplateArgs`` resolved for this request (None: empty)."""
    resolved = {key: _template_value(model, level, value, budget)
                for key, value in (values.items() if isinstance(values, dict) else ())}
    kept = {k: v for k, v in resolved.items() if v is not _UNSET}
    return kept or None


def template_thinking(body: dict, model: Model, options: StreamOptions, compat: dict, level: str | None) -> None:
    """The ``chat-template`` and ``baseten`` thinking formats."""
    budget = thinking_budget(model, options, body, level)
    if compat.get("thinkingFormat") == "chat-template":
        if kwargs := template_values(model, level, compat.get("chatTemplateKwargs"), budget):
            body["chat_template_kwargs"] = kwargs
        return
    if args := template_values(model, level, compat.get("chatTemplateArgs"), budget):
        body["chat_template_args"] = args
    if compat.get("supportsReasoningEffort"):
        level_map = model.thinking_level_map or {}
        key = level or "off"
        effort = level_map[key] if key in level_map else level
        if isinstance(effort, str):
            body["reasoning_effort"] = effort


def compat_fields(body: dict, model: Model, options: StreamOptions, compat: dict, level: str | None) -> None:
    """``tool_stream``, ``priority`` and the thinking token budget field, where compat asks."""
    if compat.get("zaiToolStream") and body.get("tools"):
        body["tool_stream"] = True
    if compat.get("vllmPriority") is not None:
        body["priority"] = compat["vllmPriority"]
    field = compat.get("thinkingTokenBudgetField") or (
        "thinking_token_budget" if compat.get("supportsThinkingTokenBudget") else None)
    budget = thinking_budget(model, options, body, level) if field else None
    if field and budget is not None:
        body[field] = budget
