"""settings.json keys pi 1.6 added, side by side with the real pi 1.6 where a run shows
them: ``$schema`` and ``enableAnalytics`` are accepted without a word, and nothing but the
model's request leaves either program."""

import json

import pytest
from support.cli import pi16
from support.llm_server import Reply

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def test_schema_and_enable_analytics_are_accepted_quietly_and_send_nothing(pi, server):
    models = server.models_json("local", apiKey="test-key")  # pi 1.6 wants a key
    (pi.agent_dir / "models.json").write_text(json.dumps(models))
    settings = {"$schema": "https://pi.dev/schemas/settings.schema.json", "enableAnalytics": True}
    (pi.agent_dir / "settings.json").write_text(json.dumps(settings))
    server.push(Reply(text="answered"), Reply(text="answered"))
    theirs = pi16(pi, "-p", "hi")
    ours = pi.run("-p", "hi")
    assert theirs.returncode == ours.returncode == 0, (theirs.stderr, ours.stderr)
    assert ours.stdout == theirs.stdout == "answered\n"
    assert ours.stderr == ""
    assert len(server.requests) == 2  # one each: the model's request, nothing else


def test_model_thinking_levels_set_the_start_level_per_model_as_pi16_does(pi, server):
    models = server.models_json("local", apiKey="test-key", models=[
        {"id": "deep", "reasoning": True}, {"id": "plain", "reasoning": True}])
    (pi.agent_dir / "models.json").write_text(json.dumps(models))
    settings = {"defaultThinkingLevel": "low", "modelThinkingLevels": {"local/deep": "high"}}
    (pi.agent_dir / "settings.json").write_text(json.dumps(settings))
    efforts = {}
    for model in ("local/deep", "local/plain"):
        for who, run in (("pi16", pi16), ("ours", lambda r, *a: r.run(*a))):
            server.push(Reply(text="ok"))
            done = run(pi, "--model", model, "--no-session", "-p", "hi")
            assert done.returncode == 0, (who, done.stderr)
            efforts[model, who] = server.requests[-1].body.get("reasoning_effort")
    assert efforts == {("local/deep", "pi16"): "high", ("local/deep", "ours"): "high",
                       ("local/plain", "pi16"): "low", ("local/plain", "ours"): "low"}
