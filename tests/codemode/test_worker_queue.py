"""pi 1.6's codemode worker queue: at most ``PI_CODEMODE_MAX_WORKERS`` scripts run at once
in one process; the ones beyond wait for a worker in turn, and all of them run."""

from __future__ import annotations

import asyncio

import pytest
from support.codemode_scripts import output_of

import pi_plugins.codemode as codemode
from pi_core import ToolResultMessage, tool
from pi_core.testing.harness import HarnessMaker
from pi_core.testing.scripted import Reply

pytestmark = pytest.mark.process

CAP = 3  # not the default (2), so the setting is what holds them
SCRIPTS = 5


def test_scripts_beyond_the_worker_count_wait_their_turn_and_all_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODEMODE_MAX_WORKERS", str(CAP))
    running: set[int] = set()
    peak = [0]
    cap_reached, one_too_many, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    @tool(parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    async def hold(args, run):
        """Stay busy until the test has seen the cap's worth of scripts running and no more."""
        running.add(args["n"])
        peak[0] = max(peak[0], len(running))
        if len(running) == CAP:
            cap_reached.set()
        if len(running) > CAP:
            one_too_many.set()
        await asyncio.wait_for(release.wait(), 60)
        running.discard(args["n"])
        return f"script {args['n']}"

    async def scenario():
        make = HarnessMaker(tmp_path)
        calls = [("codemode", {"code": f"return await tools.hold({{n: {n}}})"}) for n in range(SCRIPTS)]
        harness = await make(codemode, script=[Reply(tool_calls=calls), Reply(text="done")],
                             tools=[hold, codemode.TOOL])
        harness.agent.set_active_tools(["hold", "codemode"])
        prompt = asyncio.ensure_future(harness.prompt("go"))
        await asyncio.wait_for(cap_reached.wait(), 60)
        # The cap's scripts hold their workers; one more script only starts if the queue leaks.
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(one_too_many.wait(), 1.5)
        release.set()
        return [m for m in await prompt if isinstance(m, ToolResultMessage)]

    found = asyncio.run(scenario())
    texts = [m.content[0].text for m in found]
    assert [output_of(text) for text in texts] == [f"Output:\n\nscript {n}" for n in range(SCRIPTS)]
    assert peak[0] == CAP
