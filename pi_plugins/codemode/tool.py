"""The ``codemode`` tool: parse the options line, hand the script to the sandbox with
the globals it may use, serve its requests (tool calls through ``ctx.execute_tool``,
look-ups, ``models``), keep its ``store()`` writes, and say what happened."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pi_core import Tool, ToolResult, ToolRun
from pi_plugins.codemode import declarations
from pi_plugins.codemode.declarations import NAME
from pi_plugins.codemode.models import ModelsGlobal
from pi_plugins.codemode.options import OptionsError, parse_options
from pi_plugins.codemode.output import script_result
from pi_plugins.codemode.sandbox import SandboxError, run_script
from pi_plugins.codemode.store import ScriptStore
from pi_plugins.codemode.values import script_value
from pi_plugins.tool_search import ranking

#: Exposures of tools a script reaches whether or not they are declared (pi 1.6).
INDIRECT = ("codemode", "deferred")


def callable_tools(ctx: Any) -> list[Tool]:
    """The tools a script may call: the active tools but codemode itself and the
    ``model-only`` ones, then every registered ``codemode`` or ``deferred`` tool (MCP
    tools), declared or not, so scripts reach them whatever the active set is."""
    agent = getattr(ctx, "agent", None)
    if agent is None:
        return []
    active = [t for t in agent.active_tools() if t.name != NAME and t.exposure != "model-only"]
    names = {t.name for t in active}
    return [*active, *(t for t in agent.tools or [] if t.exposure in INDIRECT and t.name not in names)]


def names_namespace(found: dict, query: str) -> bool:
    """pi 1.6: ``query`` names the namespace when it is its name or one of its ``aliases``,
    as written or as the same script identifier (``my-docs`` and ``my_docs`` alike)."""
    wanted = declarations.identifier(query)
    return any(name == query or declarations.identifier(name) == wanted
               for name in [found["name"], *(found.get("aliases") or [])] if isinstance(name, str))


def namespace_of(tool: Tool) -> dict | None:
    found = getattr(tool, "namespace", None)
    return found if isinstance(found, dict) and found.get("name") else None


class ScriptRun:
    """One script's requests, served on the harness's side."""

    def __init__(self, run: ToolRun, tools: list[Tool]) -> None:
        self.run = run
        self.tools = tools
        self.by_name = {tool.name: tool for tool in tools}
        self.calls: list[list[str]] = []  # [name, status] in the order made

    def config(self, store: dict) -> dict:
        return {"store": store,
                "tools": [{"name": t.name, "ident": declarations.identifier(t.name)} for t in self.tools],
                "all_tools": [{"name": t.name, "description": declarations.full_description(t)} for t in self.tools]}

    async def answer(self, request: dict) -> tuple[bool, Any]:
        kind, name, args = request.get("kind"), str(request.get("name", "")), request.get("args")
        if kind == "tool":
            return await self._call(name, args)
        if kind == "searchTools":
            options = args if isinstance(args, dict) else {}
            given = options.get("limit")
            limit = given if isinstance(given, int) and not isinstance(given, bool) else 8
            tools = self.tools
            if isinstance(options.get("namespace"), str):
                tools = self.in_namespace(options["namespace"])
            found = ranking.rank(name, tools, limit)
            return True, [{"name": t.name, "description": declarations.full_description(t)} for t in found]
        if kind == "describeTool":
            tool = self.by_name.get(name) or next(
                (t for t in self.tools if declarations.identifier(t.name) == name), None)
            return True, declarations.full_description(tool) if tool is not None else None
        if kind == "describeNamespace":
            return True, self.describe_namespace(name)
        if kind == "models":
            return ModelsGlobal(getattr(self.run.ctx, "model_registry", None)).answer(name, args)
        return False, f"unknown request {kind!r}"

    def in_namespace(self, name: str) -> list[Tool]:
        return [t for t in self.tools if (found := namespace_of(t)) is not None and names_namespace(found, name)]

    def describe_namespace(self, name: str) -> dict | None:
        """``{name, description?, instructions?, tools}`` (an MCP server), or None."""
        tools = self.in_namespace(name)
        if not tools:
            return None
        found = {key: value for key, value in (namespace_of(tools[0]) or {}).items() if key != "aliases"}
        found["tools"] = [t.name for t in tools]
        return found

    async def _call(self, name: str, args: Any) -> tuple[bool, Any]:
        if name not in self.by_name:
            return False, f"Tool {name} not found"
        entry = [name, "running"]
        self.calls.append(entry)
        began = time.monotonic()
        try:
            result = await self.run.ctx.execute_tool(name, args, parent_tool_call_id=self.run.tool_call_id,
                                                     signal=self.run.signal)
        except asyncio.CancelledError:
            entry[1] = "cancelled"
            raise
        ok, value = script_value(name, result, time.monotonic() - began, self.by_name.get(name))
        entry[1] = "ok" if not result.is_error else "error"
        return ok, value


async def execute(args: dict, run: ToolRun) -> ToolResult:
    code = str(args.get("code", ""))
    try:
        options = parse_options(code)
    except OptionsError as exc:
        return ToolResult.error(str(exc))
    ctx = run.ctx
    store = ScriptStore.of(ctx)
    script = ScriptRun(run, callable_tools(ctx))
    began = time.monotonic()
    timeout = options.timeout_ms / 1000 if options.timeout_ms else None
    try:
        outcome = await run_script(code, script.config(store.values()), script.answer,
                                   timeout=timeout, signal=run.signal)
        ok, error, output = outcome.ok, outcome.error, outcome.output
        if ok:
            store.keep(outcome.store)
    except SandboxError as exc:
        ok, error, output = False, str(exc), exc.outcome.output
    calls = [(name, status) for name, status in script.calls]
    return script_result(ok=ok, seconds=time.monotonic() - began, output=output, error=error,
                         calls=calls, max_output_tokens=options.max_output_tokens)
