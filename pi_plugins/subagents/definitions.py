"""Agent definitions: Markdown files whose frontmatter names an agent (``name``,
``description``, optional ``model``, ``tools``, ``thinking``) and whose body is its system
prompt, the shape Claude Code and pi's subagent packages use::

    ---
    name: scout
    description: Fast reconnaissance of a code base
    tools: read, grep, find, ls
    model: anthropic/claude-haiku-4-5
    ---
    You are a scout. ...

They are found in ``<agent dir>/agents/*.md`` and the project's ``.pi/agents/*.md``; a
project definition replaces the user's one of the same name. A file that cannot be read
is reported in ``problems`` and left out, never fatal.
"""

from __future__ import annotations

from pathlib import Path

from pi_core.protocol.records import field, record

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


@record
class AgentDefinition:
    name: str
    description: str
    system_prompt: str
    path: Path
    model: str | None = None
    tools: list[str] | None = None
    thinking: str | None = None


@record
class Definitions:
    agents: dict[str, AgentDefinition] = field(factory=dict)
    problems: list[str] = field(factory=list)

    def find(self, name: str) -> AgentDefinition | None:
        """The definition named ``name`` in its frontmatter, else the one in ``NAME.md``."""
        found = self.agents.get(name)
        if found is None:
            found = next((d for d in reversed(self.agents.values()) if d.path.stem == name), None)
        return found


def agent_folders(cwd: str | Path, agent_dir: str | Path) -> list[Path]:
    """Where definitions are looked for, lowest precedence first."""
    return [Path(agent_dir) / "agents", Path(cwd) / ".pi" / "agents"]


def discover_agents(cwd: str | Path, agent_dir: str | Path) -> Definitions:
    """Every definition of the user's and the project's folders, by name."""
    found = Definitions()
    for folder in agent_folders(cwd, agent_dir):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            try:
                definition = read_definition(path)
            except (OSError, ValueError) as exc:
                found.problems.append(f"{path}: {exc}")
                continue
            found.agents[definition.name] = definition
    return found


def read_definition(path: Path) -> AgentDefinition:
    """One definition file; raises ValueError saying what is wrong with it."""
    from pi_plugins.frontmatter import FrontmatterError, parse_frontmatter

    try:
        meta, body = parse_frontmatter(path.read_text(encoding="utf-8"))
    except FrontmatterError as exc:
        raise ValueError(str(exc)) from None
    name = meta.get("name") or path.stem
    description = meta.get("description")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("'name' must be a non-empty string")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("the frontmatter needs a 'description' (what the agent is for)")
    model = meta.get("model")
    if model is not None and not isinstance(model, str):
        raise ValueError("'model' must be a string such as provider/id")
    thinking = meta.get("thinking")
    if thinking is not None and thinking not in THINKING_LEVELS:
        raise ValueError(f"'thinking' must be one of {', '.join(THINKING_LEVELS)}")
    return AgentDefinition(name=name.strip(), description=" ".join(description.split()),
                           system_prompt=body, path=path, model=model or None,
                           tools=_tool_names(meta.get("tools")), thinking=thinking)


def _tool_names(value) -> list[str] | None:
    """``tools`` as a comma-separated string or a list of names."""
    if value is None:
        return None
    if isinstance(value, str):
        return [n.strip() for n in value.split(",") if n.strip()]
    if isinstance(value, list) and all(isinstance(n, str) for n in value):
        return [n.strip() for n in value if n.strip()]
    raise ValueError("'tools' must be a list of tool names or a comma-separated string")
