"""Helpers for tests that drive a real Agent with the scripted provider."""

import asyncio

from pi_core import Agent, Plugins
from pi_core.testing import ScriptedProvider, scripted_model


class Recorder:
    """Records every agent event, in order."""

    def __init__(self):
        self.events = []

    def __call__(self, event):
        self.events.append(event)

    def types(self, *only):
        return [e.type for e in self.events if not only or e.type in only]

    def of(self, kind):
        return [e for e in self.events if e.type == kind]


def build_agent(script, *plugins, tools=None, **kwargs):
    """An agent from the core, a scripted provider and the given plugins."""
    registry = Plugins()
    provider = ScriptedProvider(script)
    registry.register(provider, "scripted")
    for plugin in plugins:
        registry.register(plugin)
    agent = Agent(model=scripted_model(), plugins=registry, tools=tools or [], **kwargs)
    recorder = Recorder()
    agent.subscribe(recorder)
    return agent, provider, recorder


def run(coro):
    return asyncio.run(coro)
