"""The session's ``system`` messages side by side with pi 1.6 on the scripted server: both
write a leading one (the prompt's named sections, the declared tools) before the first
user message and send it as ``message_start``/``message_end`` after ``turn_start``; a
resume with other tools and a changed AGENTS.md writes a patch of only what changed.
Each program resumes the other's file. The section texts differ (our prompt is our own);
the names we use are pi 1.6's, in its order."""

import json
import subprocess

import pytest

from support.llm_server import Reply

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _run(who: str, pi, *args: str) -> list[dict]:
    from support.programs import node_for, require_real

    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")] if who == "pi16"
               else pi.command()[:3])
    done = subprocess.run([*command, *pi.flags("--mode", "json", *args)], cwd=pi.cwd,
                          env={**pi.env, "PI_OFFLINE": "1"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{who}: {done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _systems(path) -> list[dict]:
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "system"]


def _order(events: list[dict]) -> list[str]:
    return [e["type"] + (f":{e['message']['role']}" if "message" in e else "") for e in events
            if e["type"] in ("agent_start", "turn_start", "message_start", "message_end")][:6]


def _shape(message: dict) -> dict:
    """What a system message declares, its texts left out."""
    return {"keys": list(message), "sections": list(message.get("sections") or {}),
            "removed_sections": sorted(k for k, v in (message.get("sections") or {}).items() if v is None),
            "added": [t["name"] for t in message.get("toolsAdded", [])],
            "removed": message.get("toolsRemoved", [])}


@pytest.fixture
def project(pi, server):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    pi.trust_project()
    return pi


def test_the_leading_system_message_and_a_later_patch_are_written_and_sent_as_pi16(project, server):
    pi, seen = project, {}
    for who in ("pi16", "ours"):
        (pi.cwd / "AGENTS.md").write_text("Project rules here.")
        server.push(Reply(text="first"), Reply(text="second"))
        first = _run(who, pi, "--append-system-prompt", "APPENDED", "hi")
        (pi.cwd / "AGENTS.md").write_text("Project rules changed.")
        _run(who, pi, "--tools", "read,bash", "-c", "again")
        [path] = pi.sessions()
        lead, patch = _systems(path)
        seen[who] = _order(first), _shape(lead), _shape(patch), first
        path.unlink()
    assert seen["ours"][0] == seen["pi16"][0] == [
        "agent_start", "turn_start", "message_start:system", "message_end:system",
        "message_start:user", "message_end:user"]
    ours, theirs = seen["ours"][1], seen["pi16"][1]
    assert ours["keys"] == theirs["keys"] == ["role", "content", "sections", "timestamp", "toolsAdded"]
    assert ours["added"] == theirs["added"] == ["read", "bash", "edit", "write"]
    assert ours["sections"] == [n for n in theirs["sections"] if n in ours["sections"]]  # 1.6's order
    assert {"preamble", "addendum", "project_context", "cwd"} <= set(ours["sections"])
    ours, theirs = seen["ours"][2], seen["pi16"][2]
    assert ours["keys"] == theirs["keys"] == ["role", "content", "sections", "timestamp", "toolsRemoved"]
    assert ours["removed"] == theirs["removed"] == [{"name": "edit"}, {"name": "write"}]
    assert ours["removed_sections"] == theirs["removed_sections"] == ["addendum"]
    assert "project_context" in ours["sections"] and "project_context" in theirs["sections"]
    ended = [e["message"] for e in seen["ours"][3] if e["type"] == "message_end" and e["message"]["role"] == "system"]
    assert ended and ended[0]["sections"]["addendum"] == "APPENDED"


def test_each_resumes_the_others_session_and_patches_it_to_its_own_prompt(project, server):
    pi = project
    server.push(Reply(text="first"), Reply(text="second"))
    _run("ours", pi, "hi")
    before = len(server.requests)
    _run("pi16", pi, "-c", "again")  # pi 1.6 resumes ours
    [path] = pi.sessions()
    ours, theirs = _systems(path)
    assert set(theirs["sections"]) >= {"tools", "rules", "docs"}  # 1.6's own sections patched in
    assert "toolsAdded" not in theirs or all(t["name"] in {"read", "bash", "edit", "write"}
                                             for t in theirs["toolsAdded"])
    [sent] = server.requests[before:]
    assert [m["role"] for m in sent.body["messages"]] == ["system", "user", "assistant", "user"]
    assert sent.body["messages"][0]["content"].startswith("You are a coding assistant running inside pi")

    path.unlink()
    server.push(Reply(text="third"), Reply(text="fourth"))
    _run("pi16", pi, "hi")
    before = len(server.requests)
    _run("ours", pi, "-c", "again")  # ours resumes pi 1.6's
    [path] = pi.sessions()
    _theirs, ours = _systems(path)
    assert {n for n, v in ours["sections"].items() if v is None} >= {"tools", "rules", "docs"}
    [sent] = server.requests[before:]
    assert [m["role"] for m in sent.body["messages"]] == ["system", "user", "assistant", "user"]
    assert sent.body["messages"][0]["content"].startswith("You are a coding assistant working inside pi")


def _sent(api: str, body: dict) -> list[dict]:
    """A request's conversation as ``{role, content}``: Responses' ``input`` items by role."""
    if api == "openai-responses":
        return [{"role": i.get("role", i.get("type")), "content": i.get("content")} for i in body["input"]]
    return body["messages"]


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "mistral-conversations"])
@pytest.mark.parametrize("flag", [False, True])
def test_a_later_change_is_folded_or_sent_in_place_as_pi16_sends_it(pi, server, flag, api):
    """Chat Completions, Responses and Mistral: without ``supportsMidConvoSystemMessages``
    the prompt is sent whole as the first message; with it, the leading prompt as first
    written and the change as a system message before the prompt it came with."""
    compat = {"compat": {"supportsMidConvoSystemMessages": True}} if flag else {}
    (pi.agent_dir / "models.json").write_text(json.dumps(
        server.models_json("local", api=api, apiKey="test-key", models=[{"id": "test-model", **compat}])))
    pi.trust_project()
    sent = {}
    for who in ("pi16", "ours"):
        (pi.cwd / "AGENTS.md").write_text("Project rules here.")
        server.push(Reply(text="first"), Reply(text="second"))
        _run(who, pi, "hi")
        (pi.cwd / "AGENTS.md").write_text("Project rules changed.")
        before = len(server.requests)
        _run(who, pi, "--tools", "read,bash", "-c", "again")
        [request] = server.requests[before:]
        sent[who] = _sent(api, request.body)
        [path] = pi.sessions()
        path.unlink()
    for who, messages in sent.items():
        roles = [m["role"] for m in messages]
        if not flag:
            assert roles == ["system", "user", "assistant", "user"], who
            assert "Project rules changed." in messages[0]["content"], who
            continue
        assert roles == ["system", "user", "assistant", "system", "user"], who
        assert "Project rules here." in messages[0]["content"], who  # the prompt as first declared
        update = messages[3]["content"]
        assert update.startswith('Updated system prompt section "'), who
        assert 'Updated system prompt section "project_context":' in update and "Project rules changed." in update



def _compact_and_go_on(pi, server, command: list[str]) -> dict:
    """A prompt whose answer runs a tool, ``compact`` (cutting that turn, so the history
    before it is the system message alone), another prompt, through ``--mode rpc``."""
    from support.rpc import RpcClient

    process = subprocess.Popen([*command, *pi.flags("--mode", "rpc")], cwd=pi.cwd,
                               env={**pi.env, "PI_OFFLINE": "1"}, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client = RpcClient(process, timeout=60)
    try:
        server.push(Reply(text="Running.", tool_calls=[("bash", {"command": "echo tool-output"})]),
                    Reply(text="Ran it. " * 60))
        mark = client.mark()
        client.ok("prompt", message="run it")
        client.event("agent_end", after=mark)
        before = len(server.requests)
        server.default = lambda request: Reply(text="## Goal\nsummary")
        summary = client.ok("compact")["summary"]
        server.default = None
        summaries = len(server.requests) - before
        after = client.ok("get_messages")["messages"]
        server.push(Reply(text="Third."))
        mark = client.mark()
        client.ok("prompt", message="again")
        client.event("agent_end", after=mark)
    finally:
        client.close(timeout=20)
        client.kill()
    [path] = pi.sessions()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.unlink()
    return {"summary": summary, "summaries": summaries, "after": after, "lines": lines,
            "last": server.requests[-1].body}


def test_a_compaction_keeps_the_system_message_out_of_the_summary_and_on_its_entry_as_pi16(project, server):
    """pi 1.6 never summarises a system message (a history of only one is "No prior
    history."): the compaction entry carries the replayed one (``systemMessage``), which
    leads the compacted context; a later prompt whose prompt and tools did not change
    declares nothing new."""
    from support.programs import node_for, require_real

    pi = project
    (pi.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 5}}))
    (pi.cwd / "AGENTS.md").write_text("Project rules here.")
    seen = {"pi16": _compact_and_go_on(pi, server, [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")]),
            "ours": _compact_and_go_on(pi, server, pi.command()[:3])}
    shapes = {}
    for who, run in seen.items():
        # the wording is each program's own (as tests/acp/test_pi_acp.py reads it)
        assert run["summary"].startswith(("No prior history.", "No earlier history.")), who
        assert run["summaries"] == 1, who  # the cut turn's prefix only
        assert [m["role"] for m in run["after"]][:2] == ["system", "compactionSummary"], who
        [compaction] = [e for e in run["lines"] if e["type"] == "compaction"]
        shapes[who] = _shape(compaction["systemMessage"])
        assert "Project rules here." in compaction["systemMessage"]["sections"]["project_context"], who
        later = run["lines"][run["lines"].index(compaction) + 1:]
        assert [e["message"]["role"] for e in later if e["type"] == "message"] == ["user", "assistant"], who
        assert [m["role"] for m in run["last"]["messages"]][:2] == ["system", "user"], who
        assert "Project rules here." in run["last"]["messages"][0]["content"], who
    assert shapes["ours"]["added"] == shapes["pi16"]["added"]
    assert shapes["ours"]["sections"] == [n for n in shapes["pi16"]["sections"] if n in shapes["ours"]["sections"]]
    assert set(shapes["ours"]["keys"]) == set(shapes["pi16"]["keys"])


def _anthropic_run(pi, server, compat: dict) -> dict:
    """Per program: the request after a resume that changed AGENTS.md and the tools, the
    first answer having run a tool (so the change waits for the next assistant message)."""
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json(
        "local", api="anthropic-messages", apiKey="test-key", models=[{"id": "test-model", "compat": compat}])))
    pi.trust_project()
    sent = {}
    for who in ("pi16", "ours"):
        (pi.cwd / "AGENTS.md").write_text("Project rules here.")
        server.push(Reply(text="Running.", tool_calls=[("bash", {"command": "echo hi"})]), Reply(text="first"),
                    Reply(text="second"))
        _run(who, pi, "hi")
        (pi.cwd / "AGENTS.md").write_text("Project rules changed.")
        before = len(server.requests)
        _run(who, pi, "--tools", "read,bash,grep", "-c", "again")
        [request] = server.requests[before:]
        sent[who] = request
        [path] = pi.sessions()
        path.unlink()
    return sent


def _blocks(message: dict) -> list[str]:
    content = message["content"]
    return ["text"] if isinstance(content, str) else [
        b["type"] + (f":{b['tool'].get('name') or b['tool']['definition']['name']}" if "tool" in b else "")
        for b in content]


@pytest.mark.parametrize("tool_changes", [False, True])
def test_anthropic_sends_a_later_change_as_a_system_message_before_the_next_assistant_message_as_pi16(
        pi, server, tool_changes):
    """Anthropic with ``supportsMidConvoSystemMessages``: ``system`` is the prompt as first
    declared and the change goes inside ``messages`` as ``role: "system"`` text blocks,
    held back past the new user message to the end; with ``supportsMidConvoToolChanges``
    the request's tools stay the first ones plus pi's deferred placeholder, and the change
    carries ``tool_removal``/``tool_addition`` blocks, under the inline-tools beta."""
    compat = {"supportsMidConvoSystemMessages": True, **({"supportsMidConvoToolChanges": True} if tool_changes else {})}
    sent = _anthropic_run(pi, server, compat)
    shapes = {}
    for who, request in sent.items():
        body = request.body
        assert "Project rules here." in body["system"][-1]["text"], who
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["user", "assistant", "user", "assistant", "user", "system"], who
        change = body["messages"][-1]
        assert change["content"][0]["text"].startswith('Updated system prompt section "'), who
        assert "Project rules changed." in change["content"][0]["text"], who
        assert change["content"][-1].get("cache_control") == {"type": "ephemeral"}, who
        beta = request.headers.get("anthropic-beta", "")
        shapes[who] = {"blocks": [b for b in _blocks(change) if b != "text"],
                       "tools": [t["name"] for t in body["tools"]],
                       "placeholder": body["tools"][-1] if tool_changes else None,
                       "inline_beta": "inline-tools-2026-09-15" in beta}
    assert shapes["ours"] == shapes["pi16"]
    if tool_changes:
        assert shapes["ours"]["blocks"] == ["tool_removal:edit", "tool_removal:write", "tool_addition:grep"]
        assert shapes["ours"]["tools"] == ["read", "bash", "edit", "write", "__pi_deferred_placeholder__"]
        assert shapes["ours"]["inline_beta"]
    else:
        assert shapes["ours"]["blocks"] == [] and shapes["ours"]["tools"] == ["read", "bash", "grep"]


@pytest.mark.parametrize("removes", [False, True])
def test_completions_tools_added_mid_conversation_go_in_place_and_a_removal_folds_as_pi16(pi, server, removes):
    """Chat Completions with ``supportsMidConvoToolAdditions`` (Kimi K3's): a resume that
    only adds tools keeps the request's ``tools`` the first ones and declares the new ones
    in a ``{role: "system", tools}`` message where the change is; one that also removes a
    tool cannot say so in place, so the request's tools become the current ones."""
    compat = {"supportsMidConvoSystemMessages": True, "supportsMidConvoToolAdditions": True}
    (pi.agent_dir / "models.json").write_text(json.dumps(
        server.models_json("local", apiKey="test-key", models=[{"id": "test-model", "compat": compat}])))
    pi.trust_project()
    seen = {}
    for who in ("pi16", "ours"):
        server.push(Reply(text="first"), Reply(text="second"))
        _run(who, pi, "--tools", "read,bash", "hi")
        before = len(server.requests)
        _run(who, pi, "--tools", "read,grep" if removes else "read,bash,grep", "-c", "again")
        [request] = server.requests[before:]
        body = request.body
        seen[who] = {"tools": [t["function"]["name"] for t in body["tools"]],
                     "messages": [m["role"] + ("+tools:" + ",".join(t["function"]["name"] for t in m["tools"])
                                               if "tools" in m else "") for m in body["messages"]],
                     "in_place": [m["tools"] for m in body["messages"] if "tools" in m],
                     "request_keys": list(body["tools"][0]["function"])}
        [path] = pi.sessions()
        path.unlink()
    ours, theirs = seen["ours"], seen["pi16"]
    assert ours["tools"] == theirs["tools"]
    assert [m for m in ours["messages"] if "+tools" in m] == [m for m in theirs["messages"] if "+tools" in m]
    if removes:
        assert ours["tools"] == ["read", "grep"] and not ours["in_place"]
    else:
        assert ours["tools"] == ["read", "bash"]
        assert ours["messages"][:3] == ["system", "user", "assistant"]
        assert "system+tools:grep" in ours["messages"]
        assert ours["messages"][-1] == "user"
        # each converts them as its request's tools (whether ``strict`` is sent is each
        # program's detected supportsStrictMode: pi 1.6 assumes none for an unknown server)
        for who, run in seen.items():
            assert list(run["in_place"][0][0]["function"]) == run["request_keys"], who


def _item(item: dict) -> str:
    """A Responses input item's shape: its type or role, tool names, notices by their opening."""
    kind = item.get("type") if item.get("type") not in (None, "message") else item.get("role")
    tools = item.get("tools")
    if tools:
        return f"{kind}:" + ",".join(t["name"] + ("(deferred)" if t.get("defer_loading") else "") for t in tools)
    content = item.get("content")
    if isinstance(content, str) and content.startswith(("This is an incremental", "The following tools")):
        return f"{kind}:notice:{content.splitlines()[-1]}"
    if isinstance(content, str) and "no longer available" in content:
        return f"{kind}:removal:{content.splitlines()[-1]}"
    return str(kind)


@pytest.mark.parametrize("support", ["supportsAdditionalTools", "supportsToolSearch"])
def test_responses_declares_tool_changes_in_place_as_pi16(pi, server, support):
    """The Responses API with ``supportsMidConvoSystemMessages``: with
    ``supportsAdditionalTools`` no request tools, each system message's tools in an
    ``additional_tools`` item and a removal announced; with ``supportsToolSearch`` the
    request's tools up to the last removal and later additions as completed client tool
    searches. Two resumes: one that removes and adds, one that only adds."""
    compat = {"supportsMidConvoSystemMessages": True, support: True}
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json(
        "local", api="openai-responses", apiKey="test-key", models=[{"id": "test-model", "compat": compat}])))
    pi.trust_project()
    seen = {}
    for who in ("pi16", "ours"):
        server.push(Reply(text="first"), Reply(text="second"), Reply(text="third"))
        _run(who, pi, "--tools", "read,bash", "hi")
        _run(who, pi, "--tools", "read,grep", "-c", "again")
        before = len(server.requests)
        _run(who, pi, "--tools", "read,grep,find", "-c", "more")
        [request] = server.requests[before:]
        body = request.body
        seen[who] = {"tools": [t["name"] for t in body.get("tools", [])],
                     "input": [_item(i) for i in body["input"]],
                     "call_ids": [i["call_id"] for i in body["input"] if i.get("type") == "tool_search_call"]}
        [path] = pi.sessions()
        path.unlink()
    assert seen["ours"] == seen["pi16"]
    if support == "supportsAdditionalTools":
        assert seen["ours"]["tools"] == []
        assert "additional_tools:read,bash" in seen["ours"]["input"]
    else:
        assert seen["ours"]["tools"] == ["read", "grep"]
        assert "tool_search_output:find(deferred)" in seen["ours"]["input"]
