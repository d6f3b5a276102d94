"""The composition API and its documented example."""

import subprocess
import sys
from pathlib import Path

import pytest

from pi_plugins.sdk import create_harness
from pi_core.session import Session
from pi_core.testing import Reply, ScriptedProvider, scripted_model

from support.agents import run

ROOT = Path(__file__).parents[2]


@pytest.mark.process
def test_the_documented_composition_example_runs_and_answers():
    out = subprocess.run([sys.executable, str(ROOT / "docs" / "examples" / "compose.py")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[weather] It is sunny in Lisbon.",
                                       "Good news: it is sunny in Lisbon today."]


def test_a_composed_agent_keeps_its_session_in_memory_and_can_steer(tmp_path):
    provider = ScriptedProvider([Reply(text="one"), Reply(text="two")])

    async def scenario():
        harness = await create_harness(provider, model=scripted_model(), cwd=str(tmp_path))
        steered = []
        harness.subscribe(lambda e: e.type == "message_update" and not steered and (
            steered.append(1) or harness.steer("and more")))
        await harness.prompt("hi")
        return harness

    harness = run(scenario())
    assert [m.role for m in harness.messages] == ["user", "assistant", "user", "assistant"]
    assert harness.session.file is None and len(harness.session.path()) >= 4
    assert list(tmp_path.iterdir()) == []


def test_a_new_file_session_given_to_create_harness_is_the_one_it_uses(tmp_path):
    session = Session.create(tmp_path / "work", tmp_path / "sessions")  # empty, so falsy

    async def scenario():
        harness = await create_harness(ScriptedProvider([Reply(text="hi")]), model=scripted_model(),
                                       session=session, cwd=str(tmp_path))
        await harness.prompt("hello")
        return harness

    harness = run(scenario())
    assert harness.session is session and session.file.exists()


def test_a_composed_agents_plugins_register_and_unregister_providers_as_in_pi(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))

    async def scenario():
        harness = await create_harness(model="anthropic/claude-sonnet-4-5", builtins=True, cwd=str(tmp_path))
        try:
            ctx = harness.ctx
            ctx.register_provider("anthropic", {"base_url": "http://127.0.0.1:9"})
            assert harness.model_registry.find("anthropic", "claude-sonnet-4-5").base_url == "http://127.0.0.1:9"
            assert ctx.unregister_provider("anthropic") is True
            assert harness.model_registry.find("anthropic", "claude-sonnet-4-5").base_url == "https://api.anthropic.com"
        finally:
            await harness.close()

    run(scenario())
