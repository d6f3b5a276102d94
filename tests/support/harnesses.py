"""Helpers for tests that drive a real harness with the scripted provider and real
session files."""

import json

from pi_core import Plugins, hookimpl, tool
from pi_core.app.harness import Harness
from pi_core.protocol.messages import text_of
from pi_core.session import Session
from pi_core.app.settings import Settings
from pi_plugins import app_messages, budget, compaction, local_environment, retries, settle_boundary
from pi_core.testing import Reply, ScriptedProvider, scripted_model

from support.agents import Recorder

SUMMARY = "## Goal\nKeep going.\n\n## Progress\n### Done\n- [x] earlier steps"
BIG = "line of tool output\n" * 100  # about 500 tokens


def summarise_requests(context):
    """Answer every summarisation request with a fixed summary (not from the script)."""
    last = context.messages[-1] if context.messages else None
    if last is not None and "<conversation>" in text_of(last.content):
        return Reply(text=SUMMARY)
    return None


@tool(parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
def dump(args, run):
    """Print a lot."""
    return f"dump {args['n']}\n{BIG}"


class Lifecycle:
    """Records the lifecycle events only plugins see (not the event stream)."""

    def __init__(self):
        self.seen = []

    @hookimpl
    def session_start(self, event):
        self.seen.append(event)

    @hookimpl
    def session_tree(self, event):
        self.seen.append(event)


def make(tmp_path, script, *plugins, settings=None, window=128_000, session=None, router=summarise_requests,
         reasoning=False, discovered=False):
    registry = Plugins()
    provider = ScriptedProvider(script, router=router)
    registry.register(provider, "scripted")
    registry.register(app_messages, "app_messages")
    registry.register(local_environment, "local_environment")
    registry.register(budget, "budget")
    registry.register(compaction, "compaction")
    registry.register(retries, "retries")
    registry.register(settle_boundary, "settle_boundary")
    for plugin in plugins:
        registry.register(plugin)
    session = session or Session.create(tmp_path / "work", tmp_path / "sessions")
    data = {"retry": {"baseDelayMs": 5}, **(settings or {})}
    harness = Harness(plugins=registry, session=session, model=scripted_model(context_window=window, reasoning=reasoning, discovered=discovered),
                            cwd=str(tmp_path), settings=Settings(data), tools=[dump])
    events = Recorder()
    harness.subscribe(events)
    return harness, provider, events


def lines(session):
    return [json.loads(line) for line in session.file.read_text().splitlines()]


