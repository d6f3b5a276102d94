"""pi 1.6's ``usage.cost.totalFromProvider`` on every priced answer: false where the
total comes from the catalogue's prices, true where OpenRouter's bill replaces it (its
``cost``, plus the upstream cost on the user's own key). The JSON stream's usage is
compared with the real pi 1.6's on the same scripted answer."""

import json
import subprocess

import pytest

from pi_core.protocol.model import Model, ModelCost
from pi_plugins.providers.completions_usage import parse_usage
from support.llm_server import Reply

ROUTER = Model(id="x/y", provider="openrouter", api="openai-completions", base_url="https://openrouter.ai/api/v1",
               cost=ModelCost(input=1, output=2))
RAW = {"prompt_tokens": 1000, "completion_tokens": 500}


@pytest.mark.parametrize("reported,total,from_provider", [
    ({}, 0.002, False),
    ({"cost": 0.5, "is_byok": False}, 0.5, True),
    ({"cost": 0.1, "is_byok": True, "cost_details": {"upstream_inference_cost": 0.4}}, 0.5, True),
    ({"cost": 0.1, "is_byok": True, "cost_details": {"upstream_inference_cost": None,
                                                     "upstream_inference_prompt_cost": 0.2,
                                                     "upstream_inference_completions_cost": 0.3}}, 0.6, True),
    ({"cost": 0.1, "is_byok": True}, 0.002, False),  # incomplete accounting: the catalogue's prices
    ({"cost": -1, "is_byok": False}, 0.002, False),
], ids=["priced", "billed", "byok", "byok-split", "byok-incomplete", "invalid"])
def test_openrouters_bill_replaces_the_priced_total_only_when_complete(reported, total, from_provider):
    cost = parse_usage({**RAW, **reported}, ROUTER).cost
    assert cost.total == pytest.approx(total)
    assert cost.extra["totalFromProvider"] is from_provider


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_an_answers_usage_in_json_mode_has_pi16s_fields(pi, server):
    from support.programs import node_for, require_real

    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    usages = {}
    for who in ("pi16", "ours"):
        server.push(Reply(text="ok"))
        command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")] if who == "pi16"
                   else pi.command()[:3])
        done = subprocess.run([*command, *pi.flags("--mode", "json", "--no-session", "-p", "hi")], cwd=pi.cwd,
                              env={**pi.env, "PI_OFFLINE": "1"}, capture_output=True, text=True, timeout=120)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        [usages[who]] = [e["message"]["usage"] for e in events
                         if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert list(usages["ours"]["cost"]) == list(usages["pi16"]["cost"])
    assert usages["ours"]["cost"]["totalFromProvider"] is usages["pi16"]["cost"]["totalFromProvider"] is False
    assert list(usages["ours"]) == list(usages["pi16"])
