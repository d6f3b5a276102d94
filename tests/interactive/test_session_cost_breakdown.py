"""``/session``'s cost per model, grouped as pi 1.6 groups it (``provider/(responseModel
?? model)`` over answers and ``usage`` entries, tool results, compactions and branch
summaries under ``Tools/summaries``), and shown only where it says more than the total."""

from pi_core.protocol.codec import line_from_json
from pi_plugins.interactive.cost_breakdown import cost_breakdown, cost_lines


def usage(cost: float, tokens: int) -> dict:
    return {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens,
            "cost": {"input": cost, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


def answer(provider: str, model: str, cost: float, tokens: int, **extra) -> dict:
    return {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "assistant", "content": [], "api": "openai-completions", "provider": provider,
                        "model": model, "usage": usage(cost, tokens), "stopReason": "stop", "timestamp": 1,
                        **extra}}


def entries(*lines: dict) -> list:
    return [line_from_json(line) for line in lines]


SESSION = entries(
    answer("openrouter", "auto", 0.010, 1000, responseModel="anthropic/claude-sonnet-4"),
    answer("openrouter", "auto", 0.002, 200, responseModel="openai/gpt-5"),
    answer("local", "test-model", 0.001, 300),
    {"type": "usage", "id": "u", "parentId": "a", "timestamp": "2026-01-01T00:00:00.000Z",
     "provider": "local", "model": "test-model", "usage": usage(0.004, 2000)},
    {"type": "compaction", "id": "c", "parentId": "u", "timestamp": "2026-01-01T00:00:00.000Z",
     "summary": "s", "firstKeptEntryId": "a", "tokensBefore": 10, "usage": usage(0.003, 12_000)},
    answer("local", "free-model", 0, 0),
)


def test_costs_are_grouped_by_the_model_that_answered_and_tools_summaries_apart():
    assert cost_breakdown(SESSION) == [
        ("openrouter/anthropic/claude-sonnet-4", 0.010, 1000), ("local/test-model", 0.005, 2300),
        ("Tools/summaries", 0.003, 12_000), ("openrouter/openai/gpt-5", 0.002, 200)]


def test_the_lines_under_the_total_read_as_pi16s():
    assert cost_lines(SESSION, "local/test-model") == [
        "  openrouter/anthropic/claude-sonnet-4: $0.010 (1.0k tokens)",
        "  local/test-model: $0.005 (2.3k tokens)",
        "  Tools/summaries: $0.003 (12k tokens)",
        "  openrouter/openai/gpt-5: $0.002 (200 tokens)"]


def test_one_key_that_is_the_selected_model_repeats_nothing_but_another_model_is_named():
    one = entries(answer("local", "test-model", 0.001, 300))
    assert cost_lines(one, "local/test-model") == []
    assert cost_lines(one, "local/other") == ["  local/test-model: $0.001 (300 tokens)"]
