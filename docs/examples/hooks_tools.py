"""Hooks around tools: register one, vet calls before they run, patch results after,
follow their progress, and give the built-in tools another execution environment.

Run it: python docs/examples/hooks_tools.py
(The scripted provider stands in for a model; files go to a temporary folder.)
"""

import asyncio
import tempfile

import attrs

import pi_plugins.tools
from pi_core import TextContent, ToolCallDecision, ToolResult, create_harness, hookimpl, tool
from pi_core.testing import Reply, ScriptedProvider, scripted_model
from pi_plugins.tools.environment import LocalEnvironment


@tool(parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
      execution_mode="sequential")
async def countdown(args, run):
    """Count down from n, reporting each step."""
    for i in range(args["n"], 0, -1):
        run.update(f"{i}...")  # reaches tool_execution_update hooks and the UI
        await asyncio.sleep(0)
    return ToolResult.text(f"Lift-off after {args['n']} steps!", details={"steps": args["n"]})


class RecordingEnvironment(LocalEnvironment):
    """The local machine, with every file read noted (a sandbox could vet it instead)."""

    async def read_bytes(self, path, offset=0, size=None):
        print(f"environment: read {path.rsplit('/', 1)[-1]}")
        return await super().read_bytes(path, offset, size)


class ToolTour:
    def __init__(self, cwd):
        self.environment = RecordingEnvironment(cwd)

    @hookimpl
    def register_tools(self, ctx):
        return [countdown]  # collected by name: a tool called "read" would replace the built-in

    @hookimpl
    def execution_environment(self, ctx):
        return self.environment

    @hookimpl
    def before_tool_call(self, event, ctx):
        if event.tool_name == "bash" and "rm " in event.arguments["command"]:
            print("before_tool_call: blocked", event.arguments["command"])
            return ToolCallDecision(block=True, reason="Deleting files is not allowed here.")
        if event.tool_name == "countdown" and event.arguments["n"] > 3:
            return ToolCallDecision(arguments={"n": 3})  # change the arguments
        return None  # no opinion: the call goes ahead

    @hookimpl
    def tool_execution_start(self, event, ctx):
        print(f"tool_execution_start: {event.tool_name} {event.args}")

    @hookimpl
    def tool_execution_update(self, event, ctx):
        print(f"tool_execution_update: {event.partial_result.content[0].text}")

    @hookimpl
    def tool_execution_end(self, event, ctx):
        print(f"tool_execution_end: {event.tool_name} error={event.is_error}")

    @hookimpl
    def after_tool_call(self, result, event, ctx):
        if event.tool_name == "read":  # patch what the model reads
            text = result.content[0].text.strip()
            return attrs.evolve(result, content=[TextContent(text + " (checked)")])


async def main(cwd: str) -> None:
    with open(f"{cwd}/notes.txt", "w") as f:
        f.write("status: draft\n")
    provider = ScriptedProvider([
        Reply(tool_calls=[("countdown", {"n": 10})]),
        Reply(tool_calls=[("bash", {"command": "rm -rf build"}), ("read", {"path": "notes.txt"})]),
        Reply(text="Done."),
    ])
    harness = await create_harness(provider, pi_plugins.tools, ToolTour(cwd),
                                   model=scripted_model(), cwd=cwd)
    print("tools:", [t.name for t in harness.agent.active_tools()])
    await harness.prompt("Count down, clean up, then read the notes.")
    for message in harness.messages:
        if message.role == "toolResult":
            print(f"result of {message.tool_name}: {message.content[0].text!r}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(main(folder))
