"""Spend limits (--max-cost, --max-tokens, --max-turns; settings ``budget``): pi run
in-process against the scripted LLM server, whose every reply uses 10 input and 5 output
tokens; the test model costs $1000 / $2000 per million, so each request costs $0.02."""

import asyncio
import io
import json

import pytest

from support.cli import parse_run_args, use_environment
from support.llm_server import Reply

PRICED = {"id": "test-model", "cost": {"input": 1000, "output": 2000, "cacheRead": 0, "cacheWrite": 0}}


class _Stdin(io.StringIO):
    def isatty(self) -> bool:
        return False


@pytest.fixture
def run_pi(pi, server, monkeypatch, capsys):
    """Run ``pi`` in this process; returns (exit code, stdout, stderr)."""
    use_environment(monkeypatch, pi.env, pi.cwd)

    def priced(models=(PRICED,)):
        (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", models=list(models))))

    def run(*flags):
        from pi_plugins.cli.main import _run

        capsys.readouterr()
        stdout = io.StringIO()
        code = asyncio.run(_run(parse_run_args(*pi.flags(*flags)), stdin=_Stdin(""), stdout=stdout))
        return code, stdout.getvalue(), capsys.readouterr().err

    priced()
    run.priced = priced
    return run


def _tool_turns(n):
    return [Reply(text="Looking.", tool_calls=[("ls", {"path": "."})]) for _ in range(n)] + [Reply(text="Done.")]


def _entries(pi):
    [session] = pi.sessions()
    return [json.loads(line) for line in session.read_text().splitlines()]


def test_max_cost_stops_the_run_before_the_first_request_past_the_limit(run_pi, pi, server):
    server.push(*_tool_turns(3))
    code, out, err = run_pi("--max-cost", "0.03", "-p", "look around")
    assert len(server.requests) == 2  # $0.02 spent after one, $0.04 after two: no third
    assert code == 3
    assert err.splitlines()[-1].startswith("budget reached: cost 0.04 of 0.03")
    last = _entries(pi)[-1]
    assert last["type"] == "custom" and last["customType"] == "budget_exceeded"
    assert last["data"]["limit"] == "cost" and last["data"]["max"] == 0.03


def test_json_mode_gets_budget_exceeded_then_agent_end(run_pi, server):
    server.push(*_tool_turns(3))
    code, out, _ = run_pi("--max-turns", "1", "--mode", "json", "look around")
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(server.requests) == 1
    assert lines[-3] == {"type": "budget_exceeded", "limit": "turns", "spent": 1, "max": 1}
    assert [line["type"] for line in lines[-2:]] == ["agent_end", "agent_settled"]


def test_max_tokens_counts_input_plus_output(run_pi, server):
    server.push(*_tool_turns(3))
    code, _, err = run_pi("--max-tokens", "30", "-p", "look around")
    assert code == 3 and len(server.requests) == 2  # 15 tokens a request: 30 after two
    assert "budget reached: tokens 30 of 30" in err


def test_a_resumed_session_starts_from_what_it_has_spent(run_pi, server):
    server.push(Reply(text="First."), Reply(text="Second."))
    assert run_pi("-p", "one")[0] == 0  # no limit: $0.02 spent
    code, _, err = run_pi("-c", "--max-cost", "0.02", "-p", "two")
    assert code == 3 and len(server.requests) == 1
    assert "budget reached: cost 0.02 of 0.02" in err


def test_the_settings_budget_applies_and_a_flag_overrides_it(run_pi, pi, server):
    (pi.cwd / ".pi").mkdir()
    (pi.cwd / ".pi" / "settings.json").write_text(json.dumps({"budget": {"maxTurns": 1}}))
    pi.trust_project()  # a project's settings apply once it is trusted
    server.push(*_tool_turns(3))
    assert run_pi("-p", "look")[0] == 3 and len(server.requests) == 1
    server.requests.clear()
    server.replies.clear()
    server.push(*_tool_turns(1))
    code, out, _ = run_pi("--no-session", "--max-turns", "5", "-p", "look")
    assert code == 0 and out == "Done.\n" and len(server.requests) == 2


def test_a_model_without_prices_counts_tokens_only_and_says_so_once(run_pi, server):
    run_pi.priced(({"id": "test-model"},))
    server.push(*_tool_turns(3))
    code, out, err = run_pi("--max-cost", "0.01", "--max-tokens", "45", "-p", "look")
    assert code == 3 and len(server.requests) == 3
    assert err.count("has no prices") == 1
    assert "budget reached: tokens 45 of 45" in err


def test_without_a_budget_nothing_changes(run_pi, pi, server):
    server.push(*_tool_turns(2))
    code, out, _ = run_pi("-p", "look")
    assert code == 0 and out == "Done.\n" and len(server.requests) == 3
    assert not [e for e in _entries(pi) if e["type"] == "custom"]


@pytest.mark.parametrize("flag, value, said", [
    ("--max-cost", "-1", "--max-cost: must be a number of at least 0"),
    ("--max-tokens", "lots", "--max-tokens: not a number"),
    ("--max-turns", "1.5", "--max-turns: must be a whole number"),
])
def test_a_bad_limit_is_a_clear_error(run_pi, server, flag, value, said):
    code, _, err = run_pi(flag, value, "-p", "hi")
    assert code == 2 and said in err and not server.requests


def test_a_bad_limit_in_settings_is_a_clear_error(run_pi, pi, server):
    (pi.cwd / ".pi").mkdir()
    (pi.cwd / ".pi" / "settings.json").write_text(json.dumps({"budget": {"maxCostUsd": "ten"}}))
    pi.trust_project()
    code, _, err = run_pi("-p", "hi")
    assert code == 2 and "settings budget.maxCostUsd: not a number" in err and not server.requests


def test_a_forked_session_starts_from_what_its_path_has_spent(run_pi, pi, server):
    server.push(Reply(text="First."), Reply(text="Second."), Reply(text="Third."))
    assert run_pi("-p", "one")[0] == 0
    assert run_pi("-c", "-p", "two")[0] == 0  # $0.04 spent on this path
    [original] = pi.sessions()
    code, _, err = run_pi("--fork", str(original), "--max-cost", "0.04", "-p", "three")
    assert code == 3 and len(server.requests) == 2
    assert "budget reached: cost 0.04 of 0.04" in err
