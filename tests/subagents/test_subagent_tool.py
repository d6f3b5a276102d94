"""The subagent tool: children in the parent's process, each with its own linked session."""

import asyncio
import json
import threading

from pi_plugins.sdk import create_harness
from pi_core.session import Session
from pi_core.app.settings import Settings
from pi_plugins.providers.pool import _pools

from support.llm_server import Reply
from support.routing import Router, first_user_text, header, tool_names

TASKS = ["count the files", "find the tests", "read the README"]


async def parent_harness(tmp_path, server, settings=None, tools=("read", "subagent")):
    session = Session.create(tmp_path / "work", tmp_path / "sessions")
    (tmp_path / "work").mkdir(exist_ok=True)
    harness = await create_harness(
        model=server.model("openai-completions"), session=session, cwd=str(tmp_path / "work"),
        builtins=True, settings=Settings(settings or {}), active_tools=list(tools))
    events = []
    harness.subscribe(events.append)
    return harness, events


def prompted_parent(tmp_path, server):
    """A parent harness that has answered the prompt "PARENT" (the router decides how)."""
    async def scenario():
        harness, _ = await parent_harness(tmp_path, server)
        await harness.prompt("PARENT")
        return harness

    return asyncio.run(scenario())


def test_a_parent_fans_out_to_three_children_in_parallel_each_with_its_own_linked_session(
        tmp_path, server, agent_home):
    router = Router({"tasks": [{"task": t} for t in TASKS]}, gate=threading.Barrier(3))
    server.default = router

    async def scenario():
        harness, events = await parent_harness(tmp_path, server)
        await harness.prompt("PARENT")
        await harness.close()
        shards = _pools[asyncio.get_running_loop()][False].shards
        return harness, events, shards

    harness, events, shards = asyncio.run(scenario())
    assert harness.messages[-1].text == "parent done"
    # parent and children went through one pool: the parent's, with the same provider objects
    assert len(shards) == 1 and len(server.requests) == 5
    result = next(m for m in harness.messages if m.role == "toolResult")
    assert not result.is_error
    for n, task in enumerate(TASKS, 1):
        assert f"## [{n}] agent: done\nanswer: {task}" in result.content[0].text
    children = result.details["results"]
    assert [c["text"] for c in children] == [f"answer: {t}" for t in TASKS]
    assert all(c["usage"]["input"] == 7 and c["usage"]["output"] == 3 for c in children)
    # pi 1.6: the tool's own model work is the result's usage, in the parent's file and totals
    assert (result.usage.input, result.usage.output) == (21, 9)
    written = [json.loads(line)["message"] for line in open(harness.session.file)
               if '"toolResult"' in line]
    assert written[0]["usage"]["input"] == 21
    from pi_core.app.session_stats import usage_totals
    answers = sum(m.usage.input for m in harness.messages if m.role == "assistant")
    assert usage_totals(harness.session.entries)["input"] == answers + 21
    sessions = {c["session"] for c in children}
    assert len(sessions) == 3 and str(harness.session.file) not in sessions
    for path in sessions:
        assert header(path)["parentSession"] == str(harness.session.file)
        lines = [json.loads(line) for line in open(path)]
        texts = [m["message"]["content"] for m in lines
                 if m["type"] == "message" and m["message"]["role"] != "system"]
        assert len(texts) == 2  # the task and the answer: a context of its own
    assert {str(p) for p in (tmp_path / "sessions").iterdir()} == sessions | {str(harness.session.file)}
    updates = [e for e in events if e.type == "tool_execution_update"]
    assert updates and updates[-1].partial_result.content[0].text.startswith("3/3 done")
    assert len(router.child_requests) == 3


def test_aborting_the_parent_aborts_every_child_and_leaves_none_running(tmp_path, server, agent_home):
    hold = threading.Event()
    router = Router({"tasks": [{"task": t} for t in TASKS]}, hold=hold)
    server.default = router

    async def scenario():
        harness, events = await parent_harness(tmp_path, server)
        running = asyncio.ensure_future(harness.prompt("PARENT"))
        while len(router.child_requests) < 3:  # every child is waiting for its answer
            await asyncio.sleep(0.01)
        harness.abort()
        await running
        left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        await harness.close()
        return harness, left

    try:
        harness, left = asyncio.run(scenario())
    finally:
        hold.set()
    assert left == []
    result = next(m for m in harness.messages if m.role == "toolResult")
    assert result.is_error and result.content[0].text == "Tool execution was aborted"
    children = [p for p in (tmp_path / "sessions").iterdir() if p != harness.session.file]
    assert len(children) == 3
    for path in children:  # each child stopped, and its file says so
        last = json.loads(path.read_text().splitlines()[-1])
        assert last["message"]["stopReason"] == "aborted"
        assert header(path)["parentSession"] == str(harness.session.file)


def test_children_run_at_most_max_concurrency_at_once(tmp_path, server, agent_home):
    server.default = Router({"tasks": [{"task": t} for t in TASKS]}, gate=threading.Barrier(2))

    async def scenario():
        harness, events = await parent_harness(tmp_path, server, {"subagents": {"maxConcurrency": 2}})
        await harness.prompt("PARENT")
        return events

    events = asyncio.run(scenario())
    running = [sum(c["status"] == "running" for c in e.partial_result.details["results"])
               for e in events if e.type == "tool_execution_update"]
    assert max(running) == 2
    end = next(e for e in events if e.type == "tool_execution_end")
    assert [c["status"] for c in end.result.details["results"]] == ["done"] * 3


def test_children_cannot_spawn_children_unless_max_depth_allows(tmp_path, server, agent_home):
    for depth, offered in ((1, False), (2, True)):
        router = Router({"task": "look around"})
        server.default = router

        async def scenario():
            harness, _ = await parent_harness(tmp_path, server, {"subagents": {"maxDepth": depth}})
            await harness.prompt("PARENT")

        asyncio.run(scenario())
        assert ("subagent" in tool_names(router.child_requests[0])) is offered
        assert "read" in tool_names(router.child_requests[0])


def test_an_agent_definition_gives_the_child_its_prompt_and_tools_and_is_listed_to_the_model(
        tmp_path, server, agent_home, caplog):
    folder = tmp_path / "work" / ".pi" / "agents"
    folder.mkdir(parents=True)
    (folder / "scout.md").write_text(
        "---\nname: scout\ndescription: Fast look around a code base\ntools: read, ls\n---\n"
        "You are a scout. Report briefly.\n")
    (agent_home / "agents").mkdir()
    (agent_home / "agents" / "scout.md").write_text(
        "---\nname: scout\ndescription: the user's scout, replaced by the project's\n---\nUser scout.\n")
    (agent_home / "agents" / "broken.md").write_text("---\nname: [unclosed\n---\nbody\n")
    router = Router({"task": "map the code", "agent": "scout"})
    server.default = router

    harness = prompted_parent(tmp_path, server)
    parent_request = server.requests[0]
    description = next(t["function"]["description"] for t in parent_request.body["tools"]
                       if t["function"]["name"] == "subagent")
    assert "- scout: Fast look around a code base" in description
    assert "broken" not in description and "the user's scout" not in description
    assert any("broken.md" in r.getMessage() for r in caplog.records if r.name == "pi.subagents")
    child = router.child_requests[0]
    assert tool_names(child) == ["read", "ls"]
    system = child.body["messages"][0]
    assert system["role"] in ("system", "developer") and "You are a scout. Report briefly." in str(system["content"])
    assert first_user_text(child) == "map the code"
    result = next(m for m in harness.messages if m.role == "toolResult")
    assert result.content[0].text == "answer: map the code"
    assert result.details["results"][0]["agent"] == "scout"


def test_an_agent_may_be_named_by_its_file_as_well_as_by_its_name(tmp_path, agent_home):
    from pi_plugins.subagents.definitions import discover_agents

    (agent_home / "agents").mkdir()
    (agent_home / "agents" / "review.md").write_text(
        "---\nname: code-reviewer\ndescription: Reviews diffs\ntools: [read, grep]\nthinking: high\n---\nReview.\n")
    found = discover_agents(tmp_path, agent_home)
    by_name, by_file = found.find("code-reviewer"), found.find("review")
    assert by_name is by_file and by_name.tools == ["read", "grep"] and by_name.thinking == "high"
    assert found.find("nobody") is None


def test_an_unknown_agent_is_an_error_the_model_can_read(tmp_path, server, agent_home):
    server.default = Router({"task": "x", "agent": "nobody"})

    harness = prompted_parent(tmp_path, server)
    result = next(m for m in harness.messages if m.role == "toolResult")
    assert result.is_error and "unknown agent nobody" in result.content[0].text


def test_the_tool_is_off_by_default_and_on_with_the_setting(tmp_path, server, agent_home):
    async def active(settings):
        harness = await create_harness(model=server.model("openai-completions"), cwd=str(tmp_path),
                                       builtins=True, settings=Settings(settings))
        return [t.name for t in harness.agent.active_tools()]

    assert "subagent" not in asyncio.run(active({}))
    assert "subagent" in asyncio.run(active({"subagents": {"enabled": True}}))


def test_a_failing_child_is_reported_and_the_others_still_answer(tmp_path, server, agent_home):
    router = Router({"tasks": [{"task": "fail please"}, {"task": "fine"}]})

    def route(request):
        if first_user_text(request) == "fail please":
            router.child_requests.append(request)
            return Reply(status=400, error="bad request for this child")
        return router(request)

    server.default = route

    harness = prompted_parent(tmp_path, server)
    result = next(m for m in harness.messages if m.role == "toolResult")
    failed, fine = result.details["results"]
    assert failed["status"] == "failed" and "bad request for this child" in failed["error"]
    assert fine["text"] == "answer: fine"
    assert not result.is_error  # one child answered


def test_a_definition_naming_a_model_that_is_not_available_fails_that_child_clearly(
        tmp_path, server, agent_home):
    folder = tmp_path / "work" / ".pi" / "agents"
    folder.mkdir(parents=True)
    (folder / "big.md").write_text("---\nname: big\ndescription: needs a big model\nmodel: acme/huge\n---\nThink.\n")
    router = Router({"tasks": [{"task": "think hard", "agent": "big"}, {"task": "easy"}]})
    server.default = router

    harness = prompted_parent(tmp_path, server)
    result = next(m for m in harness.messages if m.role == "toolResult")
    big, easy = result.details["results"]
    assert big["status"] == "failed" and "model 'acme/huge' is not among the available models" in big["error"]
    assert easy["text"] == "answer: easy"
    assert [first_user_text(r) for r in router.child_requests] == ["easy"]


def test_a_childs_commands_start_without_the_keys_and_show_none(tmp_path, server, agent_home, monkeypatch):
    monkeypatch.setenv("ACME_API_KEY", "acme-key-for-the-child-0001")
    monkeypatch.setenv("VISIBLE_TO_CHILD", "yes-visible")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "leak.txt").write_text("acme-key-for-the-child-0001\n")
    server.push(Reply(tool_calls=[("subagent", {"tasks": [{"task": "look around"}]})]),
                Reply(tool_calls=[("bash", {"command": "env; cat leak.txt"})]),
                Reply(text="child done"), Reply(text="parent done"))

    async def scenario():
        harness, _ = await parent_harness(tmp_path, server, settings={"subagents": {"enabled": True}},
                                          tools=("bash", "subagent"))
        await harness.prompt("PARENT")
        await harness.close()
        return harness

    harness = asyncio.run(scenario())
    assert harness.messages[-1].text == "parent done"
    [child_session] = [p for p in (tmp_path / "sessions").iterdir() if p != harness.session.file]
    child = child_session.read_text()
    assert "VISIBLE_TO_CHILD=yes-visible" in child and "ACME_API_KEY=" not in child
    assert "[redacted: ACME_API_KEY]" in child
    assert "acme-key-for-the-child-0001" not in child + harness.session.file.read_text()
