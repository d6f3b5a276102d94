"""pi 1.6's cache notices in the chat (``showCacheMissNotices``): ``Cache warmed: $…`` after
each refresh that kept the provider's cache warm (back-to-back ones as one line with
their total), the cache-miss notices and the warm lines derived again when a session is
opened, and ``Anthropic dropped 2 thinking blocks …`` when a provider withheld reasoning."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from support.llm_server import Reply

from pi_core.app.settings import Settings
from pi_core.protocol.messages import AssistantMessage, TextContent, Usage, UserMessage
from pi_core.session import Session
from pi_plugins.interactive.cache_notices import dropped_reasoning_notice

#: the chat's test model, its cache said to live 11 s: refreshed after 1 s (pi's rule)
WARMED_MODEL = {"id": "test-model", "name": "Test Model", "contextWindow": 500000, "reasoning": True,
                "input": ["text", "image"], "promptCache": {"short": 11},
                "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}
BIG_PROMPT = {"input": 400_000, "output": 5, "cache_read": 0, "cache_write": 0, "reasoning": 0}
CACHE_HIT = {"input": 0, "output": 1, "cache_read": 400_000, "cache_write": 0, "reasoning": 0}


@pytest.mark.process
def test_refreshes_show_as_one_cache_warmed_line_and_again_when_the_session_is_opened(pi_tui, server):
    models = server.models_json("local", models=[WARMED_MODEL])
    server.push(Reply(text="Noted, a long prompt.", usage=BIG_PROMPT), Reply(text=".", usage=CACHE_HIT),
                Reply(text=".", usage=CACHE_HIT))
    settings = {"showCacheMissNotices": True}
    term = pi_tui(settings=settings, agent_files={"models.json": json.dumps(models)})
    term.submit("remember this")
    term.wait_for("Noted, a long prompt.")
    term.wait_for("Cache warmed: $0.120015", timeout=20)  # 400k cached tokens at $0.30 a million, 1 output token
    screen = term.wait_for("Cache warmed: $0.24003", timeout=20)  # the second refresh, added to the same line
    assert screen.count("Cache warmed") == 1
    refreshes = [r for r in server.requests if r.body.get("max_tokens") == 1 or r.body.get("max_completion_tokens") == 1]
    assert len(refreshes) >= 2
    assert refreshes[0].body["messages"] == server.requests[0].body["messages"]  # the same prompt again
    term.submit("/quit")
    term.wait_for_exit()
    [session] = term.sessions()
    kinds = [json.loads(line).get("kind") for line in session.read_text().splitlines()]
    assert kinds.count("cache_warm") >= 2

    again = pi_tui("--continue", settings={"showCacheMissNotices": True, "cacheWarming": "off"},
                   agent_files={"models.json": json.dumps(models)})
    screen = again.wait_for("Cache warmed: $0.24003")
    assert screen.index("Noted, a long prompt.") < screen.index("Cache warmed: $0.24003")


def test_cache_miss_notices_are_derived_again_when_the_session_is_opened(pi_screen, server):
    cached = {"input": 1000, "output": 10, "cache_read": 30000, "cache_write": 0, "reasoning": 0}
    missed = {"input": 31500, "output": 10, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    server.push(Reply(text="First, mostly cached.", usage=cached), Reply(text="Second, all re-billed.", usage=missed))
    term = pi_screen(settings={"showCacheMissNotices": True})
    term.submit("one")
    term.wait_drawn("First, mostly cached.")
    term.submit("two")
    term.wait_drawn("Cache miss: 31k tokens re-billed (~$0.08)")
    term.close()
    again = pi_screen("--continue", settings={"showCacheMissNotices": True})
    screen = again.wait_drawn("Cache miss: 31k tokens re-billed (~$0.08)")
    assert screen.index("Second, all re-billed.") < screen.index("Cache miss: 31k")
    assert screen.count("Cache miss") == 1
    again.close()
    hidden = pi_screen("--continue", settings={})
    assert "Cache miss" not in hidden.wait_drawn("Second, all re-billed.")


def _answer(dropped: int, reason: str = "signature_invalid") -> AssistantMessage:
    message = AssistantMessage(content=[TextContent(text="ok")], api="anthropic-messages", provider="anthropic",
                               model="claude-sonnet-4-5", usage=Usage(input=10, output=1))
    if dropped:
        message.extra["diagnostics"] = [{"type": "anthropic_input_transformations", "details": {
            "transformations": [{"type": "thinking_dropped", "path": f"messages.{i}", "reason": reason}
                                for i in range(dropped)]}}]
    return message


def _chat(tmp_path, *answers: AssistantMessage, shown: bool = True):
    session = Session.create(tmp_path / "work", tmp_path / "sessions")
    for answer in answers:
        session.append_message(UserMessage(content="go"))
        session.append_message(answer)
    return SimpleNamespace(session=session, ctx=SimpleNamespace(settings=Settings({"showCacheMissNotices": shown})))


def test_dropped_reasoning_is_noticed_once_for_each_new_loss(tmp_path):
    first = _answer(2)
    harness = _chat(tmp_path, first)
    assert dropped_reasoning_notice(harness, first) == \
        "Anthropic dropped 2 thinking blocks: signature_invalid (details in session)"
    again = _answer(2)  # the same two, reported again as the request replays them
    harness.session.append_message(again)
    assert dropped_reasoning_notice(harness, again) is None
    more = _answer(3)
    harness.session.append_message(more)
    assert dropped_reasoning_notice(harness, more).startswith("Anthropic dropped 3 thinking blocks")
    one = _answer(1)
    assert dropped_reasoning_notice(_chat(tmp_path / "b", one), one) == \
        "Anthropic dropped 1 thinking block: signature_invalid (details in session)"
    assert dropped_reasoning_notice(_chat(tmp_path / "c", first, shown=False), first) is None
    assert dropped_reasoning_notice(_chat(tmp_path / "d", _answer(0)), _answer(0)) is None


@pytest.mark.parametrize("mode", ["default", "all", "no-tools"])
def test_refreshes_are_never_listed_in_the_tree(mode):
    from pi_core import UsageEntry
    from pi_core.session import TreeNode
    from pi_plugins.interactive.tree_view import shown

    warm = UsageEntry(kind="cache_warm", provider="anthropic", model="claude-sonnet-4-5")
    assert not shown(TreeNode(warm), mode, warm.id)
