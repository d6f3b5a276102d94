"""pi-hello's tests, written with pi-harness's test kit (pi_core.testing): the ``harness``
fixture comes with pi-harness, no conftest needed."""

import asyncio

import pi_hello
from pi_core.testing import Reply, assert_light_import


def test_the_model_greets_through_the_tool(harness):
    async def scenario():
        agent = await harness(pi_hello, script=[
            Reply(tool_calls=[("greet", {"name": "Ada"})]),  # the model calls the tool…
            Reply(text="Done."),                             # …then answers
        ])
        await agent.prompt("Say hello to Ada")
        return agent

    agent = asyncio.run(scenario())
    result = [m for m in agent.messages if m.role == "toolResult"][0]
    assert result.content[0].text.startswith("Hello, Ada! Today is ")
    # What the model was sent: the tool's result, in the second request.
    assert harness.provider.requests[1].messages[-1].role == "toolResult"


def test_loading_the_plugin_stays_light():
    # ``@tool`` at the top builds the tool when pi starts, which needs pi_core.protocol.tools; the
    # loop, the harness and the HTTP stack must still wait until they are used.
    assert_light_import("pi_hello", heavy=("pi_core.loop", "pi_core.app.harness", "httpx"))
