"""A third-party plugin package (tests/plugin_author/author_kit, installed as a wheel)
relies on every documented promise of the plugin API, through ``pi -p``, ``--mode json``
and ``--mode rpc``."""

import json

import pytest

from support.rpc import RpcClient

pytestmark = pytest.mark.process

SNIPPET = " [snippet]"


def _kinds(kit):
    return [r["kind"] for r in kit.seen()]


# ---------------------------------------------------------------- pi -p


def test_a_keyless_small_model_answers_without_compacting_and_resources_come_at_start_up(kit):
    out = kit.pi("-p", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "echo: hi" + SNIPPET + "\n"  # the tool's prompt snippet reached the model
    [session] = kit.sessions()
    kinds = [json.loads(l)["type"] for l in session.read_text().splitlines()]
    assert "compaction" not in kinds  # 8192 tokens < reserveTokens: no summary of nothing
    seen = _kinds(kit)
    assert seen.index("session_start") < seen.index("resources_discover") < seen.index("input")
    assert kit.seen("resources_discover")[0]["reason"] == "startup"
    assert kit.seen("session_shutdown")[-1]["reason"] == "quit"


def test_list_models_shows_the_keyless_in_process_model(kit):
    out = kit.pi("--list-models", "echo", model=False)
    assert out.returncode == 0, out.stderr
    assert "author-echo" in out.stdout and "echo-small" in out.stdout


def test_plugin_flags_are_read_with_get_flag_and_unknown_ones_still_refused(kit):
    out = kit.pi("--author-greeting", "hello there", "-p", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "echo: hi [hello there]" + SNIPPET + "\n"
    assert kit.seen("session_start")[0]["greeting"] == "hello there"
    bad = kit.pi("--no-such-flag", "-p", "hi")
    assert bad.returncode == 2 and "No such option: --no-such-flag" in bad.stderr
    assert "--author-greeting" in bad.stderr  # the plugin flags are named


def test_a_wrong_role_replacement_keeps_the_answer_and_names_the_plugin(kit):
    out = kit.pi("--author-wrong-role", "-p", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "echo: hi" + SNIPPET + "\n"
    [session] = kit.sessions()
    last = json.loads(session.read_text().splitlines()[-1])
    assert last["message"]["role"] == "assistant"
    assert "'author'" in out.stderr and "message_end" in out.stderr
    assert "agent loop" not in out.stderr


def test_a_plugins_mode_is_selected_by_name_and_an_unknown_one_lists_the_modes(kit):
    out = kit.pi("--mode", "author", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[author mode] echo: hi" + SNIPPET + "\n"
    bad = kit.pi("--mode", "nosuch", "hi")
    assert bad.returncode == 2 and "author" in bad.stderr and "json" in bad.stderr


def test_send_user_message_while_idle_starts_a_run_with_source_extension(kit):
    out = kit.pi("-p", "/kickoff from the plugin")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "echo: from the plugin" + SNIPPET + "\n"
    assert {"kind": "input", "text": "from the plugin", "source": "extension"} in kit.seen("input")


# ---------------------------------------------------------------- --mode json


def test_json_mode_next_turn_message_follows_the_next_prompt_and_turns_are_counted(kit):
    out = kit.pi("--mode", "json", "/later extra context", "use author_time")
    assert out.returncode == 0, out.stderr
    events = [json.loads(l) for l in out.stdout.splitlines()]
    ends = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "user"]
    texts = [c["text"] for e in ends for c in e["message"]["content"] if c["type"] == "text"]
    assert texts == ["use author_time", "extra context"]  # after the prompt's user message
    assert all("turnIndex" not in e for e in events if e["type"].startswith("turn_"))  # pi's shape
    assert [r["turn_index"] for r in kit.seen("turn_start")] == [0, 1]  # a tool call: two turns
    answer = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert answer["content"][0]["text"] == "echo: the tool said It is noon in Tallinn."


def test_json_mode_a_plugin_message_can_trigger_a_turn(kit):
    out = kit.pi("--mode", "json", "/note look at this")
    assert out.returncode == 0, out.stderr
    events = [json.loads(l) for l in out.stdout.splitlines()]
    roles = [e["message"]["role"] for e in events if e["type"] == "message_end"]
    assert roles == ["system", "custom", "assistant"]  # pi 1.6's leading system message starts any first run


# ---------------------------------------------------------------- --mode rpc


@pytest.fixture
def rpc(kit):
    clients = []

    def start(*args):
        client = RpcClient(kit.popen("--mode", "rpc", *args))
        clients.append(client)
        return client

    yield start
    for client in clients:
        client.close()


def _prompt(client, text):
    mark = client.mark()
    client.ok("prompt", message=text)
    client.wait_for(lambda l: l.get("type") == "agent_end" or (
        l.get("type") == "response" and l.get("command") == "prompt"), after=mark)
    client.ok("get_state")  # answered in order: whatever the command started has begun
    return mark


def _last_text(client):
    return client.ok("get_last_assistant_text")["text"]


def _run(client, text):
    mark = client.mark()
    client.ok("prompt", message=text)
    client.event("agent_end", after=mark)


def test_rpc_lists_and_selects_the_keyless_model(rpc):
    client = rpc()
    models = client.ok("get_available_models")["models"]
    assert any(m["provider"] == "author-echo" and m["id"] == "echo-small" for m in models)
    assert client.ok("set_model", provider="author-echo", modelId="echo-small")["id"] == "echo-small"


def test_rpc_user_bash_dict_result_replaces_the_command(rpc, kit):
    client = rpc()
    marker = kit.cwd / "ran"
    data = client.ok("bash", command=f"remote touch {marker}")
    assert data["output"] == f"ran remotely: touch {marker}" and data["exitCode"] == 0
    assert not marker.exists()


def test_rpc_duplicate_commands_stay_reachable_and_a_sloppy_plugin_keeps_its_good_hook(rpc, kit):
    client = rpc()
    names = [c["name"] for c in client.ok("get_commands")["commands"]]
    assert "dup:1" in names and "dup:2" in names and "dup" not in names
    assert "sloppy-ok" in names
    client.ok("prompt", message="/dup:2")
    client.ok("get_state")
    assert kit.seen("dup") == [{"kind": "dup", "which": 2}]


def test_rpc_tools_registered_and_unregistered_at_run_time(rpc, kit):
    client = rpc()
    _run(client, "use shout")
    assert _last_text(client) == "echo: no tool shout" + SNIPPET
    client.ok("prompt", message="/author-add-tool")
    _run(client, "use shout")
    assert _last_text(client) == "echo: the tool said HEY!"
    client.ok("prompt", message="/author-remove-tool")
    client.ok("get_state")
    assert kit.seen("unregistered") == [{"kind": "unregistered", "found": True}]
    _run(client, "use shout")
    assert _last_text(client) == "echo: no tool shout" + SNIPPET


def test_rpc_compaction_summary_as_a_dict_from_the_events_plan(rpc, kit):
    kit.settings({"compaction": {"keepRecentTokens": 1}})
    client = rpc("--author-notes")
    for i in range(3):
        _run(client, f"question {i}")
    result = client.ok("compact")
    planned = kit.seen("before_compact")[-1]
    assert planned["planned"] and planned["to_summarize"] > 0
    assert result["summary"] == f"author notes on {planned['to_summarize']} messages"


def test_rpc_a_malformed_compaction_result_falls_back_to_the_built_in_summariser(rpc, kit):
    kit.settings({"compaction": {"keepRecentTokens": 1}})
    client = rpc("--author-bad-compact")
    for i in range(3):
        _run(client, f"question {i}")
    result = client.ok("compact")
    assert result["summary"].startswith("## Goal\nSUMMARY from the echo model")
    client.close()
    assert "'author'" in client.stderr and "summery" in client.stderr


def test_rpc_session_control_from_commands_with_reasons_and_positions(rpc, kit):
    client = rpc()
    _run(client, "first")
    _run(client, "second")
    before = client.ok("get_state")["sessionFile"]
    client.ok("prompt", message="/author-tree")
    client.ok("get_state")
    moved = kit.seen("navigate_tree")[-1]
    assert not moved["cancelled"] and moved["leaf"] == moved["target"]
    client.ok("prompt", message="/author-fork")
    forked = client.ok("get_state")["sessionFile"]
    assert forked != before
    assert kit.seen("before_fork")[-1]["position"] == "at"
    assert kit.seen("fork")[-1] == {"kind": "fork", "cancelled": False, "entries": kit.seen("fork")[-1]["entries"]}
    client.ok("prompt", message="/author-new")
    assert client.ok("get_state")["sessionFile"] != forked
    client.ok("prompt", message=f"/author-switch {before}")
    assert client.ok("get_state")["sessionFile"] == before
    client.ok("prompt", message="/author-reload")
    client.ok("get_state")
    reasons = [r["reason"] for r in kit.seen("session_shutdown")]
    assert reasons[:4] == ["fork", "new", "resume", "reload"]
    assert [r["reason"] for r in kit.seen("session_start")][-1] == "reload"
    assert [r["reason"] for r in kit.seen("resources_discover")][-1] == "reload"


# ---------------------------------------------------------------- pi plugins


def test_pi_plugins_reports_each_mistake_by_plugin_and_hook_and_who_won_an_override(kit):
    folder = kit.cwd / ".pi" / "extensions" / "mypkg"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(
        "from pi_core import hookimpl\n\n@hookimpl\ndef turn_start(event):\n    pass\n")
    untrusted = kit.pi("plugins", "--json", model=False)
    assert "mypkg" not in untrusted.stdout and "--approve" in untrusted.stderr
    out = kit.pi("plugins", "--json", "--approve", model=False)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    by_name = {p["name"]: p for p in report["plugins"]}
    assert by_name["author_sloppy"]["hooks"] == ["register_commands"]
    assert by_name["mypkg"]["hooks"] == ["turn_start"]  # a plugin folder loads
    errors = "\n".join(report["errors"])
    assert "author_sloppy" in errors and "'evnt'" in errors and "wrapper" in errors
    assert {"hook": "register_tools", "key": "ls", "winner": "author_twin",
            "replaces": ["tools"]} in report["overrides"]
    text = kit.pi("plugins", model=False)
    assert "ls (register_tools) from author_twin replaces the built-in" in text.stdout
