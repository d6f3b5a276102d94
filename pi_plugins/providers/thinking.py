"""Thinking levels and output budgets, the same for every wire API (pi's simple options)."""

from __future__ import annotations

from typing import Any

from pi_core.protocol.model import Model
from pi_core.protocol.provider import THINKING_LEVELS, LlmContext, StreamOptions
from pi_plugins.providers.output_limit import fit_to_context

#: Thinking-token budgets of budget-based APIs (Anthropic before 4.6, Gemini 2.5).
DEFAULT_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}


def supported_levels(model: Model) -> list[str]:
    """The levels this model offers: ``off`` only for models without reasoning; ``xhigh``
    and ``max`` only where the model's level map names them; levels mapped to ``None`` are
    unsupported."""
    if not model.reasoning:
        return ["off"]
    level_map = model.thinking_level_map or {}
    levels = []
    for level in THINKING_LEVELS:
        if level in level_map and level_map[level] is None:
            continue
        if level in ("xhigh", "max") and level not in level_map:
            continue
        levels.append(level)
    return levels


def clamp_level(model: Model, level: str | None) -> str:
    """The nearest supported level: the requested one, else the next higher, else lower."""
    level = level or "off"
    available = supported_levels(model)
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    at = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[at:] + tuple(reversed(THINKING_LEVELS[:at])):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def reasoning_level(model: Model, options: StreamOptions) -> str | None:
    """The level to request (clamped to the model's), or ``None`` when thinking is off."""
    if options.thinking_level in (None, "off"):
        return None
    level = clamp_level(model, options.thinking_level)
    return None if level == "off" else level


def sampling_params(model: Model, options: StreamOptions) -> dict[str, Any] | None:
    """pi 1.6's sampling fields for this request: the model's ``samplingParams``, then the
    clamped thinking level's entry of ``samplingParamsByThinkingLevel`` over them (later
    keys win); sent last, so they override the named request fields."""
    by_level = (model.sampling_params_by_thinking_level or {}).get(clamp_level(model, options.thinking_level))
    if not model.sampling_params and not by_level:
        return None
    return {**(model.sampling_params or {}), **(by_level or {})}


def level_value(model: Model, level: str) -> str:
    """What to send for ``level``: the model's own value if its map names one."""
    mapped = (model.thinking_level_map or {}).get(level)
    return mapped if isinstance(mapped, str) else level


def max_tokens(model: Model, options: StreamOptions, context: LlmContext) -> int | None:
    """The caller's limit, else the model's whole output limit, fitted to the context
    (pi 1.6; 0.73.1 capped it at 32000); ``None`` when neither is known."""
    wanted = options.max_tokens or model.max_tokens
    return fit_to_context(model, context, wanted) if wanted > 0 else None


def budget_for(level: str, base_max_tokens: int, model_max_tokens: int,
               custom: dict | None = None) -> tuple[int, int]:
    """(max tokens, thinking budget) for a budget-based API: the budget (the setting
    ``thinkingBudgets``'s for the level, else pi's default) is added to the output limit,
    within the model's maximum, leaving at least 1024 tokens to answer."""
    level = "high" if level in ("xhigh", "max") else level
    budget = custom_budget(custom, level)
    budget = DEFAULT_BUDGETS[level] if budget is None else budget
    total = min(base_max_tokens + budget, model_max_tokens)
    if total <= budget:
        budget = max(0, total - 1024)
    return total, budget


def fit_budget_to_context(model: Model, context: LlmContext, limit: int, budget: int) -> tuple[int, int]:
    """(max tokens, budget) once the budget-raised limit is fitted to the context again,
    the budget still leaving 1024 tokens to answer (pi 1.6)."""
    limit = fit_to_context(model, context, limit)
    return limit, min(budget, max(0, limit - 1024))


def custom_budget(custom: dict | None, level: str) -> int | None:
    """The setting ``thinkingBudgets``'s token budget for ``level`` (None: not set)."""
    value = custom.get(level) if isinstance(custom, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
