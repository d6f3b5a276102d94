"""Spend limits, what they count and when they are reached: ``--max-cost``,
``--max-tokens``, ``--max-turns`` or the settings' ``"budget": {"maxCostUsd", "maxTokens",
"maxTurns"}``, checked before every model request (the hooks: :mod:`pi_plugins.budget`).

The budget is the session's: what counts is what its path has spent (every assistant
message's usage: cost from the model's prices, input plus output tokens, one turn per
request), so a resumed or forked session starts from there. A request starts only while
what has been spent is below every limit; else the run ends without sending it (the
``budget`` plugin sets ``request.stop``), a :class:`BudgetExceeded` event goes out and the
session records a ``budget_exceeded`` custom entry.

A tool that spends on models itself (a subagent) reports it in its result's details as
``"spent": {"cost", "tokens", "turns"}``, which counts on the path too; while it runs, its
spend is one of the session's spend sources (:func:`pi_plugins.budget.spend_source`). A subagent's budget has the parent's as
``parent`` (with the parent's total spend, which includes the child's): the child stops at
its parent's limit.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable
from typing import Any, Literal

from pi_core.protocol.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    MessageEntry,
    UsageEntry,
)
from pi_core.protocol.messages import AssistantMessage, ToolResultMessage
from pi_core.protocol.records import field, record

#: The custom entry earlier versions wrote after a compaction or branch summary under a
#: budget (``{"cost", "tokens", "turns": 0}``); now the entry's own ``usage`` says it.
SUMMARY_USAGE = "summary_usage"

#: (limit name, settings key, flag) for cost, tokens and turns.
LIMITS = (("cost", "maxCostUsd", "--max-cost"), ("tokens", "maxTokens", "--max-tokens"),
          ("turns", "maxTurns", "--max-turns"))


class BudgetError(ValueError):
    """A limit that is not a non-negative number."""


@record
class Spent:
    cost: float = 0.0
    tokens: int = 0
    turns: int = 0

    def add(self, other: Spent) -> Spent:
        return Spent(self.cost + other.cost, self.tokens + other.tokens, self.turns + other.turns)

    def as_json(self) -> dict:
        return {"cost": self.cost, "tokens": self.tokens, "turns": self.turns}

    @classmethod
    def from_json(cls, value: Any) -> Spent:
        """A tool result's ``details["spent"]``; anything malformed counts as nothing."""
        try:
            return cls(float(value.get("cost", 0)), int(value.get("tokens", 0)), int(value.get("turns", 0)))
        except (AttributeError, TypeError, ValueError):
            return cls()


@record
class BudgetExceeded:
    """The run ended before a request: ``spent`` has reached ``max`` of ``limit``."""

    type: Literal["budget_exceeded"] = field(default="budget_exceeded", init=False)
    limit: str = "cost"
    spent: float = 0
    max: float = 0

    def describe(self) -> str:
        unit = {"cost": "USD", "tokens": "tokens", "turns": "turns"}[self.limit]
        spent = f"{self.spent:.6f}".rstrip("0").rstrip(".") if self.limit == "cost" else self.spent
        return f"{self.limit} {spent} of {self.max} {unit} spent"


def parse_limit(value: Any, where: str, integer: bool) -> float | int | None:
    """A limit from a flag (text) or settings (a number); ``None``: no limit."""
    if value is None:
        return None
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError):
        raise BudgetError(f"{where}: not a number: {value!r}") from None
    if math.isnan(number) or number < 0:
        raise BudgetError(f"{where}: must be a number of at least 0, not {value!r}")
    if integer:
        if number != int(number):
            raise BudgetError(f"{where}: must be a whole number, not {value!r}")
        return int(number)
    return number


@record
class Budget:
    max_cost: float | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    #: A subagent's: the parent's budget and the parent's total spend (the child's included).
    parent: Budget | None = None
    parent_spent: Callable[[], Any] | None = None

    @classmethod
    def from_settings(cls, settings: Any, flags: dict | None = None) -> Budget:
        """The settings' ``budget`` limits, each replaced by its flag when given
        (``flags``: limit name → the flag's text)."""
        flags = flags or {}
        values: dict[str, Any] = {}
        for name, key, flag in LIMITS:
            if flags.get(name) is not None:
                values[name] = parse_limit(flags[name], flag, name != "cost")
            else:
                values[name] = parse_limit(settings.get(f"budget.{key}") if settings else None,
                                           f"settings budget.{key}", name != "cost")
        return cls(values["cost"], values["tokens"], values["turns"])

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.max_cost, self.max_tokens, self.max_turns)) or \
            (self.parent is not None and self.parent.active)

    def exceeded(self, spent: Spent) -> BudgetExceeded | None:
        """The first of this budget's own limits that ``spent`` has reached."""
        for name, value, maximum in (("cost", spent.cost, self.max_cost),
                                     ("tokens", spent.tokens, self.max_tokens),
                                     ("turns", spent.turns, self.max_turns)):
            if maximum is not None and value >= maximum:
                return BudgetExceeded(limit=name, spent=value, max=maximum)
        return None

    async def check(self, spent: Spent) -> BudgetExceeded | None:
        """The first limit reached, this budget's or (on their total) its parents';
        ``parent_spent`` may be async (a batch on Ray asks the driver's ledger)."""
        hit = self.exceeded(spent)
        if hit is None and self.parent is not None and self.parent_spent is not None:
            above = self.parent_spent()
            if inspect.isawaitable(above):
                above = await above
            hit = await self.parent.check(above)
        return hit


def spent_of(entries: Iterable[Any]) -> Spent:
    """What a session path has spent: its assistant messages' usage, what its tool
    results say their tools spent (``details["spent"]``: subagents), its compactions' and
    branch summaries' ``usage`` (``summary_usage`` entries in files of earlier versions)
    and its ``usage`` entries (pi 1.6)."""
    spent = Spent()
    for entry in entries:
        if isinstance(entry, CustomEntry):
            if entry.custom_type == SUMMARY_USAGE:
                spent = spent.add(Spent.from_json(entry.data))
            continue
        if isinstance(entry, (CompactionEntry, BranchSummaryEntry, UsageEntry)):
            if entry.usage is not None:
                spent.cost += entry.usage.cost.total
                spent.tokens += entry.usage.input + entry.usage.output
            continue
        message = entry.message if isinstance(entry, MessageEntry) else entry
        if isinstance(message, ToolResultMessage):
            details = message.details
            if isinstance(details, dict) and "spent" in details:
                spent = spent.add(Spent.from_json(details["spent"]))
        elif isinstance(message, AssistantMessage):
            usage = message.usage
            spent.cost += usage.cost.total
            spent.tokens += usage.input + usage.output
            spent.turns += 1
    return spent


def has_prices(model: Any) -> bool:
    cost = getattr(model, "cost", None)
    return cost is not None and any((cost.input, cost.output, cost.cache_read, cost.cache_write))
