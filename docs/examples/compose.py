"""Compose an agent from the core, one provider and one hand-written tool plugin.

Run it: python docs/examples/compose.py
(The scripted provider stands in for a real model, so this runs offline.)
"""

import asyncio

from pi_core import create_harness, hookimpl, tool
from pi_core.testing import Reply, ScriptedProvider, scripted_model


@tool(parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
def weather(args, run):
    """Today's weather in a city."""
    return f"It is sunny in {args['city']}."


class WeatherPlugin:
    @hookimpl
    def register_tools(self):
        return [weather]


async def main() -> None:
    provider = ScriptedProvider([
        Reply(text="Let me check.", tool_calls=[("weather", {"city": "Lisbon"})]),
        Reply(text="Good news: it is sunny in Lisbon today."),
    ])
    harness = await create_harness(provider, WeatherPlugin(), model=scripted_model())

    def show(event):
        if event.type == "tool_execution_end":
            print(f"[{event.tool_name}] {event.result.content[0].text}")

    harness.subscribe(show)
    await harness.prompt("What's the weather in Lisbon?")
    print(harness.messages[-1].text)


if __name__ == "__main__":
    asyncio.run(main())
