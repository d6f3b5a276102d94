"""The footer under the editor: where you are, what it cost, how full the context is,
and which model thinks how hard (pi's layout)::

    ~/src/app (main) • refactor auth
    ↑1.2k ↓340 R12k CH90.9% $0.014 3.1%/200k (auto)      (anthropic) claude-x • high
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.text import Text

from pi_core.app.session_stats import usage_totals


def format_tokens(count: float) -> str:
    if count < 1000:
        return str(int(count))
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    if count < 10_000_000:
        return f"{count / 1_000_000:.1f}M"
    return f"{round(count / 1_000_000)}M"


def git_branch(cwd: str) -> str | None:
    """The checked-out branch (or short commit) of the repository holding ``cwd``."""
    folder = Path(cwd).resolve()
    for candidate in (folder, *folder.parents):
        git = candidate / ".git"
        if git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                pointer = git.read_text().strip()
            except OSError:
                return None
            if pointer.startswith("gitdir:"):
                git = (candidate / pointer[7:].strip()).resolve()
        if (git / "HEAD").is_file():
            try:
                head = (git / "HEAD").read_text().strip()
            except OSError:
                return None
            if head.startswith("ref: refs/heads/"):
                return head[len("ref: refs/heads/"):]
            return head[:7] or None
    return None


def latest_cache_hit_rate(entries) -> float | None:
    """pi 1.6's ``CH`` figure: the share of the last answer's prompt read from the
    provider's cache, in percent (None before an answer with a prompt)."""
    for entry in reversed(entries):  # the newest answer decides: no walk over a long session
        message: Any = getattr(entry, "message", None)
        if getattr(entry, "type", None) == "message" and getattr(message, "role", None) == "assistant":
            usage = message.usage
            prompt = usage.input + usage.cache_read + usage.cache_write
            return usage.cache_read / prompt * 100 if prompt > 0 else None
    return None


def routed(harness) -> str:
    """For a virtual model: `` → `` the physical model of the latest answer and the level
    it was sent with (pi 1.6's ``auto • high → gpt-5.6-luna • medium``); else nothing."""
    if harness.model.api != "virtual":
        return ""
    from pi_core.protocol.messages import AssistantMessage

    answer = next((m for m in reversed(harness.messages) if isinstance(m, AssistantMessage)
                   and m.api != "virtual" and m.model), None)
    if answer is None:
        return ""
    level = answer.extra.get("thinkingLevel")
    return f" → {answer.model}" + (f" • {level}" if level and level != "off" else "")


def footer(harness, width: int, branch: str | None = None, statuses: dict[str, str] | None = None,
           providers: int = 1) -> Group:
    """The footer for this harness state, fitted to ``width``."""
    cwd = harness.ctx.cwd
    home = os.path.expanduser("~")
    if home not in ("", "/") and (cwd == home or cwd.startswith(home + os.sep)):
        cwd = "~" + cwd[len(home):]
    where = cwd + (f" ({branch})" if branch else "")
    if harness.session.name:
        where += f" • {harness.session.name}"
    totals = usage_totals(harness.session.entries)
    parts = []
    for key, mark in (("input", "↑"), ("output", "↓"), ("cacheRead", "R"), ("cacheWrite", "W")):
        if totals[key]:
            parts.append(f"{mark}{format_tokens(totals[key])}")
    hit_rate = latest_cache_hit_rate(harness.session.entries)
    if (totals["cacheRead"] or totals["cacheWrite"]) and hit_rate is not None:
        parts.append(f"CH{hit_rate:.1f}%")
    if totals["cost"]:
        parts.append(f"${totals['cost']:.3f}")
    # no context window (no model yet: the chat started without one, as pi's does)
    context = harness.stats().get("contextUsage") or {"contextWindow": 0, "percent": 0.0}
    window = context["contextWindow"] or harness.model.context_window or 0
    percent = context["percent"]
    auto = " (auto)" if harness.ctx.settings.get("compaction.enabled", True) else ""
    context_text = f"{'?' if percent is None else f'{percent:.1f}'}%/{format_tokens(window)}{auto}"
    context_style = "error" if (percent or 0) > 90 else "warning" if (percent or 0) > 70 else "dim"
    left = Text(" ".join(parts) + (" " if parts else ""), style="dim")
    left.append(context_text, style=context_style)
    model = harness.model
    right = model.id
    if model.reasoning:
        level = harness.thinking_level
        right += " • thinking off" if level == "off" else f" • {level}"
    right += routed(harness)
    if providers > 1 and len(left) + 2 + len(f"({model.provider}) {right}") <= width:
        right = f"({model.provider}) {right}"
    if len(left) > width:
        left.truncate(width, overflow="ellipsis")
    room = width - len(left)
    if room >= len(right) + 2:
        left.append(" " * (room - len(right)) + right, style="dim")
    elif room > 2:
        left.append("  " + right[: room - 2], style="dim")
    lines = [Text(where, style="dim", overflow="ellipsis", no_wrap=True), left]
    if statuses:
        shown = " ".join(" ".join(text.split()) for _, text in sorted(statuses.items()))
        lines.append(Text(shown, overflow="ellipsis", no_wrap=True))
    return Group(*lines)
