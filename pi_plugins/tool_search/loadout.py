"""What ``tool_search`` loaded, kept in the session so it stays declared on that branch.

pi 1.6 records a change of the declared tools as a ``system`` message entry,
``{"role": "system", "content": "", "toolsAdded": [{name, description, parameters}]}``
(``toolsRemoved`` lists ``{name}``), written after the tool results of the turn. We write
the same entry, so either program resuming the other's file finds the loaded tools.
Replaying the branch's ``toolsAdded``/``toolsRemoved`` in order gives the loaded set; only
tools ``tool_search`` governs (``codemode``/``deferred`` exposure) are taken from it, since
the direct tools are the command line's choice (``--tools``, ``defaultTools``).
"""

from __future__ import annotations

from typing import Any

from pi_plugins.tool_search.tool import SEARCHABLE


def record(session: Any, tools: list) -> None:
    """Append pi 1.6's tool-change entry for ``tools``, now declared."""
    from pi_core import SystemMessage
    from pi_plugins.system_messages import declaration

    session.append_message(SystemMessage(tools_added=[declaration(t) for t in tools]))


def _tool_changes(entry: Any) -> tuple[list[str], list[str]] | None:
    """(added, removed) names of a system message entry, or None for any other entry."""
    from pi_plugins.system_messages import system_data

    data = system_data(getattr(entry, "message", None))
    if not isinstance(data, dict) or data.get("role") != "system":
        return None

    def names(key: str) -> list[str]:
        items = data.get(key)
        if not isinstance(items, list):
            return []
        return [i["name"] for i in items if isinstance(i, dict) and isinstance(i.get("name"), str)]

    return names("toolsAdded"), names("toolsRemoved")


def loaded_on_branch(session: Any) -> list[str]:
    """The tool names the current branch's tool changes leave declared, in load order."""
    loaded: dict[str, None] = {}
    for entry in session.path():
        changes = _tool_changes(entry)
        if changes is None:
            continue
        added, removed = changes
        for name in removed:
            loaded.pop(name, None)
        for name in added:
            loaded[name] = None
    return list(loaded)


def searchable_names(ctx: Any) -> set[str]:
    return {t.name for t in ctx.get_all_tools() if getattr(t, "exposure", "direct") in SEARCHABLE}


def sync(ctx: Any, restored: set[str]) -> set[str]:
    """Declare the searchable tools the branch loaded and withdraw those an earlier
    :func:`sync` restored that this branch did not load; returns the names now restored
    (for the next call). Tools the command line declared are left alone."""
    session = getattr(ctx, "session", None)
    if session is None:
        return set()
    searchable = searchable_names(ctx)
    if not searchable and not restored:  # nothing here is tool_search's: no need to read the branch
        return set()
    wanted = [n for n in loaded_on_branch(session) if n in searchable]
    active = ctx.get_active_tools()
    keep = [n for n in active if n not in restored or n in wanted]
    now = {n for n in wanted if n not in keep} | (restored & set(wanted))
    new = [*keep, *(n for n in wanted if n not in keep)]
    if new != active:
        ctx.set_active_tools(new)
    return now
