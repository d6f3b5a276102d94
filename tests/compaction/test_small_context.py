"""Compaction with a small context window (an 8k local model) under the default
settings, whose reserve (16384) and keep-recent (20000) budgets exceed the window."""

from pi_plugins.compaction.token_settings import fit_budget as fit
from pi_core.testing import Reply

from support.agents import run
from support.harnesses import lines, make


def test_the_first_answer_of_an_8k_model_costs_one_request_not_a_compaction(tmp_path):
    harness, provider, events = make(tmp_path, [Reply(text="hello")], window=8192)
    run(harness.prompt("hi"))
    assert harness.messages[-1].text == "hello"
    assert len(provider.requests) == 1
    assert not events.of("compaction_start")


def test_an_8k_model_compacts_a_long_conversation_and_keeps_going(tmp_path):
    script = [Reply(text=f"step {i}", tool_calls=[("dump", {"n": i})]) for i in range(14)] + [Reply(text="all done")]
    harness, provider, events = make(tmp_path, script, window=8192)
    run(harness.prompt("dump fourteen times"))
    assert harness.messages[-1].text == "all done"
    ends = events.of("compaction_end")
    assert ends and all(end.result is not None for end in ends)
    assert "compaction" in [l["type"] for l in lines(harness.session)]
    # Every request after a compaction fits the window's budget (window minus the reserve).
    from pi_core.app.tokens import context_tokens
    assert all(context_tokens(r.messages) <= 8192 for r in provider.requests)


def test_budgets_are_held_to_a_quarter_of_the_window():
    assert fit(16384, 8192) == 2048 and fit(20000, 8192) == 2048
    assert fit(16384, 200_000) == 16384  # large windows keep pi's defaults


def test_a_context_that_fits_by_the_bound_is_sent_without_asking_the_tokenizer(tmp_path, monkeypatch):
    """At most 4 tokens a char (a token is at least a byte of UTF-8), which no estimate
    exceeds: a context that fits by that bound needs no count (tiktoken, where its
    encoding is cached, is not loaded), and one near the window still gets one."""
    from pi_core.app import tokens

    asked = []
    monkeypatch.setattr(tokens, "_counter", lambda: asked.append(1) or ("chars/4", lambda t: -(-len(t) // 4)))
    harness, provider, events = make(tmp_path, [Reply(text="hello wörld 😀")], window=8192)
    run(harness.prompt("hi"))
    assert len(provider.requests) == 1 and not asked
    messages = harness.messages
    assert tokens.context_tokens(messages, at_most=True) >= tokens.context_tokens(messages)
    harness, provider, events = make(tmp_path / "near", [Reply(text="ok")], window=8192)
    run(harness.prompt("x" * 3000))  # 12,000 by the bound: over the 8k window's budget
    assert asked
