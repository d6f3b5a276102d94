"""Which tools a run starts with: ``--tools``, ``--exclude-tools``, ``--no-tools`` and
``--no-builtin-tools``, as pi 1.6's docs/cli.md describes them.

- ``--tools a,b*``: an allow-list of names or patterns (``*`` matches any characters);
- ``--tools +a,-b``: a list of only ``+name`` / ``-name`` entries changes the default
  selection instead: exact names, no patterns; plain names and ``+``/``-`` entries
  cannot be mixed (pi refuses both, with these words);
- ``--exclude-tools a,b*`` (``-xt``): names or patterns turned off after everything else;
- the ``defaultTools`` setting (docs/settings.md): the default selection, the user's list
  then the project's; a list with a plain name replaces what it inherits, ``+name`` and
  ``-name`` then change it in order (``["+tool_search"]`` keeps the defaults and adds it);
- MCP tools (``mcp__server__tool`` and the resource tools): an allow-list declares only
  those it names or matches, and once an entry starts with ``mcp__`` the MCP tools it does
  not match are taken away altogether (``--tools read,'mcp__radius__*'``).
"""

from __future__ import annotations

import re
import sys
import weakref
from typing import Any

from pi_core.protocol.records import field, record


class ToolFlagError(ValueError):
    """A ``--tools`` / ``--exclude-tools`` value pi refuses (pi's message)."""


@record
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


#: pi 1.6's MCP resource tools count as MCP tools for ``--tools``.
MCP_RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")


def is_mcp_tool(name: str) -> bool:
    return name.startswith("mcp__") or name in MCP_RESOURCE_TOOLS


def mcp_withdrawn(names: list[str], tools: ToolSelection | None) -> list[str]:
    """The MCP tools an allow-list takes away: none unless an entry starts with ``mcp__``,
    then those no entry matches."""
    if tools is None or tools.allow is None or not any(e.startswith("mcp__") for e in tools.allow):
        return []
    return [n for n in names if is_mcp_tool(n) and not any(_matches(n, e) for e in tools.allow)]


def default_tools(layers: list, builtin_default: list[str],
                  plugin_default: list[str] | None = None) -> tuple[list[str], list[str]]:
    """The ``defaultTools`` selection from the settings' lists (user's, then project's,
    ``None`` for one not given), starting from the tools on by default: (names, problems).
    A plain list replaces the built-in ones; plugins' tools that register on stay unless
    ``-name`` removes them."""
    plugin_default = plugin_default or []
    chosen, problems = [*builtin_default, *plugin_default], []
    for value in layers:
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append("defaultTools must be a list of tool names")
            continue
        entries = [v.strip() for v in value if v.strip()]
        plain = [e for e in entries if e[0] not in "+-"]
        if plain or not entries:
            chosen = list(dict.fromkeys([*plain, *(n for n in chosen if n in plugin_default)]))
        for entry in entries:
            if entry[0] == "+" and entry[1:] and entry[1:] not in chosen:
                chosen.append(entry[1:])
            elif entry[0] == "-":
                chosen = [n for n in chosen if n != entry[1:]]
    return chosen, problems


def _matches(name: str, entry: str) -> bool:
    if "*" not in entry:
        return name == entry
    return re.fullmatch(".*".join(re.escape(p) for p in entry.split("*")), name) is not None


def select(names: list[str], default: list[str], *, tools: ToolSelection | None = None,
           exclude: str | None = None, no_tools: bool = False,
           builtin: set[str] | None = None, no_builtin_tools: bool = False,
           indirect: set[str] | None = None) -> list[str]:
    """The active tools, in the order of ``names`` (every registered tool), from the
    ``default`` selection and the flags. A pattern does not declare an ``indirect`` tool
    (``codemode``/``deferred`` exposure: reached through codemode or tool_search); its
    exact name does."""
    if no_tools:
        chosen: list[str] = []
    elif tools is not None and tools.allow is not None:
        chosen = [n for n in names if n in tools.allow
                  or (n not in (indirect or set()) and any(_matches(n, e) for e in tools.allow))]
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


@record
class LateTools:
    """The run's tool flags, kept for tools that register after start-up (MCP servers
    connecting in the background), so they are chosen as if present at the start."""

    selection: ToolSelection | None
    exclude: str | None
    no_tools: bool
    no_builtin_tools: bool = False

    def decide(self, name: str, exposure: str = "direct") -> str | None:
        """``withdraw`` (not to be registered at all), ``off``, ``on``, or None (its default)."""
        if mcp_withdrawn([name], self.selection) or any(_matches(name, e) for e in _entries(self.exclude or "")):
            return "withdraw"
        if self.selection is not None and self.selection.allow is not None:
            allow = self.selection.allow
            named = name in allow or (exposure not in ("codemode", "deferred") and any(_matches(name, e) for e in allow))
            return "on" if named else "off"
        if self.no_tools or (self.selection is not None and name in self.selection.remove):
            return "off"
        return None


_late: weakref.WeakKeyDictionary[Any, LateTools] = weakref.WeakKeyDictionary()


def late_tools(ctx: Any) -> LateTools | None:
    """The tool flags of the run ``ctx`` belongs to, for a tool registered late; None
    when the run gave none."""
    return _late.get(ctx)


def apply_tool_flags(args, harness) -> None:
    """Set the harness's active tools from the ``defaultTools`` setting and the run's tool
    flags (``args``, a :class:`pi_plugins.cli.run_args.RunArgs`)."""
    settings = harness.ctx.settings
    layers = [getattr(settings, "global_data", {}).get("defaultTools"),
              getattr(settings, "project_data", {}).get("defaultTools")]
    if (args.tools is None and args.exclude_tools is None and not (args.no_tools or args.no_builtin_tools)
            and all(layer is None for layer in layers)):
        return
    agent = harness.agent
    selection = parse_tools(args.tools)
    _late[harness.ctx] = LateTools(selection, args.exclude_tools, bool(args.no_tools and selection is None),
                                   bool(args.no_builtin_tools))
    for name in mcp_withdrawn([t.name for t in agent.tools or []], selection):
        agent.remove_tool(name)
    tools = agent.tools or []
    names = [t.name for t in tools]
    unknown = unknown_names(selection, names)
    if unknown:
        print(f"warning: --tools names unknown tools: {', '.join(unknown)}", file=sys.stderr)
    builtin = {t.name for t in tools if _is_builtin(t)}
    on = [t.name for t in tools if t.default_active]
    chosen, problems = default_tools(layers, [n for n in on if n in builtin], [n for n in on if n not in builtin])
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    default = [n for n in names if n in chosen]
    agent.set_active_tools(select(
        names, default, tools=selection, exclude=args.exclude_tools,
        no_tools=args.no_tools and selection is None, builtin={t.name for t in tools if _is_builtin(t)},
        no_builtin_tools=args.no_builtin_tools,
        indirect={t.name for t in tools if getattr(t, "exposure", "direct") in ("codemode", "deferred")}))


#: The ``defaultTools`` lists (user's, project's) a run last chose its tools by, per ctx.
_layers_seen: weakref.WeakKeyDictionary[Any, list] = weakref.WeakKeyDictionary()


def _layers(settings: Any) -> list:
    return [getattr(settings, "global_data", {}).get("defaultTools"),
            getattr(settings, "project_data", {}).get("defaultTools")]


def enable_new_default_tools(ctx: Any) -> list[str]:
    """pi 1.6's ``/reload``: the tools ``defaultTools`` (read again from the settings
    files) newly names are switched on; the ones it no longer names stay on, and those
    switched off in the session stay off unless newly named. ``--tools NAMES`` and
    ``--no-tools`` keep the setting out; ``--tools +a,-b``, ``--exclude-tools`` and
    ``--no-builtin-tools`` apply to it as at the start. The names switched on."""
    from pi_core.app.settings import Settings

    agent, settings = getattr(ctx, "agent", None), getattr(ctx, "settings", None)
    if agent is None or settings is None or getattr(settings, "global_dir", None) is None:
        return []
    flags = _late.get(ctx) or LateTools(None, None, False)
    if flags.no_tools or (flags.selection is not None and flags.selection.allow is not None):
        return []
    before = _layers_seen.get(ctx) or _layers(settings)
    fresh = Settings.load(ctx.cwd, settings.global_dir, project_trusted=settings.project_trusted)
    now = _layers_seen[ctx] = _layers(fresh)
    tools = agent.tools or []
    names = [t.name for t in tools]
    builtin = {t.name for t in tools if _is_builtin(t)}
    on = [t.name for t in tools if t.default_active]

    def chosen(layers: list) -> list[str]:
        default = default_tools(layers, [n for n in on if n in builtin], [n for n in on if n not in builtin])[0]
        return select(names, [n for n in names if n in default], tools=flags.selection, exclude=flags.exclude,
                      builtin=builtin, no_builtin_tools=flags.no_builtin_tools)

    was = set(chosen(before))
    added = [n for n in chosen(now) if n not in was]
    if added:
        active = [t.name for t in agent.active_tools()]
        agent.set_active_tools([*active, *(n for n in added if n not in active)])
    return added


def _is_builtin(tool) -> bool:
    """A tool of the built-in tools plugin (not one a plugin registered under the same name)."""
    module = getattr(tool.function, "__module__", None) or type(tool).__module__
    return module.startswith("pi_plugins.tools")


__all__ = ["LateTools", "ToolFlagError", "ToolSelection", "late_tools", "apply_tool_flags", "default_tools",
           "enable_new_default_tools", "is_mcp_tool", "mcp_withdrawn",
           "parse_tools", "select", "unknown_names"]
