"""Which tools a run starts with: ``--tools``, ``--exclude-tools``, ``--no-tools`` and
``--no-builtin-tools``, as pi 1.6's docs/cli.md describes them.

- ``--tools a,b*``: an allow-list of names or patterns (``*`` matches any characters);
- ``--tools +a,-b``: a list of only ``+name`` / ``-name`` entries changes the default
  selection instead: exact names, no patterns; plain names and ``+``/``-`` entries
  cannot be mixed (pi refuses both, with these words);
- ``--exclude-tools a,b*`` (``-xt``): names or patterns turned off after everything else.
"""

from __future__ import annotations

import re
import sys

from attrs import define, field


class ToolFlagError(ValueError):
    """A ``--tools`` / ``--exclude-tools`` value pi refuses (pi's message)."""


@define
class ToolSelection:
    """The parsed ``--tools`` value: an allow-list, or changes to the default."""

    allow: list[str] | None = None  # names or patterns; None: no allow-list
    add: list[str] = field(factory=list)
    remove: list[str] = field(factory=list)


def _entries(value: str) -> list[str]:
    return [e.strip() for e in value.split(",") if e.strip()]


def parse_tools(value: str | None) -> ToolSelection | None:
    """``--tools``'s value, or ``None`` when it was not given."""
    if value is None:
        return None
    entries = _entries(value)
    changes = [e for e in entries if e[0] in "+-"]
    if changes and len(changes) != len(entries):
        raise ToolFlagError("--tools: tool names cannot be mixed with +name or -name entries")
    if not changes:
        return ToolSelection(allow=entries)
    patterns = [e for e in changes if "*" in e]
    if patterns:
        raise ToolFlagError("--tools: +name and -name entries take exact tool names, not patterns: "
                            + ", ".join(patterns))
    return ToolSelection(add=[e[1:] for e in changes if e[0] == "+" and e[1:]],
                         remove=[e[1:] for e in changes if e[0] == "-" and e[1:]])


def _matches(name: str, entry: str) -> bool:
    if "*" not in entry:
        return name == entry
    return re.fullmatch(".*".join(re.escape(p) for p in entry.split("*")), name) is not None


def select(names: list[str], default: list[str], *, tools: ToolSelection | None = None,
           exclude: str | None = None, no_tools: bool = False,
           builtin: set[str] | None = None, no_builtin_tools: bool = False) -> list[str]:
    """The active tools, in the order of ``names`` (every registered tool), from the
    ``default`` selection and the flags."""
    if no_tools:
        chosen: list[str] = []
    elif tools is not None and tools.allow is not None:
        chosen = [n for n in names if any(_matches(n, e) for e in tools.allow)]
    else:
        chosen = [n for n in default if not (no_builtin_tools and n in (builtin or set()))]
        if tools is not None:
            chosen = [n for n in chosen if n not in tools.remove]
            chosen += [n for n in tools.add if n in names and n not in chosen]
    excluded = _entries(exclude or "")
    return [n for n in chosen if not any(_matches(n, e) for e in excluded)]


def unknown_names(selection: ToolSelection | None, names: list[str]) -> list[str]:
    """Plain names of ``--tools`` (no patterns) and ``+name`` entries no tool has."""
    if selection is None:
        return []
    wanted = selection.add if selection.allow is None else [e for e in selection.allow if "*" not in e]
    return sorted(set(wanted) - set(names))


def apply_tool_flags(args, harness) -> None:
    """Set the harness's active tools from the run's tool flags (``args``, a
    :class:`pi_plugins.cli.run_args.RunArgs`)."""
    if args.tools is None and args.exclude_tools is None and not (args.no_tools or args.no_builtin_tools):
        return
    agent = harness.agent
    tools = agent.tools or []
    names = [t.name for t in tools]
    selection = parse_tools(args.tools)
    unknown = unknown_names(selection, names)
    if unknown:
        print(f"warning: --tools names unknown tools: {', '.join(unknown)}", file=sys.stderr)
    default = [t.name for t in tools if t.default_active]
    agent.set_active_tools(select(
        names, default, tools=selection, exclude=args.exclude_tools,
        no_tools=args.no_tools and selection is None, builtin={t.name for t in tools if _is_builtin(t)},
        no_builtin_tools=args.no_builtin_tools))


def _is_builtin(tool) -> bool:
    """A tool of the built-in tools plugin (not one a plugin registered under the same name)."""
    module = getattr(tool.function, "__module__", None) or type(tool).__module__
    return module.startswith("pi_plugins.tools")


__all__ = ["ToolFlagError", "ToolSelection", "apply_tool_flags", "parse_tools", "select", "unknown_names"]
