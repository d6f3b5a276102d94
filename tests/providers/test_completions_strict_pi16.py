"""pi 1.6's ``strict`` on Chat Completions function tools, side by side: an OpenAI-compatible
server is not taken to support strict mode (no ``strict`` field at all) unless the model's
``compat.supportsStrictMode`` says so; then pi's tools that ask for constrained arguments
(read, bash, edit, write) go with a strict schema and ``strict: true``, the rest with
``strict: false``. Mistral (``mistral-conversations``) says ``strict: false`` on every tool
unless its compat opts in, the same way (pi 1.6: strict tools stalled Mistral Large 4)."""

import json
import subprocess

import pytest
from support.llm_server import COMPLETIONS, MISTRAL, Reply


def _tools(who: str, runner, server) -> list[dict]:
    from support.programs import node_for, require_real

    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")] if who == "pi16"
               else runner.command()[:3])
    server.push(Reply(text="ok"))
    done = subprocess.run([*command, *runner.flags("--no-session", "--tools", "read,bash,edit,write,grep,ls",
                                                   "-p", "hi")],
                          cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return [t["function"] for t in server.requests[-1].body["tools"]]


def _declared(tools: list[dict]) -> list[tuple]:
    return sorted((t["name"], t.get("strict", "absent")) for t in tools)


@pytest.mark.process
@pytest.mark.requires("pi16")
@pytest.mark.parametrize("compat", [None, {"supportsStrictMode": True}, {"supportsStrictMode": False}],
                         ids=["unknown-server", "strict", "not-strict"])
@pytest.mark.parametrize("api", [COMPLETIONS, MISTRAL])
def test_function_tools_say_strict_by_pi16s_rule(pi, server, compat, api):
    model = {"id": "test-model", **({"compat": compat} if compat else {})}
    (pi.agent_dir / "models.json").write_text(json.dumps(
        server.models_json("local", api, models=[model], apiKey="test-key")))
    theirs, ours = _tools("pi16", pi, server), _tools("ours", pi, server)
    assert _declared(ours) == _declared(theirs)
    if compat and compat["supportsStrictMode"]:
        assert dict(_declared(ours)) == {"read": True, "bash": True, "edit": True, "write": True,
                                         "grep": False, "ls": False}
        for tool in ours:
            if tool["strict"]:  # every property required, nothing else allowed
                assert tool["parameters"]["required"] == list(tool["parameters"]["properties"])
                assert tool["parameters"]["additionalProperties"] is False
    elif api == MISTRAL:
        assert all(t["strict"] is False for t in ours)
    else:
        assert all("strict" not in t for t in ours)
