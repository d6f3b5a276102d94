"""Keys stay out of the model's reach (issue 31): with keys in the environment under
each kind of name, in auth.json and given with ``--api-key``, what the model runs
through the bash tool (``env``, ``printenv NAME``, ``cat auth.json``, a key echoed in an
error) and reads gives none back: not in the tool result, the session file, the request
bodies or the HTML export."""

import json

import pytest

from support.cli import use_environment
from support.llm_server import Reply
from support.rpc import InProcessPi, rpc_starter, write_settings

#: A key under each kind of name: the provider's variable, a variable models.json names
#: as the key (no pattern matches it), and the patterns' *TOKEN*, *SECRET*, *PASSWORD*.
KEYS = {
    "OPENAI_API_KEY": "sk-openai-0123456789abcdef",
    "LOCAL_LLM_CRED": "cred-local-9876543210",
    "MY_SERVICE_TOKEN": "tok-service-5555aaaa",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-7777bbbb",
    "DB_PASSWORD": "hunter2-but-longer",
}
AUTH_KEY = "sk-ant-from-auth-json-424242"
FLAG_KEY = "sk-given-on-the-command-line-1"
SECRETS = [*KEYS.values(), AUTH_KEY, FLAG_KEY]


@pytest.fixture
def start_pi(pi, server, monkeypatch):
    models = server.models_json("local", apiKey="LOCAL_LLM_CRED")
    (pi.agent_dir / "models.json").write_text(json.dumps(models))
    (pi.agent_dir / "auth.json").write_text(json.dumps({"anthropic": {"type": "api_key", "key": AUTH_KEY}}))
    (pi.cwd / "notes.txt").write_text(f"the flag's key is {FLAG_KEY}\n")
    use_environment(monkeypatch, {**pi.env, **KEYS, "PLAIN_SETTING": "visible-value"}, pi.cwd)
    with rpc_starter(lambda *args: InProcessPi(*pi.flags("--api-key", FLAG_KEY, *args))) as start:
        yield start


def bash(command):
    return ("bash", {"command": command})


def run_tools(rpc, server, *calls):
    server.push(Reply(tool_calls=list(calls)), Reply(text="done"))
    rpc.ok("prompt", message="look around")
    end = rpc.event("agent_end")
    return {m["toolCallId"]: m for m in end["messages"] if m["role"] == "toolResult"}, end


def text(result):
    return "".join(part.get("text", "") for part in result["content"])


def test_no_key_reaches_the_tool_result_the_session_the_requests_or_the_export(start_pi, server, pi, tmp_path):
    rpc = start_pi()
    results, end = run_tools(
        rpc, server,
        bash("env"),
        bash("printenv LOCAL_LLM_CRED OPENAI_API_KEY MY_SERVICE_TOKEN; echo status $?"),
        bash(f"cat {pi.agent_dir}/auth.json"),
        bash(f"cat notes.txt {pi.agent_dir}/auth.json >&2; exit 3"),  # a key echoed in an error
        ("read", {"path": str(pi.agent_dir / "auth.json")}),
    )
    env_out, printenv_out, cat_out, error_out, read_out = (text(r) for r in results.values())
    assert "PLAIN_SETTING=visible-value" in env_out and "PI_CODING_AGENT_DIR=" in env_out
    for name in KEYS:
        assert f"{name}=" not in env_out  # left out of the command's environment
    assert printenv_out.strip() == "status 1"
    assert "[redacted: anthropic]" in cat_out and "[redacted: anthropic]" in read_out
    assert "[redacted: local]" in error_out and "exited with code 3" in error_out

    everything = json.dumps(rpc.events())
    [session] = pi.sessions()
    from pi_plugins.export_html import export_html

    page = export_html(session, tmp_path / "export.html").read_text(encoding="utf-8")
    bodies = b"".join(request.raw for request in server.requests).decode()
    for where, seen in [("rpc events", everything), ("session", session.read_text()),
                        ("request bodies", bodies), ("export", page)]:
        for secret in SECRETS:
            assert secret not in seen, f"{secret} reached the {where}"
    assert "[redacted: anthropic]" in page


def test_include_brings_one_variable_back_and_its_value_is_still_redacted(start_pi, server, pi):
    write_settings(pi, toolEnvironment={"include": ["my_service_*"]})  # names match in any case
    rpc = start_pi()
    results, _ = run_tools(rpc, server, bash('echo "length ${#MY_SERVICE_TOKEN}"; printenv MY_SERVICE_TOKEN'),
                           bash("env | cut -d= -f1 | sort"))
    shown, names = (text(r) for r in results.values())
    assert shown == f"length {len(KEYS['MY_SERVICE_TOKEN'])}\n[redacted: MY_SERVICE_TOKEN]\n"
    present = set(names.split())
    assert "MY_SERVICE_TOKEN" in present
    assert not present & (set(KEYS) - {"MY_SERVICE_TOKEN"})


def test_exclude_leaves_out_more_variables(start_pi, server, pi):
    write_settings(pi, toolEnvironment={"exclude": ["PLAIN_*"]})
    rpc = start_pi()
    results, _ = run_tools(rpc, server, bash("env | cut -d= -f1"))
    names = set(text(next(iter(results.values()))).split())
    assert "PLAIN_SETTING" not in names and "PATH" in names


def test_a_bad_tool_environment_setting_is_named_and_brings_nothing_back(start_pi, server, pi):
    write_settings(pi, toolEnvironment={"include": "MY_SERVICE_TOKEN"})
    rpc = start_pi()
    results, _ = run_tools(rpc, server, bash("env | cut -d= -f1"))
    assert "MY_SERVICE_TOKEN" not in text(next(iter(results.values()))).split()
    assert '"toolEnvironment.include" must be a list' in rpc.stderr


def test_the_users_own_command_gets_no_key_and_shows_none(start_pi, server, pi):
    rpc = start_pi()
    result = rpc.ok("bash", command=f"env; cat notes.txt {pi.agent_dir}/auth.json")
    assert "PLAIN_SETTING=visible-value" in result["output"]
    assert "[redacted: local]" in result["output"] and "[redacted: anthropic]" in result["output"]
    server.push(Reply(text="seen"))
    rpc.ok("prompt", message="what did it print?")
    rpc.event("agent_end")
    [session] = pi.sessions()
    for seen in (json.dumps(result), session.read_text(), server.requests[0].raw.decode()):
        for secret in SECRETS:
            assert secret not in seen
