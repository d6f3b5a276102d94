"""pi -p and pi --mode json, as subprocesses against the scripted LLM server."""

import json

import pytest

from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


def test_print_mode_prints_the_final_answer_and_saves_the_session(pi, server):
    server.push(Reply(text="Hello from the model."))
    out = pi.run("-p", "Say hello")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Hello from the model.\n"
    body = server.requests[0].body
    assert body["messages"][-1]["content"] in ("Say hello", [{"type": "text", "text": "Say hello"}])
    [session] = pi.sessions()
    lines = [json.loads(l) for l in session.read_text().splitlines()]
    kinds = [l["type"] + (":" + l["message"]["role"] if l["type"] == "message" else "") for l in lines]
    assert kinds == ["session", "model_change", "thinking_level_change",  # pi 1.6's system message first
                     "message:system", "message:user", "message:assistant"]


def test_print_mode_runs_tools_and_prints_only_the_last_answer(pi, server):
    (pi.cwd / "notes.txt").write_text("status: draft\n")
    server.push(Reply(text="Reading.", tool_calls=[("read", {"path": "notes.txt"})]),
                Reply(text="It says draft."))
    out = pi.run("-p", "What does notes.txt say?")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "It says draft.\n"
    tool_message = server.requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool" and "status: draft" in json.dumps(tool_message)


def test_print_mode_reports_a_failure_on_stderr_with_a_non_zero_exit(pi, server):
    server.push(Reply(status=401, error="invalid api key"))
    out = pi.run("-p", "hi")
    assert out.returncode == 1
    assert out.stdout == "" and "invalid api key" in out.stderr


def test_piped_stdin_and_file_arguments_become_part_of_the_prompt(pi, server):
    (pi.cwd / "spec.md").write_text("# Spec\nBe brief.\n")
    server.push(Reply(text="ok"))
    out = pi.run("-p", "@spec.md", "Summarise", input="piped context\n")
    assert out.returncode == 0, out.stderr
    sent = json.dumps(server.requests[0].body["messages"][-1])
    assert sent.index("piped context") < sent.index("# Spec") < sent.index("Summarise")
    assert 'file name=\\"' in sent


def test_continue_resumes_the_latest_session(pi, server):
    server.push(Reply(text="The number is 42."), Reply(text="You said 42."))
    assert pi.run("-p", "Remember 42").returncode == 0
    out = pi.run("-c", "-p", "What number?")
    assert out.returncode == 0, out.stderr
    texts = json.dumps(server.requests[1].body["messages"])
    assert "Remember 42" in texts and "The number is 42." in texts
    assert len(pi.sessions()) == 1


def test_json_mode_prints_the_header_then_one_event_per_line(pi, server):
    server.push(Reply(text="Hello there, friend.", delta_size=3))
    out = pi.run("--mode", "json", "hi")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(l) for l in out.stdout.splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    kinds = [l["type"] for l in lines[1:]]
    assert kinds[:2] == ["agent_start", "turn_start"] and kinds[-2:] == ["agent_end", "agent_settled"]
    updates = [l for l in lines if l["type"] == "message_update"]
    deltas = [u["assistantMessageEvent"]["delta"] for u in updates
              if u["assistantMessageEvent"]["type"] == "text_delta"]
    assert "".join(deltas) == "Hello there, friend."
    assert all("message" not in u and "partial" not in u["assistantMessageEvent"] for u in updates)
    end = [l for l in lines if l["type"] == "message_end"][-1]["message"]
    assert end["role"] == "assistant" and end["content"] == [{"type": "text", "text": "Hello there, friend."}]


def test_json_output_grows_linearly_and_full_events_give_pis_snapshots(pi, server):
    answer = "word " * 2000
    server.push(Reply(text=answer, delta_size=5), Reply(text=answer, delta_size=5))
    lean = pi.run("--mode", "json", "--no-session", "talk")
    full = pi.run("--mode", "json", "--events", "full", "--no-session", "talk")
    assert lean.returncode == 0 and full.returncode == 0, lean.stderr + full.stderr
    assert len(lean.stdout) < 80 * len(answer)  # linear: a line per delta, with pi 1.6's usage
    assert len(full.stdout) > 100 * len(answer)  # pi's shape: a snapshot in every update
    update = next(json.loads(l) for l in full.stdout.splitlines()[1:]
                  if json.loads(l)["type"] == "message_update")
    assert update["message"]["role"] == "assistant" and "partial" in update["assistantMessageEvent"]


def test_unknown_model_is_a_clear_usage_error(pi, server):
    out = pi.run("-p", "--model", "nonexistent-provider/nothing", "hi")
    assert out.returncode == 2 and "error:" in out.stderr


def test_help_and_version(pi):
    out = pi.run("--help")
    assert out.returncode == 0 and "Usage: pi [OPTIONS] [@FILES...] [MESSAGES...]" in out.stdout
    assert "--no-session" in out.stdout and "--mode" in out.stdout


def test_models_json_auth_header_reaches_the_server(pi, server):
    doc = server.models_json("local", apiKey="sk-local-secret", authHeader=True)
    (pi.agent_dir / "models.json").write_text(json.dumps(doc))
    server.push(Reply(text="ok"))
    out = pi.run("-p", "hi")
    assert out.returncode == 0, out.stderr
    assert server.requests[0].headers.get("authorization") == "Bearer sk-local-secret"
    for path in pi.sessions():
        assert "sk-local-secret" not in path.read_text()


def test_context_files_skills_and_templates_reach_the_model_through_pi(pi, server):
    (pi.cwd / "AGENTS.md").write_text("Always run make test before you finish.\n")
    skill = pi.agent_dir / "skills" / "release" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: release\ndescription: Cut a release of this project.\n---\nTag, build, publish.\n")
    template = pi.cwd / ".pi" / "prompts" / "fix.md"
    template.parent.mkdir(parents=True)
    template.write_text("---\ndescription: Fix an issue\n---\nFix issue #$1 in $2.\n")
    pi.trust_project()  # the project's templates load once it is trusted
    server.push(Reply(text="fixing"), Reply(text="releasing"))
    assert pi.run("-p", "/fix 42 parser.py").returncode == 0
    assert pi.run("-c", "-p", "/skill:release v1.2").returncode == 0
    first, second = (r.body["messages"] for r in server.requests)
    system = first[0]["content"] if isinstance(first[0]["content"], str) else json.dumps(first[0]["content"])
    assert first[0]["role"] in ("system", "developer")
    assert "Always run make test before you finish." in system
    assert "<name>release</name>" in system and "Cut a release of this project." in system
    assert "Fix issue #42 in parser.py." in json.dumps(first[-1])
    assert "Tag, build, publish." in json.dumps(second[-1]) and "v1.2" in json.dumps(second[-1])


def test_a_session_another_pi_is_writing_is_refused_clearly(pi, server):
    server.push(Reply(text="first"), Reply(text="never"))
    assert pi.run("-p", "hello").returncode == 0
    [path] = pi.sessions()
    from pi_core.session import Session

    holder = Session.open(path)  # this process now writes it
    try:
        out = pi.run("--session", str(path), "-p", "again")
    finally:
        holder.close()
    assert out.returncode == 2 and "error:" in out.stderr
    assert "lock" in out.stderr.lower() or "another" in out.stderr.lower()


def test_the_sessions_folder_comes_from_the_flag_then_the_environment_then_settings(pi, server):
    server.default = Reply(text="ok")
    (pi.agent_dir / "settings.json").write_text(json.dumps({"sessionDir": str(pi.cwd / "from-settings")}))
    assert pi.run("-p", "a").returncode == 0
    pi.env["PI_CODING_AGENT_SESSION_DIR"] = str(pi.cwd / "from-env")
    assert pi.run("-p", "b").returncode == 0
    assert pi.run("--session-dir", str(pi.cwd / "from-flag"), "-p", "c").returncode == 0
    for folder in ("from-settings", "from-env", "from-flag"):
        assert len(list((pi.cwd / folder).glob("*.jsonl"))) == 1, folder


def test_list_models_shows_a_searchable_table(pi, server):
    out = pi.run("--list-models", "test")
    assert out.returncode == 0, out.stderr
    header, *rows = out.stdout.splitlines()
    assert header.split() == ["provider", "model", "context", "max-out", "thinking", "images"]
    assert rows and rows[0].split()[:2] == ["local", "test-model"]
