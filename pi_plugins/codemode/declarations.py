"""How tools are shown to a script and to the model: identifiers (``tools.<name>``),
TypeScript declarations made from the tools' JSON schemas, what a call resolves to, and
the ``codemode`` tool itself and its description within ``codemode.inlineBudget``."""

from __future__ import annotations

import json
import re
from typing import Any

from pi_core import Tool, ToolResult, ToolRun

NAME = "codemode"
PARAMETERS = {"type": "object", "required": ["code"],
              "properties": {"code": {"type": "string", "description": "Raw JavaScript source."}}}

#: The script's shape as a Lark grammar, for models that write a grammar tool's input as
#: raw text (``supportsOpenAIGrammarTools``): an optional options line, then the code. It
#: fixes no more than that; :func:`.options.parse_options` and the sandbox judge the rest.
GRAMMAR = r"""
start: options? code
options: OPTIONS_LINE LINE_END
code: ANY_TEXT

OPTIONS_LINE: /[ \t]*\/\/[ \t]*@options:[^\r\n]*/
LINE_END: /\r?\n/
ANY_TEXT: /[\s\S]+/
"""

_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_$]")

#: What a call resolves to, for the tools whose results codemode reshapes (see values.py).
RESOLVES = {
    "read": 'string | { data: string; mimeType: string; note: string; type: "image"; }',
    "bash": ("{\n  exit_code: number;\n  // The whole output, when it was cut\n  full_output_path?: string;\n"
             "  // stdout and stderr together, maybe cut\n  output: string;\n  truncated: boolean;\n"
             "  wall_time_seconds: number;\n}"),
}
_SHORT_RESOLVES = {"bash": "{ output, truncated, full_output_path?, exit_code, wall_time_seconds }"}


def identifier(name: str) -> str:
    """The tool's member of ``tools``: characters a JavaScript identifier cannot hold
    become ``_`` (``mcp__dev-radius__search`` is ``mcp__dev_radius__search``)."""
    ident = _NOT_IDENTIFIER.sub("_", name) or "_"
    return "_" + ident if ident[0].isdigit() else ident


def ts_type(schema: Any, indent: str = "") -> str:
    """A TypeScript type for a JSON schema; properties sorted, descriptions as comments."""
    if not isinstance(schema, dict):
        return "unknown"
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(json.dumps(v) for v in schema["enum"]) or "never"
    if "const" in schema:
        return json.dumps(schema["const"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " | ".join(ts_type(s, indent) for s in schema[key]) or "unknown"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(ts_type({**schema, "type": k}, indent) for k in kind)
    if kind == "string":
        return "string"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "null":
        return "null"
    if kind == "array":
        return f"Array<{ts_type(schema.get('items', {}), indent)}>"
    properties = schema.get("properties")
    if kind == "object" or isinstance(properties, dict):
        if not properties:
            return "Record<string, unknown>"
        required = set(schema.get("required") or [])
        inner = indent + "  "
        lines = ["{"]
        for key in sorted(properties):
            prop = properties[key] if isinstance(properties[key], dict) else {}
            if prop.get("description"):
                lines += [f"{inner}// {line}" for line in str(prop["description"]).splitlines() or [""]]
            optional = "" if key in required else "?"
            name = key if identifier(key) == key else json.dumps(key)
            lines.append(f"{inner}{name}{optional}: {ts_type(prop, inner)};")
        lines.append(indent + "}")
        return "\n".join(lines)
    return "unknown"


def resolves_to(tool: Tool) -> str:
    """A tool with an ``output_schema`` resolves to that type (pi 1.6), else to its text."""
    if isinstance(getattr(tool, "output_schema", None), dict):
        return ts_type(tool.output_schema)
    return RESOLVES.get(tool.name, "string")


def declaration(tool: Tool) -> str:
    """``declare const tools: { name(args: {...}): Promise<...>; };``"""
    return (f"declare const tools: {{ {identifier(tool.name)}(args: {ts_type(tool.schema)}): "
            f"Promise<{resolves_to(tool)}>; }};")


def full_description(tool: Tool) -> str:
    """The description ``ALL_TOOLS`` and ``describeTool()`` give: the tool's own, its prompt
    guidelines (the system prompt's rules cover only declared tools), and its declaration."""
    parts = [tool.description.strip()]
    if tool.prompt_guidelines:
        parts.append("\n".join(f"- {line}" for line in tool.prompt_guidelines))
    parts.append(f"TypeScript declaration for codemode:\n```ts\n{declaration(tool)}\n```")
    return "\n\n".join(p for p in parts if p)


def script_note(tool: Tool) -> str:
    """What ``codemode.mode: on`` appends to a declared tool's description."""
    shape = _SHORT_RESOLVES.get(tool.name, resolves_to(tool) if tool.name in RESOLVES else "a string")
    return f"\n\nCodemode: in a script, `tools.{identifier(tool.name)}(args)` resolves to {_ticked(shape)}."


def _ticked(shape: str) -> str:
    return shape if shape == "a string" else f"`{shape}`"


INTRO = """\
Run a JavaScript script that calls the other tools; only what the script outputs reaches you. \
The input is plain JavaScript source (no JSON, no markdown fence), run as the body of an async \
function in a QuickJS sandbox, so top-level `await` and `return` work. The sandbox has no Node \
APIs, no file system, no network and no timers: scripts reach the outside only through tools.
- `await tools.<name>({ ...args })` calls a tool. It resolves to the tool's text output (or the \
value its declaration names) and rejects with an Error carrying the tool's error text when the call \
fails or is blocked; `Promise.all` / `Promise.allSettled` run calls in parallel. Calls still running \
when the script ends are cancelled.
- An optional first line sets limits: `// @options: {"max_output_tokens": 10000, "timeout_ms": 60000}`

Globals:
- Output: `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)` (also info, warn, error, \
debug) and a top-level `return`; `exit()` ends the script. Several text items each start with a \
`==> text N/M <==` line; console lines come last, in one `<console_output>` block. `image()` also \
saves the image to a temp file and names it.
- `store(key, value)` / `load(key)` keep small JSON values for later codemode calls in this session.
- `ALL_TOOLS` (every callable tool as `{ name, description }`), `await searchTools(query, { limit?, \
namespace? })`, `await describeTool(name)`, `await describeNamespace(name)`: find tools this \
description does not list.
- `models`: the model catalogue by type (`getModelsOfType`, `getAvailableOfType`, `getModelOfType`); \
this harness has no classifier or image models, so `classify()` and `generateImages()` reject."""


def codemode_description(listed: list[Tool], budget_tokens: int) -> str:
    """The tool's description: :data:`INTRO`, then declarations of ``listed`` while they
    fit in ``budget_tokens`` (characters / 4); the rest are left to ``searchTools()``."""
    if not listed:
        return INTRO
    spent = 0
    shown: list[str] = []
    left_out: list[str] = []
    for tool in listed:
        block = f"- {tool.name}: {tool.description.strip().splitlines()[0] if tool.description.strip() else ''}\n" \
                f"```ts\n{declaration(tool)}\n```"
        cost = (len(block) + 3) // 4
        if budget_tokens > 0 and spent + cost <= budget_tokens:
            shown.append(block)
            spent += cost
        else:
            left_out.append(tool.name)
    text = INTRO + "\n\nTools for scripts:\n" + "\n".join(shown) if shown else INTRO
    if left_out:
        text += (f"\n\n{len(left_out)} more tool{'s' if len(left_out) != 1 else ''} not listed here: "
                 "find them with searchTools() or ALL_TOOLS.")
    return text


async def _execute(args: dict, run: ToolRun) -> ToolResult:
    """The sandbox and what serves it load with codemode's first script, not with every start."""
    from pi_plugins.codemode.tool import execute

    return await execute(args, run)


def make_tool(description: str) -> Tool:
    return Tool(name=NAME, label="codemode", description=description, parameters=PARAMETERS,
                function=_execute, default_active=False, summarize=_summary, reaches_tools=_reaches,
                prompt_snippet="Run JavaScript that calls other tools",
                prompt_guidelines=["Use codemode to batch independent tool calls (Promise.allSettled), chain "
                                   "them, or filter large output, instead of many separate calls."])


def _reaches(args: Any) -> str | list[str]:
    """pi 1.6's ``reachesTools``: every tool for a script that searches or lists them, else
    the words of the script (a word reaches each tool or namespace whose name it holds)."""
    code = str(args.get("code", "")) if isinstance(args, dict) else ""
    if any(word in code for word in ("searchTools", "ALL_TOOLS", "describeNamespace")):
        return "all"
    return sorted(set(re.findall(r"[\w$-]+", code)))


def _summary(args: dict) -> str:
    first = str(args.get("code", "")).strip().splitlines()[:1]
    return "codemode " + (first[0][:80] if first else "")
