"""pi's own ``RpcClient`` (exported by its npm package) drives ``pi --mode rpc`` through
every public method; the real pi and pi-harness must give it the same results."""

import json

import pytest

from support.llm_server import LlmServer, Reply
from support.programs import REAL_PI
from support.cli import trust_project
from support.real_clients import NODE_SCRIPTS, PiHome

pytestmark = [pytest.mark.requires("pi"), pytest.mark.process]

MODELS = [{"id": "test-model", "reasoning": True, "contextWindow": 128000},
          {"id": "other-model", "contextWindow": 64000}]
SLOW = dict(delta_size=4, delay=0.03)


def script(server: LlmServer) -> None:
    """The answers, in the order the scenario's steps ask for them."""
    server.push(
        Reply(text="Hi there."),                                              # promptAndWait
        Reply(text="Running.", tool_calls=[("bash", {"command": "echo tool-output"})]),
        Reply(text="Ran it."),
        Reply(text="First part of a slow answer. " * 3, **SLOW),              # followUp
        Reply(text="Follow-up answer."),
        Reply(text="Second slow answer goes on. " * 3, **SLOW),               # steer
        Reply(text="Steered answer."),
        Reply(text="word " * 400, delta_size=5, delay=0.02),                  # abort
    )
    server.default = Reply(text="## Goal\nScenario summary.")                 # compaction


def without_pi16_commands(results: dict) -> dict:
    """pi 1.6's built-in /mcp is ours too; pi 0.73.1 has none: compared with 0.73.1 without it."""
    commands = results.get("getCommands", {})
    if "ok" in commands:
        commands["ok"] = [c for c in commands["ok"] if not (
            c.startswith("extension:mcp:") if isinstance(c, str) else c.get("name") == "mcp")]
    return results


#: pi 0.73.1 has no session ``system`` messages (pi 1.6's, ours): compared with it, ours runs
#: without them (the pi 1.6 scenario below keeps them, as 1.6 has them)
WITHOUT_SYSTEM_MESSAGES = {"extensions": ["-builtin:system_messages"]}


def run_scenario(tmp_path, which: str, mode: str) -> dict:
    with LlmServer() as server:
        home = PiHome(tmp_path / which, server, which, models=MODELS,
                      configured=mode != "no-model",
                      settings={"retry": {"baseDelayMs": 10}, "compaction": {"keepRecentTokens": 5},
                                **(WITHOUT_SYSTEM_MESSAGES if which == "ours" else {})})
        if mode != "no-model":
            script(server)
            prompts = home.cwd / ".pi" / "prompts"
            prompts.mkdir(parents=True)
            (prompts / "review.md").write_text("---\ndescription: Review the code\n---\nReview $1\n")
            skill = home.cwd / ".pi" / "skills" / "tidy"
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy the workspace\n---\nTidy up.\n")
            trust_project(home.agent_dir, home.cwd)  # pi 0.73.1 has no project trust: trusted here
        out = home.node("rpc_client_scenario.mjs", str(REAL_PI), str(NODE_SCRIPTS / "pi_from_path.mjs"),
                        str(home.cwd), mode)
        assert out.returncode == 0, f"{which}: {out.stderr[-3000:]}"
        return json.loads(out.stdout.strip().splitlines()[-1])


def test_rpc_client_gets_the_same_results_from_pi_harness_as_from_the_real_pi(tmp_path):
    real = run_scenario(tmp_path, "real", "full")
    ours = without_pi16_commands(run_scenario(tmp_path, "ours", "full"))
    assert "error" not in real["promptAndWait"], real  # the scenario itself works with pi
    # pi 1.6 counts the whole session file in get_session_stats, as we do; 0.73.1 counted
    # the context, which after a compaction is shorter: the one step where the pis differ
    real_after, ours_after = real.pop("statsAfterCompact")["ok"], ours.pop("statsAfterCompact")["ok"]
    assert ours_after["tokens"] == real_after["tokens"]
    assert ours_after["totalMessages"] > real_after["totalMessages"]
    differing = {step: {"real": real[step], "ours": ours.get(step)}
                 for step in real if real[step] != ours.get(step)}
    assert differing == {}
    assert set(ours) == set(real)


def test_rpc_client_without_a_model_gets_the_same_answers(tmp_path):
    real = run_scenario(tmp_path, "real", "no-model")
    ours = without_pi16_commands(run_scenario(tmp_path, "ours", "no-model"))
    assert real["getAvailableModels"] == {"ok": []}
    # RpcClient.prompt does not look at the response: the refusal (tested on the wire in
    # test_pi_differences) reaches it as a resolved promise, from both
    assert real["prompt"] == {}
    differing = {step: {"real": real[step], "ours": ours.get(step)}
                 for step in real if real[step] != ours.get(step)}
    assert differing == {}


# ---------------------------------------------------------------- pi 1.6.0 and its RpcClient


def script16(server: LlmServer) -> None:
    server.push(
        Reply(text="Hi there."),                                              # promptDisposition
        Reply(text="Running.", tool_calls=[("bash", {"command": "echo tool-output"})]),
        Reply(text="Ran it."),
        Reply(text="Once more."),                                             # waitForIdle
        Reply(text="word " * 400, delta_size=5, delay=0.02),                  # queueAndClear (aborted)
        Reply(text="Second slow answer goes on. " * 3, **SLOW),               # promptStreamingBehavior
        Reply(text="Queued by prompt."),
    )
    server.default = Reply(text="## Goal\nScenario summary.")                 # compaction


def run_scenario16(tmp_path, which: str) -> dict:
    from support.programs import NODE22, PI16, require_real

    require_real("pi16")
    with LlmServer() as server:
        home = PiHome(tmp_path / which, server, which, models=MODELS,
                      settings={"retry": {"baseDelayMs": 10}, "compaction": {"keepRecentTokens": 5}})
        script16(server)
        out = home.node("rpc_client16_scenario.mjs", str(PI16), str(NODE_SCRIPTS / "pi_from_path.mjs"),
                        str(home.cwd), node=str(NODE22))
        assert out.returncode == 0, f"{which}: {out.stderr[-3000:]}"
        return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.requires("pi16")
def test_pi16s_rpc_client_gets_the_same_results_from_pi_harness_as_from_pi16(tmp_path):
    real = run_scenario16(tmp_path, "real16")
    ours = run_scenario16(tmp_path, "ours")
    assert "error" not in real["promptDisposition"], real  # the scenario itself works with pi 1.6
    # pi 1.6 bundles /llama (llama.cpp's router), which pi-harness has not; /mcp both have
    real["getCommands"]["ok"] = [c for c in real["getCommands"]["ok"] if c != "extension:llama"]
    differing = {step: {"real": real[step], "ours": ours.get(step)}
                 for step in real if real[step] != ours.get(step)}
    assert differing == {}
    assert set(ours) == set(real)
